// Byte-identity of our reference quantizers with llama.cpp's llama-quantize:
// the shared qwen3-tiny-q4_0.gguf / qwen35-tiny-q4_0.gguf are the matching
// *-f32.gguf files quantized by llama-quantize (2-D weights Q4_0,
// token_embd.weight Q8_0, no importance matrix). Quantizing each F32 tensor's
// rows ourselves must reproduce every quantized tensor byte for byte.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "format/gguf.h"
#include "tensor/quant.h"

namespace kazeia {
namespace {

struct PairStats {
  int tensors_checked = 0;
  std::map<std::string, int> per_type;
};

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    s += buf;
  }
  return s;
}

void check_pair(const std::string& f32_name, const std::string& quant_name, PairStats* stats) {
  auto f32 = gguf::File::open(testing::shared_model(f32_name));
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  auto quant = gguf::File::open(testing::shared_model(quant_name));
  ASSERT_TRUE(quant.ok()) << quant.status().to_string();

  for (const gguf::TensorInfo& q : quant->tensors()) {
    if (!tensor_type_traits(q.type).quantized) continue;
    SCOPED_TRACE(quant_name + " tensor '" + q.name + "' (" +
                 std::string(tensor_type_name(q.type)) + ")");
    const gguf::TensorInfo* src = f32->find_tensor(q.name);
    ASSERT_NE(src, nullptr) << "missing in " << f32_name;
    ASSERT_EQ(src->type, TensorType::F32);
    ASSERT_EQ(src->dims, q.dims);
    ASSERT_TRUE(can_quantize(q.type));

    const int64_t ne0 = static_cast<int64_t>(q.dims.at(0));
    const uint64_t rows = q.n_rows();
    const size_t row_bytes = type_row_bytes(q.type, ne0);
    ASSERT_EQ(row_bytes, q.row_bytes());
    ASSERT_EQ(row_bytes * rows, q.n_bytes);

    std::vector<float> row(static_cast<size_t>(ne0));
    std::vector<uint8_t> ours(row_bytes);
    const size_t block_bytes = tensor_type_traits(q.type).block_bytes;
    for (uint64_t r = 0; r < rows; ++r) {
      std::memcpy(row.data(), src->data + r * ne0 * sizeof(float), ne0 * sizeof(float));
      ASSERT_TRUE(quantize_row(q.type, row.data(), ours.data(), ne0).ok());
      const uint8_t* theirs = q.data + r * row_bytes;
      if (std::memcmp(ours.data(), theirs, row_bytes) != 0) {
        size_t first = 0;
        while (ours[first] == theirs[first]) ++first;
        const size_t block = first / block_bytes;
        FAIL() << "row " << r << ": first differing byte " << first << " (block " << block
               << ")\n  ours:   " << hex_bytes(ours.data() + block * block_bytes, block_bytes)
               << "\n  theirs: " << hex_bytes(theirs + block * block_bytes, block_bytes);
      }
    }
    ++stats->tensors_checked;
    ++stats->per_type[std::string(tensor_type_name(q.type))];
  }
}

TEST(GgufIdentity, Qwen3TinyQ4_0MatchesLlamaQuantize) {
  KZ_REQUIRE_SHARED_DATA();
  PairStats stats;
  check_pair("qwen3-tiny-f32.gguf", "qwen3-tiny-q4_0.gguf", &stats);
  // 2 layers x 7 matrices Q4_0 + token_embd Q8_0 (see shared/models/README.md).
  EXPECT_EQ(stats.per_type["Q4_0"], 14);
  EXPECT_EQ(stats.per_type["Q8_0"], 1);
  std::printf("qwen3-tiny: %d quantized tensors byte-identical\n", stats.tensors_checked);
}

TEST(GgufIdentity, Qwen35TinyQ4_0MatchesLlamaQuantize) {
  KZ_REQUIRE_SHARED_DATA();
  PairStats stats;
  check_pair("qwen35-tiny-f32.gguf", "qwen35-tiny-q4_0.gguf", &stats);
  EXPECT_GT(stats.per_type["Q4_0"], 20);
  EXPECT_EQ(stats.per_type["Q8_0"], 1);
  std::printf("qwen35-tiny: %d quantized tensors byte-identical (%d Q4_0, %d Q8_0)\n",
              stats.tensors_checked, stats.per_type["Q4_0"], stats.per_type["Q8_0"]);
}

}  // namespace
}  // namespace kazeia
