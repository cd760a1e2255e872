// quantize -> dequantize round trips on random data within derived error
// bounds, idempotence where it holds, hand-checked quantizer outputs, and the
// row API's argument checking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tensor/quant.h"
#include "tensor/quant_ref.h"

namespace kazeia {
namespace {

constexpr int kRowLen = 4096;  // 16 super-blocks, 128 legacy blocks

// ------------------------------------------------------------ test data

enum class Dist { kGaussian, kUniform, kPositive, kOutlier, kTiny, kLarge, kZeroBlocks, kConstant };

const char* dist_name(Dist d) {
  switch (d) {
    case Dist::kGaussian: return "gaussian";
    case Dist::kUniform: return "uniform";
    case Dist::kPositive: return "positive";
    case Dist::kOutlier: return "outlier";
    case Dist::kTiny: return "tiny";
    case Dist::kLarge: return "large";
    case Dist::kZeroBlocks: return "zero-blocks";
    case Dist::kConstant: return "constant";
  }
  return "?";
}

std::vector<float> make_data(Dist dist, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(kRowLen);
  for (int i = 0; i < kRowLen; ++i) {
    switch (dist) {
      case Dist::kGaussian: x[i] = normal(rng); break;
      case Dist::kUniform: x[i] = uniform(rng); break;
      case Dist::kPositive: x[i] = 2.0f + uniform(rng); break;  // all in [1, 3]: min matters
      case Dist::kOutlier: x[i] = 0.01f * normal(rng); break;
      case Dist::kTiny: x[i] = 1e-3f * normal(rng); break;     // fp16 scales still normal
      case Dist::kLarge: x[i] = 1000.0f * normal(rng); break;
      case Dist::kZeroBlocks: x[i] = ((i / 256) % 2 == 0) ? 0.0f : normal(rng); break;
      case Dist::kConstant: x[i] = 0.75f; break;
    }
  }
  if (dist == Dist::kOutlier) {
    // One outlier per super-block, alternating in sign.
    for (int i = 0; i < kRowLen; i += 256) x[i + 37] = (i / 256) % 2 ? 10.0f : -10.0f;
  }
  return x;
}

const Dist kAllDists[] = {Dist::kGaussian, Dist::kUniform,    Dist::kPositive, Dist::kOutlier,
                          Dist::kTiny,     Dist::kLarge,      Dist::kZeroBlocks, Dist::kConstant};

std::vector<float> round_trip(TensorType type, const std::vector<float>& x,
                              std::vector<uint8_t>* q_out = nullptr) {
  std::vector<uint8_t> q(type_row_bytes(type, static_cast<int64_t>(x.size())));
  Status st = quantize_row(type, x.data(), q.data(), static_cast<int64_t>(x.size()));
  EXPECT_TRUE(st.ok()) << st.to_string();
  std::vector<float> y(x.size());
  st = dequantize_row(type, q.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (q_out) *q_out = std::move(q);
  return y;
}

// Absolute error of storing a value as fp16: half an ulp (2^-11 relative) in
// the normal range, half of 2^-24 below it.
float fp16_err(float v) { return std::max(std::fabs(v) * 0x1p-11f, 0x1p-25f); }

// ----------------------------------------------- legacy formats: per element
// Each block is checked against a bound derived from its own fp32 scale:
//  * rounding to the nearest level costs at most d/2;
//  * d (and m) are stored as fp16, so a level q is off by |q| * fp16_err(d)
//    (+ fp16_err(m));
//  * Q4_0 / Q5_0 place the level grid so the signed max maps to -8 (-16)
//    exactly; an element of the opposite sign at the same magnitude would need
//    +8 (+16), which is clamped to 7 (15): error up to one full step d there.
//  * a float ulp or two of the values themselves (1e-6 relative).

struct BlockStats {
  float amax = 0, max = 0, min = 0, maxv = 0;
};

BlockStats block_stats(const float* x, int n) {
  BlockStats s;
  s.min = x[0];
  s.maxv = x[0];
  for (int i = 0; i < n; ++i) {
    if (s.amax < std::fabs(x[i])) {
      s.amax = std::fabs(x[i]);
      s.max = x[i];
    }
    s.min = std::min(s.min, x[i]);
    s.maxv = std::max(s.maxv, x[i]);
  }
  return s;
}

void check_legacy(TensorType type, Dist dist) {
  SCOPED_TRACE(std::string(tensor_type_name(type)) + " / " + dist_name(dist));
  const auto x = make_data(dist, 42);
  const auto y = round_trip(type, x);
  for (int b = 0; b < kRowLen / 32; ++b) {
    const BlockStats s = block_stats(&x[32 * b], 32);
    for (int j = 0; j < 32; ++j) {
      const int i = 32 * b + j;
      float bound = 0;
      switch (type) {
        case TensorType::Q8_0: {
          const float d = s.amax / 127;
          bound = d / 2 + 127 * fp16_err(d);
          break;
        }
        case TensorType::Q4_0:
        case TensorType::Q5_0: {
          const float levels = type == TensorType::Q4_0 ? 8.0f : 16.0f;
          const float d = std::fabs(s.max) / levels;
          const bool clamped_side = x[i] * s.max < 0 && std::fabs(x[i]) > (levels - 0.5f) * d;
          bound = (clamped_side ? d : d / 2) + levels * fp16_err(d);
          break;
        }
        case TensorType::Q4_1:
        case TensorType::Q5_1: {
          const float levels = type == TensorType::Q4_1 ? 15.0f : 31.0f;
          const float d = (s.maxv - s.min) / levels;
          bound = d / 2 + levels * fp16_err(d) + fp16_err(s.min);
          break;
        }
        default: FAIL();
      }
      bound += 1e-6f * s.amax;
      ASSERT_LE(std::fabs(y[i] - x[i]), bound) << "element " << i << " x=" << x[i] << " y=" << y[i];
    }
  }
}

TEST(RoundTrip, Q8_0) { for (Dist d : kAllDists) check_legacy(TensorType::Q8_0, d); }
TEST(RoundTrip, Q4_0) { for (Dist d : kAllDists) check_legacy(TensorType::Q4_0, d); }
TEST(RoundTrip, Q4_1) { for (Dist d : kAllDists) check_legacy(TensorType::Q4_1, d); }
TEST(RoundTrip, Q5_0) { for (Dist d : kAllDists) check_legacy(TensorType::Q5_0, d); }
TEST(RoundTrip, Q5_1) { for (Dist d : kAllDists) check_legacy(TensorType::Q5_1, d); }

// ------------------------------------------------------ K-quants: RMSE
// The K-quants search their scales (least squares), so a per-element bound
// is loose; the relative RMSE of a row (rmse / rms of the data) is the
// meaningful figure. For a uniform quantizer with step D the RMSE is about
// D / sqrt(12). On gaussian data a 32-value sub-block spans about 4.3 sigma:
//  * Q4_K (16 levels, asymmetric): D ~ 4.3/15 -> ~0.083, plus 6-bit scale
//    and min rounding: bound 0.12;
//  * Q5_K (32 levels): ~0.040 -> bound 0.06;
//  * Q6_K (64 levels, symmetric, 16-value sub-blocks spanning ~2 * 2 sigma
//    with the least-squares fit): ~0.018 -> bound 0.03;
//  * Q3_K (8 levels on 16 values): ~0.15 -> bound 0.25;
//  * Q2_K (4 levels on 16 values, fitted with min and mean absolute error):
//    ~0.30 -> bound 0.45.
// Q8_K keeps an fp32 scale and rounds to nearest: |err| <= d / 2 per element.

double rel_rmse(const std::vector<float>& x, const std::vector<float>& y) {
  double se = 0, ss = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    se += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
    ss += double(x[i]) * x[i];
  }
  return ss > 0 ? std::sqrt(se / ss) : std::sqrt(se);
}

void check_kquant(TensorType type, double bound) {
  for (Dist dist : kAllDists) {
    SCOPED_TRACE(std::string(tensor_type_name(type)) + " / " + dist_name(dist));
    const auto x = make_data(dist, 7);
    const auto y = round_trip(type, x);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(std::isfinite(y[i])) << i;
    if (dist == Dist::kZeroBlocks) {
      for (int i = 0; i < kRowLen; ++i) {
        if ((i / 256) % 2 == 0) {
          ASSERT_EQ(y[i], 0.0f) << "all-zero super-block must stay zero, element " << i;
        }
      }
    }
    const double r = rel_rmse(x, y);
    EXPECT_LT(r, bound) << "relative rmse " << r;
    std::printf("  %-5s %-12s rel rmse %.4f (bound %.2f)\n",
                std::string(tensor_type_name(type)).c_str(),
                dist_name(dist), r, bound);
  }
}

TEST(RoundTrip, Q2_K) { check_kquant(TensorType::Q2_K, 0.45); }
TEST(RoundTrip, Q3_K) { check_kquant(TensorType::Q3_K, 0.25); }
TEST(RoundTrip, Q4_K) { check_kquant(TensorType::Q4_K, 0.12); }
TEST(RoundTrip, Q5_K) { check_kquant(TensorType::Q5_K, 0.06); }
TEST(RoundTrip, Q6_K) { check_kquant(TensorType::Q6_K, 0.03); }

TEST(RoundTrip, Q8_K) {
  for (Dist dist : kAllDists) {
    SCOPED_TRACE(dist_name(dist));
    const auto x = make_data(dist, 3);
    const auto y = round_trip(TensorType::Q8_K, x);
    for (int b = 0; b < kRowLen / 256; ++b) {
      const BlockStats s = block_stats(&x[256 * b], 256);
      const float d = s.amax / 127;
      for (int j = 0; j < 256; ++j) {
        const int i = 256 * b + j;
        ASSERT_LE(std::fabs(y[i] - x[i]), d / 2 + 1e-6f * s.amax) << i;
      }
    }
  }
}

TEST(RoundTrip, F16AndBF16) {
  for (Dist dist : kAllDists) {
    SCOPED_TRACE(dist_name(dist));
    const auto x = make_data(dist, 5);
    const auto yh = round_trip(TensorType::F16, x);
    const auto yb = round_trip(TensorType::BF16, x);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(std::fabs(yh[i] - x[i]), fp16_err(x[i])) << i;
      ASSERT_LE(std::fabs(yb[i] - x[i]), std::fabs(x[i]) * 0x1p-8f) << i;  // half an ulp of 8 bits
    }
  }
}

// Q8_K's bsums are the sums of each 16 quants.
TEST(RoundTrip, Q8_KBsums) {
  const auto x = make_data(Dist::kGaussian, 11);
  std::vector<BlockQ8_K> blocks(kRowLen / 256);
  ASSERT_TRUE(quantize_row(TensorType::Q8_K, x.data(), blocks.data(), kRowLen).ok());
  for (const BlockQ8_K& b : blocks) {
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int k = 0; k < 16; ++k) sum += b.qs[16 * g + k];
      EXPECT_EQ(b.bsums[g], sum);
    }
  }
}

// ---------------------------------------------------------- idempotence
// quantize(dequantize(q)) == q for Q8_0 and Q4_0: the dequantized block's
// largest magnitude is exactly 127 * d (8 * d, with the sign that maps to
// level 0), so requantizing finds the same fp16 d and the same levels. (It
// does not hold for the min formats, whose fp16 min is re-derived, nor for
// the K-quants' search.)

void check_idempotent(TensorType type) {
  for (Dist dist : {Dist::kGaussian, Dist::kUniform, Dist::kPositive, Dist::kOutlier, Dist::kLarge,
                    Dist::kZeroBlocks, Dist::kConstant}) {
    SCOPED_TRACE(std::string(tensor_type_name(type)) + " / " + dist_name(dist));
    std::vector<uint8_t> q1, q2;
    const auto x = make_data(dist, 21);
    const auto y = round_trip(type, x, &q1);
    round_trip(type, y, &q2);
    ASSERT_EQ(q1, q2);
  }
}

TEST(Idempotence, Q8_0) { check_idempotent(TensorType::Q8_0); }
TEST(Idempotence, Q4_0) { check_idempotent(TensorType::Q4_0); }

// ------------------------------------------------ hand-checked quantizers

TEST(QuantizeByHand, Q4_0) {
  // x[j] = (j - 8) / 2 and x[j + 16] = (7 - j) / 2: the value of largest
  // magnitude is -4 (first at j = 0), so d = -4 / -8 = 0.5, id = 2 and
  // q = trunc(x * 2 + 8.5): j for the first half, 15 - j for the second.
  float x[32];
  for (int j = 0; j < 16; ++j) {
    x[j] = (j - 8) * 0.5f;
    x[j + 16] = (7 - j) * 0.5f;
  }
  uint8_t out[18];
  ASSERT_TRUE(quantize_row(TensorType::Q4_0, x, out, 32).ok());
  EXPECT_EQ(out[0], 0x00);
  EXPECT_EQ(out[1], 0x38);  // d = 0.5
  for (int j = 0; j < 16; ++j) EXPECT_EQ(out[2 + j], j | ((15 - j) << 4)) << j;
}

TEST(QuantizeByHand, Q4_0PositiveMaxGivesNegativeScale) {
  // Largest magnitude +4 -> d = 4 / -8 = -0.5 (fp16 0xB800); 4 maps to level
  // 0, -3.5 to 15 (the grid is mirrored, as llama.cpp does).
  float x[32] = {};
  x[0] = 4.0f;
  x[1] = -3.5f;
  x[2] = 1.0f;  // 1 * -2 + 8.5 = 6.5 -> 6
  uint8_t out[18];
  ASSERT_TRUE(quantize_row(TensorType::Q4_0, x, out, 32).ok());
  EXPECT_EQ(out[0] | (out[1] << 8), 0xB800);
  EXPECT_EQ(out[2] & 0xF, 0);
  EXPECT_EQ(out[3] & 0xF, 15);
  EXPECT_EQ(out[4] & 0xF, 6);
  EXPECT_EQ(out[5], 0x88);  // zeros -> level 8 in both nibbles
}

TEST(QuantizeByHand, AllZeroBlocks) {
  const float zeros[256] = {};
  // Q4_0: d = 0 / -8 = -0.0 (fp16 0x8000), every level 8.
  uint8_t q4[18];
  ASSERT_TRUE(quantize_row(TensorType::Q4_0, zeros, q4, 32).ok());
  EXPECT_EQ(q4[0], 0x00);
  EXPECT_EQ(q4[1], 0x80);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(q4[2 + j], 0x88);
  // Q5_0: d = -0.0, every level 16: low nibbles 0, all 32 high bits set.
  uint8_t q5[22];
  ASSERT_TRUE(quantize_row(TensorType::Q5_0, zeros, q5, 32).ok());
  EXPECT_EQ(q5[1], 0x80);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(q5[2 + j], 0xFF);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(q5[6 + j], 0x00);
  // The others give all-zero bytes.
  for (TensorType t : {TensorType::Q8_0, TensorType::Q4_1, TensorType::Q5_1, TensorType::Q2_K,
                       TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                       TensorType::Q8_K}) {
    SCOPED_TRACE(std::string(tensor_type_name(t)));
    const int64_t n = tensor_type_traits(t).block_size;
    std::vector<uint8_t> out(type_row_bytes(t, n), 0xAB);
    ASSERT_TRUE(quantize_row(t, zeros, out.data(), n).ok());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 0) << "byte " << i;
  }
}

TEST(QuantizeByHand, Q8_0) {
  // amax = 127 -> d = 1 exactly, id = 1: q = roundf(x), half away from zero.
  float x[32] = {};
  x[0] = 127.0f;
  x[1] = -2.5f;   // -> -3 (roundf, not ties-to-even)
  x[2] = 2.5f;    // -> 3
  x[3] = -126.4f; // -> -126
  uint8_t out[34];
  ASSERT_TRUE(quantize_row(TensorType::Q8_0, x, out, 32).ok());
  EXPECT_EQ(out[0] | (out[1] << 8), 0x3C00);
  EXPECT_EQ(static_cast<int8_t>(out[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(out[3]), -3);
  EXPECT_EQ(static_cast<int8_t>(out[4]), 3);
  EXPECT_EQ(static_cast<int8_t>(out[5]), -126);
  EXPECT_EQ(out[6], 0);
}

TEST(QuantizeByHand, Q4_1) {
  // min = -1, max = 14 -> d = 1, m = -1; q = trunc(x + 1 + 0.5).
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16) - 1.0f;
  x[5] = 3.4f;  // (3.4 + 1) + 0.5 = 4.9 -> 4
  uint8_t out[20];
  ASSERT_TRUE(quantize_row(TensorType::Q4_1, x, out, 32).ok());
  EXPECT_EQ(out[0] | (out[1] << 8), 0x3C00);  // d = 1
  EXPECT_EQ(out[2] | (out[3] << 8), 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j) {
    const int lo = j == 5 ? 4 : j;
    EXPECT_EQ(out[4 + j], lo | (j << 4)) << j;
  }
}

TEST(QuantizeByHand, Q8_KSignConvention) {
  // The signed max decides the sign of d: max = +127 -> iscale = -1, d = -1,
  // q = -x (ggml's quantize_row_q8_K_ref).
  float x[256] = {};
  x[0] = 127.0f;
  x[1] = -50.0f;
  x[17] = 3.0f;
  BlockQ8_K b;
  ASSERT_TRUE(quantize_row(TensorType::Q8_K, x, &b, 256).ok());
  EXPECT_EQ(b.d, -1.0f);
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], 50);
  EXPECT_EQ(b.qs[17], -3);
  EXPECT_EQ(b.bsums[0], -77);
  EXPECT_EQ(b.bsums[1], -3);
  EXPECT_EQ(b.bsums[2], 0);
}

TEST(QuantizeByHand, NearestIntTiesToEven) {
  EXPECT_EQ(ref::nearest_int(2.5f), 2);
  EXPECT_EQ(ref::nearest_int(3.5f), 4);
  EXPECT_EQ(ref::nearest_int(-2.5f), -2);
  EXPECT_EQ(ref::nearest_int(-3.5f), -4);
  EXPECT_EQ(ref::nearest_int(2.4999998f), 2);
  EXPECT_EQ(ref::nearest_int(-0.0f), 0);
  EXPECT_EQ(ref::nearest_int(4194303.0f), 4194303);
  EXPECT_EQ(ref::nearest_int(-4194303.0f), -4194303);
}

// ---------------------------------------------------------------- the API

TEST(QuantApi, RowBytes) {
  EXPECT_EQ(type_row_bytes(TensorType::F32, 10), 40u);
  EXPECT_EQ(type_row_bytes(TensorType::F16, 10), 20u);
  EXPECT_EQ(type_row_bytes(TensorType::BF16, 10), 20u);
  EXPECT_EQ(type_row_bytes(TensorType::Q4_0, 64), 36u);
  EXPECT_EQ(type_row_bytes(TensorType::Q8_0, 4096), 128u * 34);
  EXPECT_EQ(type_row_bytes(TensorType::Q4_K, 512), 288u);
  EXPECT_EQ(type_row_bytes(TensorType::Q6_K, 256), 210u);
  EXPECT_EQ(type_row_bytes(TensorType::Q8_K, 256), 292u);
  EXPECT_EQ(type_row_bytes(TensorType::Q4_0, 0), 0u);
  EXPECT_EQ(type_row_bytes(TensorType::Q4_0, -32), 0u);
}

TEST(QuantApi, Capabilities) {
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                       TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                       TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                       TensorType::Q6_K, TensorType::Q8_K}) {
    EXPECT_TRUE(can_dequantize(t)) << tensor_type_name(t);
    EXPECT_TRUE(can_quantize(t)) << tensor_type_name(t);
  }
  for (TensorType t : {TensorType::Q8_1, TensorType::IQ2_XXS, TensorType::IQ4_NL, TensorType::I8,
                       TensorType::I32, TensorType::F64, TensorType::TQ1_0, TensorType::MXFP4}) {
    EXPECT_FALSE(can_dequantize(t)) << tensor_type_name(t);
    EXPECT_FALSE(can_quantize(t)) << tensor_type_name(t);
  }
}

TEST(QuantApi, RejectsBadArguments) {
  std::vector<float> f(512, 1.0f);
  std::vector<uint8_t> buf(4096);
  Status st = quantize_row(TensorType::Q4_0, f.data(), buf.data(), 33);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("33"), std::string::npos) << st.message();
  st = dequantize_row(TensorType::Q4_K, buf.data(), f.data(), 128);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  constexpr ErrorCode kBad = ErrorCode::kInvalidArgument;
  EXPECT_EQ(dequantize_row(TensorType::Q8_0, buf.data(), f.data(), -32).code(), kBad);
  EXPECT_EQ(dequantize_row(TensorType::Q8_0, nullptr, f.data(), 32).code(), kBad);
  EXPECT_EQ(quantize_row(TensorType::Q8_0, f.data(), nullptr, 32).code(), kBad);
  st = dequantize_row(TensorType::IQ2_XXS, buf.data(), f.data(), 256);
  EXPECT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("IQ2_XXS"), std::string::npos) << st.message();
  EXPECT_EQ(quantize_row(TensorType::TQ2_0, f.data(), buf.data(), 256).code(),
            ErrorCode::kUnsupported);
  // n = 0 is a valid empty row, even with null buffers.
  EXPECT_TRUE(quantize_row(TensorType::Q4_0, nullptr, nullptr, 0).ok());
  EXPECT_TRUE(dequantize_row(TensorType::Q6_K, nullptr, nullptr, 0).ok());
}

// Quantized rows at odd addresses (inside a mapped file a row is only
// byte-aligned) give the same results as aligned ones; run under UBSan this
// also checks that no misaligned block is dereferenced.
TEST(QuantApi, UnalignedBuffers) {
  const auto x = make_data(Dist::kGaussian, 8);
  for (TensorType t : {TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q5_1,
                       TensorType::Q8_0, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q6_K,
                       TensorType::Q8_K}) {
    SCOPED_TRACE(std::string(tensor_type_name(t)));
    const size_t bytes = type_row_bytes(t, kRowLen);
    std::vector<uint8_t> aligned(bytes), shifted(bytes + 1);
    ASSERT_TRUE(quantize_row(t, x.data(), aligned.data(), kRowLen).ok());
    ASSERT_TRUE(quantize_row(t, x.data(), shifted.data() + 1, kRowLen).ok());
    ASSERT_EQ(0, std::memcmp(aligned.data(), shifted.data() + 1, bytes));
    std::vector<float> y1(kRowLen), y2(kRowLen + 1);
    ASSERT_TRUE(dequantize_row(t, shifted.data() + 1, y1.data(), kRowLen).ok());
    float* y2p = y2.data() + 1;
    ASSERT_TRUE(dequantize_row(t, aligned.data(), y2p, kRowLen).ok());
    ASSERT_EQ(0, std::memcmp(y1.data(), y2p, kRowLen * sizeof(float)));
  }
}

}  // namespace
}  // namespace kazeia

namespace kazeia {
namespace {

// Non-finite or huge input gives unspecified bytes, but must not crash or
// hit undefined behaviour (this test matters under the sanitizers).
TEST(QuantApi, NonFiniteInputIsSafe) {
  std::vector<float> x(512, 0.5f);
  x[3] = NAN;
  x[40] = INFINITY;
  x[300] = -INFINITY;
  x[301] = 3e38f;
  x[302] = -1e30f;
  for (TensorType t : {TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                       TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,
                       TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                       TensorType::Q8_K}) {
    SCOPED_TRACE(std::string(tensor_type_name(t)));
    std::vector<uint8_t> q(type_row_bytes(t, 512));
    EXPECT_TRUE(quantize_row(t, x.data(), q.data(), 512).ok());
    std::vector<float> y(512);
    EXPECT_TRUE(dequantize_row(t, q.data(), y.data(), 512).ok());
  }
}

}  // namespace
}  // namespace kazeia
