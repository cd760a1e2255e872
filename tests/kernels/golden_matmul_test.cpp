// matmul on real model tensors from ../shared (skipped when absent).
//
// 1. Q6_K: the tied embedding / output matrix of qwen3-kq-q4_k_m (as written
//    by llama-quantize) times random activations, against a double product
//    whose activations are rounded to Q8_K here, independently, by the rule
//    the golden README states.
// 2. F32 against llama.cpp itself: the golden files of qwen35-mtp-f32 give
//    the hidden states that meet the tied output matrix (h_trunk, mtp_out)
//    and the logits llama.cpp computed from them, so token_embd x h must
//    reproduce those logits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "common/test_data.h"
#include "format/gguf.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using testing::round_half_even;

MatrixView tensor_view(const gguf::File& file, const std::string& name) {
  const gguf::TensorInfo* t = file.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  EXPECT_EQ(t->dims.size(), 2u) << name;
  auto v = make_matrix_view(t->type, t->data, static_cast<int64_t>(t->dims[0]),
                            static_cast<int64_t>(t->dims[1]), t->n_bytes);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return v.value_or(MatrixView{});
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  in.seekg(0);
  std::vector<float> v(size / sizeof(float));
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

// The README's Q8_K rule, in double where it can be: per 256 values,
// d = max|x| / 127, q = round-half-even(x * 127 / max|x|) (the multiplier
// in float, as the reference computes it), value = q * d.
std::vector<double> readme_q8_k(const float* x, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n / 256; ++b) {
    float amax = 0;
    for (int j = 0; j < 256; ++j) amax = std::fmax(amax, std::fabs(x[b * 256 + j]));
    const double d = amax / 127.0;
    const float mult = amax != 0 ? 127.f / amax : 0.f;
    for (int j = 0; j < 256; ++j) {
      out[static_cast<size_t>(b * 256 + j)] = round_half_even(x[b * 256 + j] * mult) * d;
    }
  }
  return out;
}

TEST(GoldenMatmul, Q6_KTokenEmbeddingAgainstIndependentQ8_KProduct) {
  KZ_REQUIRE_SHARED_DATA();
  auto file = gguf::File::open(kazeia::testing::shared_model("qwen3-kq-q4_k_m.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const MatrixView w = tensor_view(*file, "token_embd.weight");
  ASSERT_EQ(w.type, TensorType::Q6_K);
  ASSERT_EQ(w.n_in, 256);
  ASSERT_EQ(w.n_out, 4096);

  // Dequantized weights (tensor layer), in double.
  std::vector<double> wd(static_cast<size_t>(w.n_in * w.n_out));
  std::vector<float> row(static_cast<size_t>(w.n_in));
  for (int64_t r = 0; r < w.n_out; ++r) {
    ASSERT_TRUE(dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_in).ok());
    for (int64_t c = 0; c < w.n_in; ++c) wd[static_cast<size_t>(r * w.n_in + c)] = row[c];
  }

  const int64_t n_tokens = 3;
  auto x = testing::random_activations(static_cast<size_t>(w.n_in * n_tokens), 2024);
  // Scale like a normed hidden state with a few outliers.
  for (auto& v : x) v *= 0.7f;
  std::vector<float> y(static_cast<size_t>(w.n_out * n_tokens));
  ThreadPool pool(4);
  ASSERT_TRUE(matmul(w, x.data(), n_tokens, y.data(), &pool).ok());

  double worst = 0;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x.data() + t * w.n_in;
    const std::vector<double> xq = readme_q8_k(xt, w.n_in);
    // Our activation quants are exactly the README's.
    std::vector<uint8_t> act(activation_row_bytes(TensorType::Q8_K, w.n_in));
    ASSERT_TRUE(quantize_activations(TensorType::Q8_K, xt, w.n_in, act.data()).ok());
    BlockQ8_K blk;
    std::memcpy(&blk, act.data(), sizeof(blk));
    for (int j = 0; j < 256; ++j) {
      EXPECT_NEAR(blk.qs[j] * static_cast<double>(blk.d), xq[j], 1e-6 * std::fabs(xq[j]) + 1e-12) << j;
    }
    for (int64_t r = 0; r < w.n_out; ++r) {
      const auto ref = testing::dot_ref(wd.data() + r * w.n_in, xq.data(), w.n_in);
      const double got = y[static_cast<size_t>(t * w.n_out + r)];
      ASSERT_LE(std::fabs(got - ref.value), 1e-5 * ref.magnitude) << "token " << t << " row " << r;
      worst = std::fmax(worst, std::fabs(got - ref.value) / ref.magnitude);
    }
  }
  RecordProperty("worst_rel_err", std::to_string(worst));
  std::printf("Q6_K token_embd: worst |ours - double| / sum|w x| = %.3g\n", worst);
}

// F32 tied output of qwen35-mtp-f32 against llama.cpp's own logits.
void check_f32_logits(const MatrixView& w, const std::vector<std::vector<float>>& hidden,
                      const std::vector<float>& logits, const char* what) {
  ASSERT_EQ(logits.size(), hidden.size() * static_cast<size_t>(w.n_out)) << what;
  const int64_t n = static_cast<int64_t>(hidden.size());
  std::vector<float> x;
  for (const auto& h : hidden) {
    ASSERT_EQ(static_cast<int64_t>(h.size()), w.n_in);
    x.insert(x.end(), h.begin(), h.end());
  }
  std::vector<float> y(logits.size());
  ASSERT_TRUE(matmul(w, x.data(), n, y.data()).ok());
  double worst_abs = 0, worst_rel = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.n_out; ++r) {
      // sum |w x| in double bounds the float summation error of both sides.
      double mag = 0;
      const auto* wr = reinterpret_cast<const float*>(w.data + r * w.row_bytes);
      for (int64_t c = 0; c < w.n_in; ++c) mag += std::fabs(static_cast<double>(wr[c]) * x[t * w.n_in + c]);
      const size_t k = static_cast<size_t>(t * w.n_out + r);
      const double diff = std::fabs(static_cast<double>(y[k]) - logits[k]);
      ASSERT_LE(diff, 1e-6 * mag + 1e-6) << what << " row " << t << " logit " << r;
      worst_abs = std::fmax(worst_abs, diff);
      worst_rel = std::fmax(worst_rel, diff / (mag + 1e-30));
    }
  }
  std::printf("%s: %lld rows, worst |ours - llama.cpp| = %.3g (%.3g of sum|w x|)\n", what,
              static_cast<long long>(n), worst_abs, worst_rel);
}

TEST(GoldenMatmul, F32TiedOutputReproducesLlamaCppLogits) {
  KZ_REQUIRE_SHARED_DATA();
  auto file = gguf::File::open(kazeia::testing::shared_model("qwen35-mtp-f32.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const MatrixView w = tensor_view(*file, "token_embd.weight");
  ASSERT_EQ(w.type, TensorType::F32);

  std::ifstream in(kazeia::testing::shared_golden("mtp/qwen35-mtp-f32.fr.mtp.json"));
  ASSERT_TRUE(in.good());
  const auto j = nlohmann::json::parse(in);
  const auto h_trunk = j.at("h_trunk").get<std::vector<std::vector<float>>>();
  const auto mtp_out = j.at("mtp_out").get<std::vector<std::vector<float>>>();

  // Trunk: logits at every prompt position = token_embd x h_trunk[k].
  std::ifstream meta_in(kazeia::testing::shared_golden("logits/qwen35-mtp-f32.fr.json"));
  ASSERT_TRUE(meta_in.good());
  const auto meta = nlohmann::json::parse(meta_in);
  const auto positions = meta.at("positions").get<std::vector<int>>();
  ASSERT_EQ(positions.size(), h_trunk.size());
  for (size_t i = 0; i < positions.size(); ++i) ASSERT_EQ(positions[i], static_cast<int>(i));
  check_f32_logits(w, h_trunk, read_floats(kazeia::testing::shared_golden("logits/qwen35-mtp-f32.fr.logits.bin")),
                   "trunk logits (fr)");

  // MTP head: logits of every MTP row = token_embd x mtp_out[r].
  check_f32_logits(w, mtp_out, read_floats(kazeia::testing::shared_golden("mtp/qwen35-mtp-f32.fr.mtp.logits.bin")),
                   "MTP logits (fr)");
}

}  // namespace
}  // namespace kazeia::kernels
