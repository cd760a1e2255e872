// Byte-identity with the real ggml on edge-case inputs, for every type we
// quantize (the shared model files only cover Q4_0 and Q8_0).
//
// data/ggml_quant_golden.bin was written by make_ggml_golden.py with ggml's own
// reference quantizers (prebuilt libggml from PyPI, see the script): for 17
// input distributions of 512 floats (rounding ties, zero / constant blocks,
// fp16-subnormal scales, outliers, ...) it holds the quantized bytes of each
// type and a hash of ggml's dequantization of them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tensor/quant.h"

namespace kazeia {
namespace {

struct GoldenOutput {
  uint32_t type = 0;
  std::vector<uint8_t> bytes;
  uint64_t dequant_hash = 0;
};

struct GoldenCase {
  std::string name;
  std::vector<float> input;
  std::vector<GoldenOutput> outputs;
};

class Reader {
 public:
  explicit Reader(std::vector<uint8_t> data) : data_(std::move(data)) {}
  bool ok() const { return ok_; }
  template <typename T>
  T get() {
    T v{};
    if (pos_ + sizeof(T) > data_.size()) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  bool bytes(void* out, size_t n) {
    if (pos_ + n > data_.size()) return ok_ = false;
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  std::vector<uint8_t> data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

uint64_t fnv1a64(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001B3ull;
  }
  return h;
}

std::vector<GoldenCase> load_golden() {
  const std::string path =
      std::string(KAZEIA_SOURCE_DIR "/tests/tensor/data/ggml_quant_golden.bin");
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  Reader r(std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {}));
  char magic[4] = {};
  r.bytes(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "KZQG");
  EXPECT_EQ(r.get<uint32_t>(), 1u);
  const uint32_t n_cases = r.get<uint32_t>();
  std::vector<GoldenCase> cases;
  for (uint32_t c = 0; c < n_cases && r.ok(); ++c) {
    GoldenCase gc;
    gc.name.resize(r.get<uint32_t>());
    r.bytes(gc.name.data(), gc.name.size());
    gc.input.resize(r.get<uint32_t>());
    r.bytes(gc.input.data(), gc.input.size() * sizeof(float));
    const uint32_t n_out = r.get<uint32_t>();
    for (uint32_t o = 0; o < n_out && r.ok(); ++o) {
      GoldenOutput out;
      out.type = r.get<uint32_t>();
      out.bytes.resize(r.get<uint32_t>());
      r.bytes(out.bytes.data(), out.bytes.size());
      out.dequant_hash = r.get<uint64_t>();
      gc.outputs.push_back(std::move(out));
    }
    cases.push_back(std::move(gc));
  }
  EXPECT_TRUE(r.ok() && r.at_end()) << "golden file truncated or malformed";
  return cases;
}

std::string hex(const uint8_t* p, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    s += buf;
  }
  return s;
}

TEST(GgmlGolden, QuantizeIsByteIdenticalAndDequantizeBitIdentical) {
  const auto cases = load_golden();
  ASSERT_EQ(cases.size(), 17u);
  int checked = 0;
  for (const GoldenCase& gc : cases) {
    ASSERT_EQ(gc.outputs.size(), 13u);
    for (const GoldenOutput& out : gc.outputs) {
      const auto traits = tensor_type_traits(out.type);
      ASSERT_TRUE(traits.has_value()) << out.type;
      SCOPED_TRACE(gc.name + " / " + std::string(traits->name));
      const int64_t n = static_cast<int64_t>(gc.input.size());
      ASSERT_EQ(type_row_bytes(traits->type, n), out.bytes.size());

      std::vector<uint8_t> ours(out.bytes.size());
      ASSERT_TRUE(quantize_row(traits->type, gc.input.data(), ours.data(), n).ok());
      if (ours != out.bytes) {
        size_t first = 0;
        while (ours[first] == out.bytes[first]) ++first;
        const size_t bb = traits->block_bytes, blk = first / bb;
        ADD_FAILURE() << "quantize: first differing byte " << first << " (block " << blk
                      << ")\n  ours: "
                      << hex(&ours[blk * bb], bb) << "\n  ggml: " << hex(&out.bytes[blk * bb], bb);
        continue;
      }
      std::vector<float> y(gc.input.size());
      ASSERT_TRUE(dequantize_row(traits->type, out.bytes.data(), y.data(), n).ok());
      EXPECT_EQ(fnv1a64(y.data(), y.size() * sizeof(float)), out.dequant_hash)
          << "dequantize differs from ggml's dequantize_row";
      ++checked;
    }
  }
  std::printf("%d (distribution, type) pairs byte-identical with ggml\n", checked);
}

}  // namespace
}  // namespace kazeia
