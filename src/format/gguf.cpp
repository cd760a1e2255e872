// GGUF v2/v3 reader.
//
// Layout (all little-endian):
//   magic u32 | version u32 | tensor_count u64 | kv_count u64
//   kv_count x (key string, type u32, value)
//   tensor_count x (name string, n_dims u32, dims u64[n_dims], type u32, offset u64)
//   padding to general.alignment (default 32), then the data section.
// A string is a u64 byte length then the bytes; an array is the element type
// u32, a u64 count, then the elements without their type tags.
//
// The bytes are hostile: every read is bounds-checked against the remaining
// bytes, every count is checked against what the remaining bytes can hold
// before anything is allocated for it, and all size arithmetic is
// overflow-checked.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "base/checked_math.h"
#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

// Smallest encoding of one value of type t, for bounding counts.
uint64_t min_encoded_size(ValueType t) {
  switch (t) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kBool: return 1;
    case ValueType::kUint16: case ValueType::kInt16: return 2;
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kFloat32: return 4;
    case ValueType::kUint64: case ValueType::kInt64: case ValueType::kFloat64: return 8;
    case ValueType::kString: return 8;      // the length
    case ValueType::kArray: return 4 + 8;   // element type + count
  }
  return 1;
}

// Minimal sizes of a metadata entry (empty key, a one-byte value) and of a
// tensor info (empty name, one dimension).
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
constexpr uint32_t kMaxValueType = static_cast<uint32_t>(ValueType::kFloat64);
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

template <size_t N> struct UintOfSize;
template <> struct UintOfSize<1> { using type = uint8_t; };
template <> struct UintOfSize<2> { using type = uint16_t; };
template <> struct UintOfSize<4> { using type = uint32_t; };
template <> struct UintOfSize<8> { using type = uint64_t; };

// Decodes a little-endian scalar whatever the host byte order.
template <typename T>
T load_le(const uint8_t* p) {
  using U = typename UintOfSize<sizeof(T)>::type;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<U>(u | static_cast<U>(static_cast<U>(p[i]) << (8 * i)));
  return std::bit_cast<T>(u);
}

// A name from the file, quoted and cut short for error messages: a hostile
// key may be megabytes long or hold control characters.
std::string quoted(std::string_view name) {
  constexpr size_t kMaxBytes = 128;
  const bool cut = name.size() > kMaxBytes;
  size_t n = cut ? kMaxBytes : name.size();
  while (cut && n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;  // keep UTF-8 whole
  std::string out = "'";
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7F || c == '\\' || c == '\'') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += cut ? "'..." : "'";
  return out;
}

std::string str(uint64_t x) { return std::to_string(x); }

}  // namespace

// Parses one GGUF image into a File. Friend of File: fills its members.
class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, std::string source, const ParseLimits& limits)
      : bytes_(bytes), limits_(limits) {
    file_.bytes_ = bytes;
    file_.source_name_ = std::move(source);
  }

  Result<File> run() {
    KZ_RETURN_IF_ERROR(read_header());
    KZ_RETURN_IF_ERROR(read_metadata());
    KZ_RETURN_IF_ERROR(read_alignment());
    KZ_RETURN_IF_ERROR(read_tensor_infos());
    KZ_RETURN_IF_ERROR(locate_data_section());
    KZ_RETURN_IF_ERROR(locate_tensors());
    KZ_RETURN_IF_ERROR(check_overlaps());
    return std::move(file_);
  }

 private:
  // ---- errors -------------------------------------------------------------

  Status invalid(const std::string& msg) const { return InvalidFile(file_.source_name_ + ": " + msg); }

  // What is being read, for messages: "metadata key 'x' (array item 3 of 9)".
  std::string where() const {
    std::string s = what_;
    for (size_t i = 0; i < array_path_.size(); ++i) {
      s += i == 0 ? " (array item " : ", item ";
      s += str(array_path_[i].first) + " of " + str(array_path_[i].second);
    }
    if (!array_path_.empty()) s += ")";
    return s;
  }

  // ---- primitives ---------------------------------------------------------

  uint64_t remaining() const { return bytes_.size() - pos_; }

  Status need(uint64_t n) const {
    if (n <= remaining()) return OkStatus();
    return invalid("truncated while reading " + where() + ": need " + str(n) + " bytes at offset " +
                   str(pos_) + ", file has " + str(bytes_.size()));
  }

  template <typename T>
  Status read(T& out) {
    KZ_RETURN_IF_ERROR(need(sizeof(T)));
    out = load_le<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return OkStatus();
  }

  Status read_string(std::string& out) {
    uint64_t len = 0;
    KZ_RETURN_IF_ERROR(read(len));
    KZ_RETURN_IF_ERROR(need(len));
    out.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(len));
    pos_ += len;
    return OkStatus();
  }

  Status read_value_type(ValueType& out) {
    uint32_t raw = 0;
    KZ_RETURN_IF_ERROR(read(raw));
    if (raw > kMaxValueType)
      return invalid(where() + ": unknown value type " + str(raw) + " (valid: 0.." + str(kMaxValueType) + ")");
    out = static_cast<ValueType>(raw);
    return OkStatus();
  }

  // A count of items of at least min_bytes each must fit in what remains.
  Status check_count(uint64_t count, uint64_t min_bytes, const std::string& what) const {
    auto total = checked_mul(count, min_bytes);
    if (total && *total <= remaining()) return OkStatus();
    return invalid(where() + ": " + what + " count " + str(count) + " needs at least " +
                   (total ? str(*total) : "2^64 or more") + " bytes at offset " + str(pos_) +
                   ", file has " + str(bytes_.size()));
  }

  // ---- header and metadata ------------------------------------------------

  Status read_header() {
    uint32_t magic = 0, version = 0;
    what_ = "header (magic)";
    KZ_RETURN_IF_ERROR(read(magic));
    if (magic != kMagic) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "0x%08x", magic);
      return invalid("not a GGUF file: magic is " + std::string(buf) + ", expected 0x46554747 (\"GGUF\")");
    }
    what_ = "header (version)";
    KZ_RETURN_IF_ERROR(read(version));
    KZ_RETURN_IF_ERROR(check_version(version));
    file_.version_ = version;
    what_ = "header (tensor count)";
    KZ_RETURN_IF_ERROR(read(n_tensors_));
    what_ = "header (metadata key count)";
    KZ_RETURN_IF_ERROR(read(n_kv_));
    what_ = "header";
    if (n_tensors_ > limits_.max_tensors)
      return invalid("header: tensor count " + str(n_tensors_) + " exceeds the limit of " + str(limits_.max_tensors));
    if (n_kv_ > limits_.max_kv)
      return invalid("header: metadata key count " + str(n_kv_) + " exceeds the limit of " + str(limits_.max_kv));
    KZ_RETURN_IF_ERROR(check_count(n_kv_, kMinKvBytes, "metadata key"));
    KZ_RETURN_IF_ERROR(check_count(n_tensors_, kMinTensorInfoBytes, "tensor"));
    return OkStatus();
  }

  Status check_version(uint32_t version) const {
    if (version == 2 || version == 3) return OkStatus();
    // A big-endian file reads as 0x02000000 or 0x03000000 here.
    if (version == 0x02000000u || version == 0x03000000u)
      return Unsupported(file_.source_name_ + ": big-endian GGUF files are not supported");
    return Unsupported(file_.source_name_ + ": GGUF version " + str(version) +
                       " is not supported (supported: 2 and 3)");
  }

  Status read_metadata() {
    file_.metadata_.reserve(n_kv_);  // bounded by the file size in read_header
    for (uint64_t i = 0; i < n_kv_; ++i) {
      KeyValue kv;
      what_ = "metadata key #" + str(i) + " of " + str(n_kv_);
      KZ_RETURN_IF_ERROR(read_string(kv.key));
      what_ = "metadata key " + quoted(kv.key);
      ValueType type;
      KZ_RETURN_IF_ERROR(read_value_type(type));
      KZ_RETURN_IF_ERROR(read_value(type, 0, kv.value));
      if (!file_.metadata_index_.emplace(kv.key, file_.metadata_.size()).second)
        return invalid("duplicate metadata key " + quoted(kv.key));
      file_.metadata_.push_back(std::move(kv));
    }
    return OkStatus();
  }

  template <typename T>
  Status read_scalar(Value& out) {
    T x{};
    KZ_RETURN_IF_ERROR(read(x));
    out.v = x;
    return OkStatus();
  }

  // depth: how many arrays enclose this value.
  Status read_value(ValueType type, uint64_t depth, Value& out) {
    switch (type) {
      case ValueType::kUint8: return read_scalar<uint8_t>(out);
      case ValueType::kInt8: return read_scalar<int8_t>(out);
      case ValueType::kUint16: return read_scalar<uint16_t>(out);
      case ValueType::kInt16: return read_scalar<int16_t>(out);
      case ValueType::kUint32: return read_scalar<uint32_t>(out);
      case ValueType::kInt32: return read_scalar<int32_t>(out);
      case ValueType::kFloat32: return read_scalar<float>(out);
      case ValueType::kUint64: return read_scalar<uint64_t>(out);
      case ValueType::kInt64: return read_scalar<int64_t>(out);
      case ValueType::kFloat64: return read_scalar<double>(out);
      case ValueType::kBool: return read_bool(out);
      case ValueType::kString: return read_string(out.v.emplace<std::string>());
      case ValueType::kArray: return read_array(depth + 1, out);
    }
    return invalid(where() + ": unknown value type");  // read_value_type rules this out
  }

  Status read_bool(Value& out) {
    uint8_t b = 0;
    KZ_RETURN_IF_ERROR(read(b));
    // Any other byte would make the file's meaning depend on the reader.
    if (b > 1) return invalid(where() + ": bool byte " + str(b) + " at offset " + str(pos_ - 1) + " is not 0 or 1");
    out.v = b == 1;
    return OkStatus();
  }

  // level: 1 for an array that is a key's value, 2 for an array inside it...
  Status read_array(uint64_t level, Value& out) {
    if (level > limits_.max_array_depth)
      return invalid(where() + ": arrays nested more than " + str(limits_.max_array_depth) + " levels deep");
    Array array;
    uint64_t count = 0;
    KZ_RETURN_IF_ERROR(read_value_type(array.element_type));
    KZ_RETURN_IF_ERROR(read(count));
    KZ_RETURN_IF_ERROR(check_count(count, min_encoded_size(array.element_type),
                                   "array (of " + std::string(value_type_name(array.element_type)) + ")"));
    array.items.reserve(count);  // safe: count * min size <= remaining bytes
    array_path_.emplace_back(0, count);
    // Items are read in place, no temporary Value and move per item (a
    // vocabulary is 150k-250k strings).
    for (uint64_t i = 0; i < count; ++i) {
      array_path_.back().first = i;
      KZ_RETURN_IF_ERROR(read_value(array.element_type, level, array.items.emplace_back()));
    }
    array_path_.pop_back();
    out.v = std::move(array);
    return OkStatus();
  }

  Status read_alignment() {
    const Value* v = file_.find("general.alignment");
    if (v == nullptr) return OkStatus();
    if (v->type() != ValueType::kUint32)
      return invalid("key 'general.alignment': expected uint32, found " + std::string(value_type_name(v->type())));
    uint32_t a = std::get<uint32_t>(v->v);
    if (!std::has_single_bit(a))
      return invalid("key 'general.alignment': value " + str(a) + " is not a nonzero power of two");
    file_.alignment_ = a;
    return OkStatus();
  }

  // ---- tensor infos -------------------------------------------------------

  Status read_tensor_infos() {
    file_.tensors_.reserve(n_tensors_);  // bounded by the file size in read_header
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      TensorInfo t;
      what_ = "tensor info #" + str(i) + " of " + str(n_tensors_);
      KZ_RETURN_IF_ERROR(read_string(t.name));
      what_ = "tensor " + quoted(t.name);
      KZ_RETURN_IF_ERROR(read_tensor_shape(t));
      if (!file_.tensor_index_.emplace(t.name, file_.tensors_.size()).second)
        return invalid("duplicate tensor name " + quoted(t.name));
      file_.tensors_.push_back(std::move(t));
    }
    return OkStatus();
  }

  Status read_tensor_shape(TensorInfo& t) {
    uint32_t n_dims = 0;
    KZ_RETURN_IF_ERROR(read(n_dims));
    if (n_dims == 0 || n_dims > limits_.max_dims)
      return invalid(what_ + ": n_dims " + str(n_dims) + " is out of range (1.." + str(limits_.max_dims) + ")");
    t.dims.resize(n_dims);
    for (uint64_t& d : t.dims) KZ_RETURN_IF_ERROR(read(d));
    uint32_t type_id = 0;
    KZ_RETURN_IF_ERROR(read(type_id));
    KZ_RETURN_IF_ERROR(read(t.offset));
    auto traits = tensor_type_traits(type_id);
    if (!traits) return invalid(what_ + ": unknown tensor type id " + str(type_id));
    t.type = traits->type;
    return compute_sizes(t, *traits);
  }

  std::string dims_string(const TensorInfo& t) const {
    std::string s = "[";
    for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? ", " : "") + str(t.dims[i]);
    return s + "]";
  }

  Status compute_sizes(TensorInfo& t, const TensorTypeTraits& traits) const {
    // ggml holds dims and element counts in int64_t. A zero dimension (an
    // empty tensor, which ggml allows) must not hide an overflow of the
    // others: n_rows() multiplies them without checks.
    uint64_t nonzero = 1;
    for (uint64_t d : t.dims) {
      auto p = checked_mul(nonzero, d == 0 ? 1 : d);
      if (!p || *p > kInt64Max)
        return invalid(what_ + ": element count of dims " + dims_string(t) + " overflows int64");
      nonzero = *p;
    }
    const bool empty = std::find(t.dims.begin(), t.dims.end(), 0) != t.dims.end();
    const uint64_t n = empty ? 0 : nonzero;
    if (t.dims[0] % traits.block_size != 0)
      return invalid(what_ + ": ne0 = " + str(t.dims[0]) + " is not a multiple of the block size " +
                     str(traits.block_size) + " of " + std::string(traits.name));
    auto bytes = checked_mul(n / traits.block_size, traits.block_bytes);
    if (!bytes) return invalid(what_ + ": byte size of dims " + dims_string(t) + " overflows 64 bits");
    t.n_elements = n;
    t.n_bytes = *bytes;
    return OkStatus();
  }

  // ---- data section -------------------------------------------------------

  Status locate_data_section() {
    auto start = checked_align_up(pos_, file_.alignment_);
    if (!start) return invalid("data section offset overflows");
    file_.data_offset_ = *start;
    if (*start <= bytes_.size() || file_.tensors_.empty()) return OkStatus();
    return invalid("truncated: the data section starts at offset " + str(*start) + " (header end " + str(pos_) +
                   " aligned to " + str(file_.alignment_) + "), file has " + str(bytes_.size()));
  }

  Status locate_tensors() {
    const uint64_t data_size = file_.data_offset_ <= bytes_.size() ? bytes_.size() - file_.data_offset_ : 0;
    for (TensorInfo& t : file_.tensors_) {
      if (t.offset % file_.alignment_ != 0)
        return invalid("tensor " + quoted(t.name) + ": offset " + str(t.offset) +
                       " is not a multiple of the alignment " + str(file_.alignment_));
      auto end = checked_add(t.offset, t.n_bytes);
      if (!end || *end > data_size)
        return invalid("tensor " + quoted(t.name) + ": data [offset " + str(t.offset) + ", size " + str(t.n_bytes) +
                       ") exceeds the data section of " + str(data_size) + " bytes");
      t.data = bytes_.data() + file_.data_offset_ + t.offset;
    }
    return OkStatus();
  }

  // Tensors must not share bytes (empty tensors own none).
  Status check_overlaps() const {
    std::vector<const TensorInfo*> sorted;
    for (const TensorInfo& t : file_.tensors_)
      if (t.n_bytes > 0) sorted.push_back(&t);
    std::sort(sorted.begin(), sorted.end(),
              [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < sorted.size(); ++i) {
      const TensorInfo& a = *sorted[i - 1];
      const TensorInfo& b = *sorted[i];
      if (a.offset + a.n_bytes > b.offset)  // no overflow: checked in locate_tensors
        return invalid("tensors " + quoted(a.name) + " [" + str(a.offset) + ", " + str(a.offset + a.n_bytes) +
                       ") and " + quoted(b.name) + " [" + str(b.offset) + ", " + str(b.offset + b.n_bytes) +
                       ") overlap");
    }
    return OkStatus();
  }

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  ParseLimits limits_;
  File file_;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
  std::string what_;
  std::vector<std::pair<uint64_t, uint64_t>> array_path_;  // (item, count) per open array
};

// ---- File -------------------------------------------------------------------

Result<File> File::open(const std::string& path) {
  KZ_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::open(path));
  auto mapping = std::make_shared<MappedFile>(std::move(mapped));
  KZ_ASSIGN_OR_RETURN(File file, parse(std::span<const uint8_t>(mapping->data(), mapping->size()), path));
  file.mapping_ = std::move(mapping);  // the spans point into it; it moves with the File
  return file;
}

Result<File> File::parse(std::span<const uint8_t> bytes, std::string source_name) {
  return parse(bytes, std::move(source_name), ParseLimits{});
}

Result<File> File::parse(std::span<const uint8_t> bytes, std::string source_name, const ParseLimits& limits) {
  return Parser(bytes, std::move(source_name), limits).run();
}

const Value* File::find(std::string_view key) const {
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

bool File::erase(std::string_view key) {
  auto it = metadata_index_.find(std::string(key));
  if (it == metadata_index_.end()) return false;
  const size_t removed = it->second;
  metadata_.erase(metadata_.begin() + static_cast<std::ptrdiff_t>(removed));
  metadata_index_.erase(it);
  for (auto& [name, index] : metadata_index_)
    if (index > removed) --index;
  return true;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

// ---- typed getters ----------------------------------------------------------

namespace {

Status key_not_found(const File& f, std::string_view key) {
  return NotFound(f.source_name() + ": key " + quoted(key) + " not found");
}

Status wrong_type(const File& f, std::string_view key, std::string_view expected, const Value& v) {
  return InvalidFile(f.source_name() + ": key " + quoted(key) + ": expected " + std::string(expected) + ", found " +
                     std::string(value_type_name(v.type())));
}

Status does_not_fit(const File& f, std::string_view key, std::string_view expected, const Value& v) {
  return InvalidFile(f.source_name() + ": key " + quoted(key) + ": value " + v.summary() + " (" +
                     std::string(value_type_name(v.type())) + ") does not fit in " + std::string(expected));
}

// Any integer type is accepted when its value fits in T.
template <typename T>
Result<T> get_integer(const File& f, std::string_view key, std::string_view expected) {
  const Value* v = f.find(key);
  if (v == nullptr) return key_not_found(f, key);
  if (!v->is_integer()) return wrong_type(f, key, expected, *v);
  if constexpr (std::is_signed_v<T>) {
    auto x = v->as_int();
    if (!x || *x < std::numeric_limits<T>::min() || *x > std::numeric_limits<T>::max())
      return does_not_fit(f, key, expected, *v);
    return static_cast<T>(*x);
  } else {
    auto x = v->as_uint();
    if (!x || *x > std::numeric_limits<T>::max()) return does_not_fit(f, key, expected, *v);
    return static_cast<T>(*x);
  }
}

}  // namespace

Result<uint32_t> File::get_u32(std::string_view key) const { return get_integer<uint32_t>(*this, key, "uint32"); }
Result<uint64_t> File::get_u64(std::string_view key) const { return get_integer<uint64_t>(*this, key, "uint64"); }
Result<int64_t> File::get_i64(std::string_view key) const { return get_integer<int64_t>(*this, key, "int64"); }

Result<float> File::get_f32(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return key_not_found(*this, key);
  if (const float* f = std::get_if<float>(&v->v)) return *f;
  if (const double* d = std::get_if<double>(&v->v)) {
    if (std::isfinite(*d) && std::fabs(*d) > std::numeric_limits<float>::max())
      return does_not_fit(*this, key, "float32", *v);
    return static_cast<float>(*d);
  }
  return wrong_type(*this, key, "float32", *v);
}

Result<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return key_not_found(*this, key);
  if (const bool* b = std::get_if<bool>(&v->v)) return *b;
  return wrong_type(*this, key, "bool", *v);
}

Result<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return key_not_found(*this, key);
  if (const std::string* s = v->as_string()) return *s;
  return wrong_type(*this, key, "string", *v);
}

Result<const Array*> File::get_array(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return key_not_found(*this, key);
  if (const Array* a = v->as_array()) return a;
  return wrong_type(*this, key, "array", *v);
}

Result<uint32_t> File::get_u32_or(std::string_view key, uint32_t fallback) const {
  return find(key) == nullptr ? Result<uint32_t>(fallback) : get_u32(key);
}

Result<float> File::get_f32_or(std::string_view key, float fallback) const {
  return find(key) == nullptr ? Result<float>(fallback) : get_f32(key);
}

Result<bool> File::get_bool_or(std::string_view key, bool fallback) const {
  return find(key) == nullptr ? Result<bool>(fallback) : get_bool(key);
}

}  // namespace kazeia::gguf
