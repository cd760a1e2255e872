// Writes the seed corpus of gguf_reader_fuzz: a few small valid GGUF files
// made with gguf::Writer. The committed fuzz/corpus/gguf/ was made by
//   ./build-asan/fuzz/make_gguf_seeds fuzz/corpus/gguf
// Run it again after a format change; keep the corpus small (< 50 KB).
#include <cstdio>
#include <string>

#include "format/gguf.h"

namespace {

using namespace kazeia;
using namespace kazeia::gguf;

std::vector<uint8_t> bytes_of(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 13 + seed);
  return v;
}

// One key of every type, nested and empty arrays, no tensors.
Writer all_value_types() {
  Writer w;
  w.set("general.architecture", Value("seed"));
  w.set("u8", Value(uint8_t{1}));
  w.set("i8", Value(int8_t{-1}));
  w.set("u16", Value(uint16_t{2}));
  w.set("i16", Value(int16_t{-2}));
  w.set("u32", Value(uint32_t{3}));
  w.set("i32", Value(int32_t{-3}));
  w.set("f32", Value(0.5f));
  w.set("bool", Value(true));
  w.set("str", Value("h\xC3\xA9"));
  w.set("u64", Value(uint64_t{4}));
  w.set("i64", Value(int64_t{-4}));
  w.set("f64", Value(0.25));
  w.set("tokens", Value(Array{ValueType::kString, {Value("a"), Value("b c"), Value("")}}));
  w.set("flags", Value(Array{ValueType::kBool, {Value(true), Value(false)}}));
  w.set("empty", Value(Array{ValueType::kInt32, {}}));
  w.set("nested", Value(Array{ValueType::kArray, {Value(Array{ValueType::kInt16, {Value(int16_t{7})}})}}));
  return w;
}

// A tiny model-like file: tensors of several types.
Writer tiny_model(uint32_t alignment) {
  Writer w;
  w.set("general.architecture", Value("llama"));
  if (alignment != kDefaultAlignment) w.set("general.alignment", Value(alignment));
  w.set("llama.block_count", Value(uint32_t{1}));
  w.set("llama.rope.dimension_sections", Value(Array{ValueType::kInt32, {Value(int32_t{2}), Value(int32_t{1})}}));
  struct T {
    const char* name;
    TensorType type;
    std::vector<uint64_t> dims;
    size_t bytes;
  };
  const T tensors[] = {
      {"token_embd.weight", TensorType::F32, {4, 3}, 48},
      {"blk.0.attn_q.weight", TensorType::Q4_0, {32, 2}, 36},
      {"blk.0.attn_k.weight", TensorType::Q8_0, {32, 1}, 34},
      {"blk.0.ffn_down.weight", TensorType::Q4_K, {256}, 144},
      {"blk.0.ffn_up.weight", TensorType::Q6_K, {256}, 210},
      {"output_norm.weight", TensorType::F16, {4}, 8},
  };
  uint8_t seed = 0;
  for (const T& t : tensors) (void)w.add_tensor(t.name, t.type, t.dims, bytes_of(t.bytes, seed++));
  return w;
}

bool write(const Writer& w, const std::string& path) {
  Status s = w.write(path);
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.to_string().c_str());
  return s.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  bool ok = write(all_value_types(), dir + "/all_value_types.gguf") &&
            write(tiny_model(32), dir + "/tiny_model.gguf") &&
            write(tiny_model(64), dir + "/tiny_model_align64.gguf") && write(Writer(), dir + "/empty.gguf");
  return ok ? 0 : 1;
}
