// GGUF v3 writer. The layout mirrors llama.cpp's gguf_write: header, metadata,
// tensor infos, zero padding to the alignment, then each tensor's data
// followed by zero padding to the alignment.
#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "base/checked_math.h"
#include "format/gguf.h"

namespace kazeia::gguf {
namespace {

constexpr uint32_t kVersion = 3;
constexpr size_t kMaxTensorName = 64;  // GGML_MAX_NAME, including the terminating NUL

// Appends little-endian encodings to a byte vector.
class Encoder {
 public:
  explicit Encoder(std::vector<uint8_t>& out) : out_(out) {}

  template <typename T>
  void put(T x) {
    using U = std::conditional_t<sizeof(T) == 1, uint8_t,
              std::conditional_t<sizeof(T) == 2, uint16_t,
              std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
    auto u = std::bit_cast<U>(x);
    for (size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }

  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

  // The value's payload, without its type tag (arrays carry their element
  // type; their items carry none).
  void put_value(const Value& value) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) {
            put_string(x);
          } else if constexpr (std::is_same_v<T, Array>) {
            put<uint32_t>(static_cast<uint32_t>(x.element_type));
            put<uint64_t>(x.items.size());
            for (const Value& item : x.items) put_value(item);
          } else if constexpr (std::is_same_v<T, bool>) {
            put<uint8_t>(x ? 1 : 0);
          } else {
            put<T>(x);
          }
        },
        value.v);
  }

  void pad_to(uint64_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(0);
  }

 private:
  std::vector<uint8_t>& out_;
};

// Writes zero bytes in chunks (an alignment may be large).
Status emit_zeros(const std::function<Status(std::span<const uint8_t>)>& sink, uint64_t n) {
  static constexpr uint8_t kZeros[4096] = {};
  while (n > 0) {
    uint64_t chunk = n < sizeof(kZeros) ? n : sizeof(kZeros);
    KZ_RETURN_IF_ERROR(sink(std::span<const uint8_t>(kZeros, chunk)));
    n -= chunk;
  }
  return OkStatus();
}

// Every item of every array has the array's element type.
Status check_homogeneous(const std::string& key, const Value& value) {
  const Array* a = value.as_array();
  if (a == nullptr) return OkStatus();
  for (size_t i = 0; i < a->items.size(); ++i) {
    const Value& item = a->items[i];
    if (item.type() != a->element_type)
      return InvalidArgument("key '" + key + "': array item " + std::to_string(i) + " is " +
                             std::string(value_type_name(item.type())) + ", the array holds " +
                             std::string(value_type_name(a->element_type)));
    KZ_RETURN_IF_ERROR(check_homogeneous(key, item));
  }
  return OkStatus();
}

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { int fd = fd_; fd_ = -1; return fd; }

 private:
  int fd_;
};

Status write_all(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot write '" + path + "': " + std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return OkStatus();
}

}  // namespace

Writer::Writer() = default;

void Writer::set(std::string key, Value value) {
  for (KeyValue& kv : metadata_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  metadata_.push_back({std::move(key), std::move(value)});
}

Status Writer::add_tensor(std::string name, TensorType type, std::vector<uint64_t> dims,
                          std::vector<uint8_t> data) {
  const std::string what = "tensor '" + name + "'";
  // llama.cpp refuses to load names of GGML_MAX_NAME (64) bytes or more.
  if (name.size() >= kMaxTensorName)
    return InvalidArgument(what + ": name of " + std::to_string(name.size()) + " bytes, llama.cpp allows at most " +
                           std::to_string(kMaxTensorName - 1));
  for (const PendingTensor& t : tensors_)
    if (t.name == name) return InvalidArgument("duplicate tensor name '" + name + "'");
  if (dims.empty() || dims.size() > ParseLimits{}.max_dims)
    return InvalidArgument(what + ": " + std::to_string(dims.size()) + " dimensions, expected 1..4");
  const TensorTypeTraits& traits = tensor_type_traits(type);
  if (dims[0] % traits.block_size != 0)
    return InvalidArgument(what + ": ne0 = " + std::to_string(dims[0]) + " is not a multiple of the block size " +
                           std::to_string(traits.block_size) + " of " + std::string(traits.name));
  uint64_t n = 1;
  for (uint64_t d : dims) {
    auto p = checked_mul(n, d);
    if (!p) return InvalidArgument(what + ": element count overflows 64 bits");
    n = *p;
  }
  auto expected = checked_mul(n / traits.block_size, traits.block_bytes);
  if (!expected || *expected != data.size())
    return InvalidArgument(what + ": " + std::to_string(data.size()) + " bytes of data, expected " +
                           (expected ? std::to_string(*expected) : "more than 2^64") + " for " +
                           std::string(traits.name) + " with " + std::to_string(n) + " elements");
  tensors_.push_back({std::move(name), type, std::move(dims), std::move(data)});
  return OkStatus();
}

uint32_t Writer::alignment() const {
  for (const KeyValue& kv : metadata_) {
    if (kv.key != "general.alignment") continue;
    const auto* a = std::get_if<uint32_t>(&kv.value.v);
    if (a != nullptr && std::has_single_bit(*a)) return *a;
  }
  return kDefaultAlignment;
}

Status Writer::validate() const {
  for (const KeyValue& kv : metadata_) {
    if (kv.key == "general.alignment") {
      const auto* a = std::get_if<uint32_t>(&kv.value.v);
      if (a == nullptr)
        return InvalidArgument("key 'general.alignment': expected uint32, found " +
                               std::string(value_type_name(kv.value.type())));
      if (!std::has_single_bit(*a))
        return InvalidArgument("key 'general.alignment': value " + std::to_string(*a) +
                               " is not a nonzero power of two");
    }
    KZ_RETURN_IF_ERROR(check_homogeneous(kv.key, kv.value));
  }
  return OkStatus();
}

Status Writer::emit(const std::function<Status(std::span<const uint8_t>)>& sink) const {
  const uint64_t align = alignment();
  std::vector<uint8_t> header;
  Encoder enc(header);
  enc.put<uint32_t>(kMagic);
  enc.put<uint32_t>(kVersion);
  enc.put<uint64_t>(tensors_.size());
  enc.put<uint64_t>(metadata_.size());
  for (const KeyValue& kv : metadata_) {
    enc.put_string(kv.key);
    enc.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    enc.put_value(kv.value);
  }
  uint64_t offset = 0;  // of the next tensor in the data section
  for (const PendingTensor& t : tensors_) {
    enc.put_string(t.name);
    enc.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) enc.put<uint64_t>(d);
    enc.put<uint32_t>(static_cast<uint32_t>(t.type));
    enc.put<uint64_t>(offset);
    offset = *checked_align_up(offset + t.data.size(), align);  // in-memory sizes: no overflow
  }
  enc.pad_to(align);
  KZ_RETURN_IF_ERROR(sink(header));
  for (const PendingTensor& t : tensors_) {
    KZ_RETURN_IF_ERROR(sink(t.data));
    KZ_RETURN_IF_ERROR(emit_zeros(sink, *checked_align_up(t.data.size(), align) - t.data.size()));
  }
  return OkStatus();
}

std::vector<uint8_t> Writer::to_bytes() const {
  std::vector<uint8_t> out;
  Status s = emit([&out](std::span<const uint8_t> b) {
    out.insert(out.end(), b.begin(), b.end());
    return OkStatus();
  });
  (void)s;  // this sink never fails
  return out;
}

Status Writer::write(const std::string& path) const {
  KZ_RETURN_IF_ERROR(validate());
  // A temporary beside the target, so the rename stays on one file system
  // and readers never see a half-written file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return IoError("cannot create '" + tmp + "': " + std::strerror(errno));
  Status s = emit([&](std::span<const uint8_t> b) { return write_all(fd.get(), b, tmp); });
  if (s.ok() && ::fsync(fd.get()) != 0) s = IoError("cannot sync '" + tmp + "': " + std::strerror(errno));
  if (::close(fd.release()) != 0 && s.ok()) s = IoError("cannot close '" + tmp + "': " + std::strerror(errno));
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = IoError("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

}  // namespace kazeia::gguf
