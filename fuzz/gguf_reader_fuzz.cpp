// libFuzzer target for the GGUF reader: any byte string must parse or give an
// error, never crash, hang or read outside the input. On success, every
// tensor's data range and every metadata value is touched, so that a wrong
// pointer or size shows up under AddressSanitizer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/gguf.h"

namespace {

// Reads every byte of a tensor's claimed range.
uint8_t touch(const kazeia::gguf::TensorInfo& t) {
  uint8_t x = 0;
  for (uint64_t i = 0; i < t.n_bytes; ++i) x ^= t.data[i];
  return x;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kazeia::gguf;
  auto file = File::parse(std::span<const uint8_t>(data, size), "fuzz");
  if (!file.ok()) {
    // Errors are values; the message must still be buildable and non-empty.
    if (file.status().message().empty()) __builtin_trap();
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const TensorInfo& t : file->tensors()) {
    sink = sink ^ touch(t);
    if (t.n_rows() * t.row_bytes() != t.n_bytes) __builtin_trap();
    if (file->find_tensor(t.name) != &t) __builtin_trap();
  }
  for (const KeyValue& kv : file->metadata()) {
    sink = sink ^ static_cast<uint8_t>(kv.value.summary().size());
    if (file->find(kv.key) != &kv.value) __builtin_trap();
    // The typed getters on every key: each returns a value or an error.
    (void)file->get_u32(kv.key);
    (void)file->get_i64(kv.key);
    (void)file->get_f32(kv.key);
    (void)file->get_string(kv.key);
  }
  (void)sink;
  return 0;
}
