// GGUF v2/v3 reader and writer.
//
// The reader treats the file as hostile: every count, length, size and offset
// is overflow-checked and bounded by the file; errors name the key or tensor
// with the expected and the actual value. Tensor data is never copied: each
// TensorInfo points into the mapping (or the caller's buffer for parse()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "base/mapped_file.h"
#include "format/tensor_types.h"
#include "kazeia/status.h"

namespace kazeia::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint32_t kDefaultAlignment = 32;

enum class ValueType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5,
  kFloat32 = 6, kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11,
  kFloat64 = 12,
};
std::string_view value_type_name(ValueType t);

struct Value;

// A homogeneous array; elements of type kArray are arrays themselves.
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// One metadata value. The variant index order matches nothing on disk; use
// type() for the GGUF type.
struct Value {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;
  Storage v;

  Value() = default;
  template <typename T>
  Value(T x) : v(std::move(x)) {}  // NOLINT: implicit for brevity in the writer
  Value(const char* s) : v(std::string(s)) {}

  ValueType type() const;
  bool is_integer() const;  // any of the 8 integer types (not bool)
  // Integer value widened, when it fits; floats, bools, strings refused.
  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;
  std::optional<double> as_float() const;  // float32, float64 or integer
  const std::string* as_string() const;
  const Array* as_array() const;
  // Short human-readable rendering ("[151936 strings]" for long arrays).
  std::string summary(size_t max_items = 8) const;
};

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ne0 first (ne0 is the contiguous dimension)
  TensorType type = TensorType::F32;
  uint64_t offset = 0;      // relative to the start of the data section
  uint64_t n_elements = 0;  // product of dims
  uint64_t n_bytes = 0;     // n_elements / block_size * block_bytes
  const uint8_t* data = nullptr;  // points into the file's bytes

  // Row count when viewed as a matrix [ne0, rest]: product of dims[1..].
  uint64_t n_rows() const;
  uint64_t row_bytes() const;  // bytes of one row of ne0 elements
};

// Limits that keep a hostile header from exhausting memory before its bytes
// are proven to exist. Each bound is far above any real model.
struct ParseLimits {
  uint64_t max_tensors = 1u << 20;
  uint64_t max_kv = 1u << 20;
  uint64_t max_dims = 4;  // GGML_MAX_DIMS
  uint64_t max_array_depth = 8;
};

class File {
 public:
  // Maps the file and parses it; the returned File owns the mapping.
  static Result<File> open(const std::string& path);
  // Parses bytes owned by the caller (they must outlive the File).
  static Result<File> parse(std::span<const uint8_t> bytes, std::string source_name = "<memory>");
  // The same with explicit limits (tests use tight ones).
  static Result<File> parse(std::span<const uint8_t> bytes, std::string source_name,
                            const ParseLimits& limits);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the data section
  uint64_t file_size() const { return bytes_.size(); }
  const std::string& source_name() const { return source_name_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  const std::vector<KeyValue>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  // Drops a key's parsed value (false when absent). A holder of the File
  // that has consumed a large array (the tokenizer's 150k-250k strings take
  // ~20 MB as parsed Values) frees it this way; the bytes stay in the file.
  // Invalidates the Value pointers find() and metadata() handed out before
  // (tensor infos are untouched).
  bool erase(std::string_view key);

  // Typed getters: NotFound when absent, InvalidFile naming the key, the
  // expected type and the actual type (or the value, when it does not fit).
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<uint64_t> get_u64(std::string_view key) const;
  Result<int64_t> get_i64(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const Array*> get_array(std::string_view key) const;
  // The same with a default for absent keys (a present key of the wrong type
  // is still an error).
  Result<uint32_t> get_u32_or(std::string_view key, uint32_t fallback) const;
  Result<float> get_f32_or(std::string_view key, float fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

  // Reads a mapped file in now, on 2 MiB pages where possible
  // (MappedFile::populate). Nothing for a File made by parse().
  MappedFile::PopulateReport populate_mapping(bool recache_small_pages) const {
    return mapping_ ? mapping_->populate(recache_small_pages) : MappedFile::PopulateReport{};
  }

 private:
  std::shared_ptr<MappedFile> mapping_;  // null for parse()
  std::span<const uint8_t> bytes_;
  std::string source_name_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;

  friend class Parser;
};

// Builds a GGUF v3 file. Keys keep their insertion order (setting a key again
// replaces its value in place); tensors are written in insertion order, each
// at an offset aligned to general.alignment (default 32).
class Writer {
 public:
  Writer();
  void set(std::string key, Value value);
  // dims: ne0 first. data.size() must equal the type's byte size for dims.
  Status add_tensor(std::string name, TensorType type, std::vector<uint64_t> dims,
                    std::vector<uint8_t> data);
  // Checks what set() cannot refuse: general.alignment (when present) is a
  // uint32 nonzero power of two, and every array is homogeneous.
  Status validate() const;
  // validate(), then writes to a temporary file beside path and renames it.
  Status write(const std::string& path) const;
  // The whole file in memory, byte-identical to what write() produces. Does
  // not validate, so tests can build invalid files with it.
  std::vector<uint8_t> to_bytes() const;

  const std::vector<KeyValue>& metadata() const { return metadata_; }
  size_t tensor_count() const { return tensors_.size(); }

 private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  uint32_t alignment() const;
  // Streams the file to sink in order; stops at the first error of the sink.
  Status emit(const std::function<Status(std::span<const uint8_t>)>& sink) const;
  std::vector<KeyValue> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace kazeia::gguf
