// Byte-by-byte GGUF builder for the format tests: writes exactly what it is
// told (wrong counts, bad types, truncations), unlike gguf::Writer, which only
// makes valid files.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"

namespace kazeia::testing {

class GgufBytes {
 public:
  template <typename T>
  GgufBytes& put(T x) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));  // the tests run on little-endian hosts
    bytes_.insert(bytes_.end(), b, b + sizeof(T));
    return *this;
  }
  GgufBytes& u8(uint8_t x) { return put(x); }
  GgufBytes& u32(uint32_t x) { return put(x); }
  GgufBytes& u64(uint64_t x) { return put(x); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, 0);
    return *this;
  }
  GgufBytes& pad_to(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }

  // magic, version, tensor count, kv count
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(gguf::kMagic).u32(version).u64(n_tensors).u64(n_kv);
  }
  // key, type, then the caller writes the value
  GgufBytes& key(std::string_view k, gguf::ValueType t) { return str(k).u32(static_cast<uint32_t>(t)); }
  GgufBytes& kv_u32(std::string_view k, uint32_t v) { return key(k, gguf::ValueType::kUint32).u32(v); }
  GgufBytes& kv_str(std::string_view k, std::string_view v) { return key(k, gguf::ValueType::kString).str(v); }
  GgufBytes& tensor_info(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type,
                         uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace kazeia::testing
