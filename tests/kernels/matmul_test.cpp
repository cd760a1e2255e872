// matmul / quantize_activations / get_rows against independent references.
//
// The main reference is a double-precision product of the dequantized
// weights (tensor/ dequantize_row) and the dequantized, already rounded
// activations: the kernels must agree with it to float rounding, which
// checks every bit-unpacking and scale formula of the dot products. A second
// comparison against the unrounded float activations documents (and bounds)
// the effect of the activation rounding itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using testing::decode_activation;
using testing::dot_ref;
using testing::make_matrix;
using testing::random_activations;
using testing::round_half_even;
using testing::type_name;

const TensorType kAllWeightTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
};

// Upper bound on |x_i - rounded(x_i)| for one element, from the rounding
// rule of the vec-dot type (not from the code under test):
//  - Q8_0 / Q8_1: half a step d = amax/127, plus the fp16 rounding of d
//    (relative 2^-11) times at most 127 steps;
//  - Q8_K: half a step (d is kept in fp32), plus float slack;
//  - F16 / BF16: half an ulp of the element (relative 2^-11 / 2^-8).
double activation_error_bound(TensorType vdt, const float* x, int64_t i, int64_t n) {
  auto block_amax = [&](int64_t bs) {
    const int64_t b0 = (i / bs) * bs;
    double amax = 0;
    for (int64_t j = b0; j < b0 + bs && j < n; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    return amax;
  };
  switch (vdt) {
    case TensorType::Q8_0:
    case TensorType::Q8_1: {
      const double d = block_amax(32) / 127;
      return 0.5 * d + 127 * d * std::ldexp(1.0, -11) + 1e-7 * std::fabs(x[i]);
    }
    case TensorType::Q8_K: return 0.5 * block_amax(256) / 127 * (1 + 1e-6);
    case TensorType::F16: return std::fabs(x[i]) * std::ldexp(1.0, -11);
    case TensorType::BF16: return std::fabs(x[i]) * std::ldexp(1.0, -8);
    default: return 0;
  }
}

// The fp16 field at byte `offset` of a block.
double block_fp16(const uint8_t* block, size_t offset) {
  uint16_t h;
  std::memcpy(&h, block + offset, 2);
  return fp16_to_fp32(h);
}

struct Shape {
  int64_t n_in, n_out, n_tokens;
};

// Runs matmul and checks every output against both references.
void check_matmul(TensorType type, const Shape& s, uint32_t seed, ThreadPool* pool = nullptr) {
  SCOPED_TRACE(type_name(type) + " n_in=" + std::to_string(s.n_in) + " n_out=" +
               std::to_string(s.n_out) + " n_tokens=" + std::to_string(s.n_tokens));
  const auto m = make_matrix(type, s.n_in, s.n_out, seed);
  const auto x = random_activations(static_cast<size_t>(s.n_in * s.n_tokens), seed + 1000);
  std::vector<float> y(static_cast<size_t>(s.n_out * s.n_tokens), NAN);
  Status st = matmul(m.view(), x.data(), s.n_tokens, y.data(), pool);
  ASSERT_TRUE(st.ok()) << st.to_string();

  const TensorType vdt = vec_dot_type(type);
  std::vector<uint8_t> act(activation_row_bytes(vdt, s.n_in));
  double worst_rounded = 0, worst_float = 0;
  for (int64_t t = 0; t < s.n_tokens; ++t) {
    const float* xt = x.data() + t * s.n_in;
    ASSERT_TRUE(quantize_activations(vdt, xt, s.n_in, act.data()).ok());
    const std::vector<double> xq = decode_activation(vdt, act.data(), s.n_in);
    std::vector<double> xf(xt, xt + s.n_in);
    for (int64_t r = 0; r < s.n_out; ++r) {
      const double* w = m.values.data() + r * s.n_in;
      const double got = y[static_cast<size_t>(t * s.n_out + r)];

      // 1. Same rounded activations, exact arithmetic: float rounding only.
      auto ref = dot_ref(w, xq.data(), s.n_in);
      if (vdt == TensorType::Q8_1) {
        // Q4_1 / Q5_1 (value = d q + m) meet the activation's stored block
        // sum s = fp16(d_x sum q_x) instead of sum(d_x q_x):
        // sum_i w_i x_i = sum_i (w_i - m) x_i + m s. Model that exactly.
        ref = {};
        const uint8_t* w_raw = m.bytes.data() + static_cast<size_t>(r) * type_row_bytes(type, s.n_in);
        const size_t w_block = tensor_type_traits(type).block_bytes;
        for (int64_t b = 0; b < s.n_in / 32; ++b) {
          const double mb = block_fp16(w_raw + b * w_block, 2);
          const double sb = block_fp16(act.data() + b * 36, 2);
          for (int64_t i = 32 * b; i < 32 * b + 32; ++i) {
            ref.value += (w[i] - mb) * xq[i];
            ref.magnitude += std::fabs((w[i] - mb) * xq[i]);
          }
          ref.value += mb * sb;
          ref.magnitude += std::fabs(mb * sb);
        }
      }
      const double tol = 1e-5 * ref.magnitude + 1e-30;
      EXPECT_LE(std::fabs(got - ref.value), tol) << "row " << r << " token " << t;
      worst_rounded = std::fmax(worst_rounded, std::fabs(got - ref.value) / (ref.magnitude + 1e-30));

      // 2. Unrounded activations: off by at most the activation rounding.
      const auto exact = dot_ref(w, xf.data(), s.n_in);
      double bound = 1e-5 * exact.magnitude;
      for (int64_t i = 0; i < s.n_in; ++i) {
        bound += std::fabs(w[i]) * activation_error_bound(vdt, xt, i, s.n_in);
      }
      if (vdt == TensorType::Q8_1) {
        // The offset term m s carries the block's summed rounding error, and
        // s its own fp16 rounding: |m| (2 sum_i e_i + 2^-11 sum_i |x_i|).
        const uint8_t* w_raw = m.bytes.data() + static_cast<size_t>(r) * type_row_bytes(type, s.n_in);
        const size_t w_block = tensor_type_traits(type).block_bytes;
        for (int64_t b = 0; b < s.n_in / 32; ++b) {
          const double mb = std::fabs(block_fp16(w_raw + b * w_block, 2));
          for (int64_t i = 32 * b; i < 32 * b + 32; ++i) {
            bound += mb * (2 * activation_error_bound(vdt, xt, i, s.n_in) +
                           std::ldexp(1.0, -10) * std::fabs(xt[i]));
          }
        }
      }
      EXPECT_LE(std::fabs(got - exact.value), bound) << "row " << r << " token " << t;
      worst_float = std::fmax(worst_float, std::fabs(got - exact.value) / (exact.magnitude + 1e-30));
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", worst_rounded);
  ::testing::Test::RecordProperty("worst_rel_err_vs_rounded_" + type_name(type), buf);
  std::snprintf(buf, sizeof(buf), "%.3g", worst_float);
  ::testing::Test::RecordProperty("worst_rel_err_vs_float_" + type_name(type), buf);
}

class MatmulAllTypes : public ::testing::TestWithParam<TensorType> {};

TEST_P(MatmulAllTypes, OddShapesAgreeWithDoubleReference) {
  const TensorType type = GetParam();
  const int64_t block = tensor_type_traits(type).block_size;
  // One block and several blocks of the weight's block size (the float
  // types get odd lengths, since their "block" is one value).
  const int64_t one = block == 1 ? 37 : (block == 32 ? 32 : 256);
  const int64_t several = block == 1 ? 301 : (block == 32 ? 7 * 32 : 3 * 256);
  uint32_t seed = 1;
  for (int64_t n_in : {one, several}) {
    for (int64_t n_out : {1, 3, 17}) {
      for (int64_t n_tokens : {1, 3, 7}) check_matmul(type, {n_in, n_out, n_tokens}, seed++);
    }
  }
}

TEST_P(MatmulAllTypes, ThreadedEqualsSingleThreadedBitForBit) {
  const TensorType type = GetParam();
  const int64_t n_in = tensor_type_traits(type).block_size == 256 ? 512 : 96;
  const auto m = make_matrix(type, n_in, 203, 77);
  const auto x = random_activations(static_cast<size_t>(n_in * 5), 78);
  ThreadPool pool(4);
  for (int64_t n_tokens : {1, 5}) {
    std::vector<float> y1(static_cast<size_t>(203 * n_tokens));
    std::vector<float> y4(y1.size());
    ASSERT_TRUE(matmul(m.view(), x.data(), n_tokens, y1.data(), nullptr).ok());
    ASSERT_TRUE(matmul(m.view(), x.data(), n_tokens, y4.data(), &pool).ok());
    EXPECT_EQ(0, std::memcmp(y1.data(), y4.data(), y1.size() * sizeof(float)));
  }
  // And against the references, with the pool.
  check_matmul(type, {n_in, 40, 3}, 79, &pool);
}

TEST_P(MatmulAllTypes, EachRowEqualsItsOwnOneRowMatrix) {
  // Decode walks a thread's chunk as lane streams (lane r of strip i takes
  // row r * n + i) or as prefetched strips in order (DecodeWalk): either
  // way, whatever lane and chunk a row lands in, its output must be the
  // bits of that row alone (a one-row matrix, one strip).
  const TensorType type = GetParam();
  const int64_t n_in = tensor_type_traits(type).block_size == 256 ? 256 : 96;
  const size_t row_bytes = type_row_bytes(type, n_in);
  ThreadPool pool2(2), pool3(3);
  // 32 rows: 2 strips, 120 rows: 8 strips - even lane segments (lanes one
  // row longer, the last ones short or idle); 2087: 131 strips, more than
  // one block of lane outputs per segment.
  for (int64_t n_out : {32, 33, 120, 203, 2087}) {
    const auto m = make_matrix(type, n_in, n_out, static_cast<uint32_t>(n_out));
    const auto x = random_activations(static_cast<size_t>(n_in * 3), 91);
    for (int64_t n_tokens : {1, 3}) {
      std::vector<float> own(static_cast<size_t>(n_out * n_tokens));
      for (int64_t r = 0; r < n_out; ++r) {
        auto row = make_matrix_view(type, m.bytes.data() + static_cast<size_t>(r) * row_bytes, n_in, 1, row_bytes);
        ASSERT_TRUE(row.ok());
        std::vector<float> y(static_cast<size_t>(n_tokens));
        ASSERT_TRUE(matmul(*row, x.data(), n_tokens, y.data(), nullptr).ok());
        for (int64_t t = 0; t < n_tokens; ++t) own[static_cast<size_t>(t * n_out + r)] = y[static_cast<size_t>(t)];
      }
      const std::pair<DecodeWalk, size_t> walks[] = {
          {DecodeWalk::kLaneStreams, 0}, {DecodeWalk::kLaneStreams, 1024}, {DecodeWalk::kPrefetchedStrips, 0}};
      for (const auto& [walk, lane_prefetch] : walks) {
        KernelTable table = active_kernels();
        table.decode_walk = walk;
        table.decode_lane_prefetch = lane_prefetch;
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
          SCOPED_TRACE("n_out " + std::to_string(n_out) + ", tokens " + std::to_string(n_tokens) + ", threads " +
                       std::to_string(pool == nullptr ? 1 : pool->size()) + ", walk " + decode_walk_name(walk) +
                       ", lane prefetch " + std::to_string(lane_prefetch));
          std::vector<float> y(own.size(), NAN);
          ASSERT_TRUE(matmul_with(table, m.view(), x.data(), n_tokens, y.data(), pool).ok());
          EXPECT_EQ(0, std::memcmp(own.data(), y.data(), own.size() * sizeof(float)));
        }
      }
    }
  }
}

TEST_P(MatmulAllTypes, EachTokenEqualsItsOwnMatVec) {
  // Batching must not change the arithmetic: prefill rows = decode rows.
  const TensorType type = GetParam();
  const int64_t n_in = tensor_type_traits(type).block_size == 256 ? 256 : 64;
  const auto m = make_matrix(type, n_in, 9, 5);
  const auto x = random_activations(static_cast<size_t>(n_in * 4), 6);
  std::vector<float> batch(9 * 4);
  ASSERT_TRUE(matmul(m.view(), x.data(), 4, batch.data()).ok());
  for (int64_t t = 0; t < 4; ++t) {
    std::vector<float> one(9);
    ASSERT_TRUE(matmul(m.view(), x.data() + t * n_in, 1, one.data()).ok());
    EXPECT_EQ(0, std::memcmp(one.data(), batch.data() + t * 9, 9 * sizeof(float))) << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, MatmulAllTypes, ::testing::ValuesIn(kAllWeightTypes),
                         [](const auto& info) { return type_name(info.param); });

// ------------------------------------------------------- hand-computed cases

TEST(Matmul, Q8_0UnitScaleIntegerActivationsIsExact) {
  // Weights: Q8_0 blocks with d = 1 (fp16 0x3C00), quants w[r][j] = (j*5 + r*3) % 11 - 5.
  // Activations: integers whose block maximum is 127, so the activation
  // scale is exactly 1 and q = x. The product is an exact integer.
  constexpr int kIn = 64, kOut = 3;
  std::vector<uint8_t> bytes(kOut * (kIn / 32) * sizeof(BlockQ8_0));
  std::vector<int> wq(kOut * kIn);
  for (int r = 0; r < kOut; ++r) {
    for (int b = 0; b < kIn / 32; ++b) {
      BlockQ8_0 blk;
      blk.d = 0x3C00;  // 1.0
      for (int j = 0; j < 32; ++j) {
        const int q = (((b * 32 + j) * 5 + r * 3) % 11) - 5;
        blk.qs[j] = static_cast<int8_t>(q);
        wq[r * kIn + b * 32 + j] = q;
      }
      std::memcpy(bytes.data() + (r * (kIn / 32) + b) * sizeof(BlockQ8_0), &blk, sizeof(blk));
    }
  }
  std::vector<float> x(kIn);
  for (int i = 0; i < kIn; ++i) x[i] = static_cast<float>((i * 37) % 255 - 127);  // hits +-127
  x[0] = 127;
  x[32] = -127;
  auto view = make_matrix_view(TensorType::Q8_0, bytes.data(), kIn, kOut, bytes.size());
  ASSERT_TRUE(view.ok()) << view.status().to_string();
  std::vector<float> y(kOut);
  ASSERT_TRUE(matmul(*view, x.data(), 1, y.data()).ok());
  for (int r = 0; r < kOut; ++r) {
    int64_t expect = 0;
    for (int i = 0; i < kIn; ++i) expect += static_cast<int64_t>(wq[r * kIn + i]) * static_cast<int>(x[i]);
    EXPECT_EQ(y[r], static_cast<float>(expect)) << "row " << r;
  }
}

TEST(Matmul, Q4_0UnitScaleHandComputed) {
  // One Q4_0 block with d = 1: value = nibble - 8. Nibble j (low) = j % 16,
  // nibble j + 16 (high) = 15 - j % 16. Activation: 127 at position 0, 1 at
  // position 17, -2 at position 31, 0 elsewhere -> q = x exactly (d_x = 1).
  BlockQ4_0 blk;
  blk.d = 0x3C00;
  for (int j = 0; j < 16; ++j) blk.qs[j] = static_cast<uint8_t>((j % 16) | ((15 - j % 16) << 4));
  std::vector<float> x(32, 0.0f);
  x[0] = 127;
  x[17] = 1;
  x[31] = -2;
  // w[0] = 0 - 8 = -8; w[17] = (15 - 1) - 8 = 6; w[31] = (15 - 15) - 8 = -8.
  const float expect = 127 * -8 + 1 * 6 + -2 * -8;
  auto view = make_matrix_view(TensorType::Q4_0, &blk, 32, 1, sizeof(blk));
  ASSERT_TRUE(view.ok());
  float y = 0;
  ASSERT_TRUE(matmul(*view, x.data(), 1, &y).ok());
  EXPECT_EQ(y, expect);
}

TEST(Matmul, F32SmallIntegersIsExact) {
  const float w[6] = {1, 2, 3, -4, 5, -6};  // 2 rows of 3
  const float x[6] = {7, 8, 9, 1, 0, -1};   // 2 tokens
  auto view = make_matrix_view(TensorType::F32, w, 3, 2, sizeof(w));
  ASSERT_TRUE(view.ok());
  float y[4];
  ASSERT_TRUE(matmul(*view, x, 2, y).ok());
  EXPECT_EQ(y[0], 7 + 16 + 27);    // token 0, row 0
  EXPECT_EQ(y[1], -28 + 40 - 54);  // token 0, row 1
  EXPECT_EQ(y[2], 1 - 3);          // token 1, row 0
  EXPECT_EQ(y[3], -4 + 6);         // token 1, row 1
}

// -------------------------------------------------------------- error paths

TEST(Matmul, RejectsRowLengthNotAMultipleOfTheBlock) {
  std::vector<uint8_t> bytes(1024);
  auto v = make_matrix_view(TensorType::Q4_0, bytes.data(), 48, 2);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("Q4_0"), std::string::npos) << v.status().message();
  EXPECT_NE(v.status().message().find("48"), std::string::npos) << v.status().message();

  // A hand-built view is checked by matmul itself.
  MatrixView bad{TensorType::Q4_K, bytes.data(), 128, 1, 72};
  std::vector<float> x(128), y(1);
  Status st = matmul(bad, x.data(), 1, y.data());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.to_string();
}

TEST(Matmul, RejectsNullData) {
  auto v = make_matrix_view(TensorType::F32, nullptr, 4, 4);
  EXPECT_EQ(v.status().code(), ErrorCode::kInvalidArgument);

  MatrixView null_view{TensorType::F32, nullptr, 4, 1, 16};
  float x[4] = {}, y[1];
  EXPECT_EQ(matmul(null_view, x, 1, y).code(), ErrorCode::kInvalidArgument);

  const float w[4] = {1, 2, 3, 4};
  auto ok = make_matrix_view(TensorType::F32, w, 4, 1);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(matmul(*ok, nullptr, 1, y).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(matmul(*ok, x, 1, nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(matmul(*ok, x, 0, y).ok());  // nothing to do
}

TEST(Matmul, UnsupportedTypeIsNamed) {
  std::vector<uint8_t> bytes(18 * 4);
  for (TensorType t : {TensorType::IQ4_NL, TensorType::Q8_K, TensorType::I32}) {
    const auto& tr = tensor_type_traits(t);
    const int64_t n_in = tr.block_size == 1 ? 4 : tr.block_size;
    std::vector<uint8_t> data(type_row_bytes(t, n_in));
    MatrixView v{t, data.data(), n_in, 1, data.size()};
    std::vector<float> x(static_cast<size_t>(n_in)), y(1);
    Status st = matmul(v, x.data(), 1, y.data());
    EXPECT_EQ(st.code(), ErrorCode::kUnsupported) << type_name(t);
    EXPECT_NE(st.message().find(type_name(t)), std::string::npos) << st.message();
    EXPECT_FALSE(matmul_supported(t));
  }
  for (TensorType t : kAllWeightTypes) EXPECT_TRUE(matmul_supported(t)) << type_name(t);
}

TEST(MatrixView, ChecksSizeAgainstTheBuffer) {
  std::vector<uint8_t> bytes(2 * 18);
  EXPECT_TRUE(make_matrix_view(TensorType::Q4_0, bytes.data(), 32, 2, bytes.size()).ok());
  auto v = make_matrix_view(TensorType::Q4_0, bytes.data(), 32, 3, bytes.size());
  EXPECT_EQ(v.status().code(), ErrorCode::kOutOfRange);
  auto huge = make_matrix_view(TensorType::F32, bytes.data(), int64_t{1} << 40, int64_t{1} << 40);
  EXPECT_FALSE(huge.ok());
  auto neg = make_matrix_view(TensorType::F32, bytes.data(), -1, 2);
  EXPECT_EQ(neg.status().code(), ErrorCode::kInvalidArgument);
  auto bad_id = make_matrix_view(static_cast<TensorType>(4), bytes.data(), 32, 1);
  EXPECT_FALSE(bad_id.ok());
  auto good = make_matrix_view(TensorType::Q6_K, bytes.data(), 256, 0 + 1, SIZE_MAX);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->row_bytes, 210u);
}

// ------------------------------------------------------ activation rounding

TEST(QuantizeActivations, VecDotTypesAreGgmls) {
  EXPECT_EQ(vec_dot_type(TensorType::F32), TensorType::F32);
  EXPECT_EQ(vec_dot_type(TensorType::F16), TensorType::F16);
  EXPECT_EQ(vec_dot_type(TensorType::BF16), TensorType::BF16);
  for (TensorType t : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0, TensorType::IQ4_NL}) {
    EXPECT_EQ(vec_dot_type(t), TensorType::Q8_0) << type_name(t);
  }
  for (TensorType t : {TensorType::Q4_1, TensorType::Q5_1}) EXPECT_EQ(vec_dot_type(t), TensorType::Q8_1);
  for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                       TensorType::Q6_K, TensorType::IQ4_XS}) {
    EXPECT_EQ(vec_dot_type(t), TensorType::Q8_K) << type_name(t);
  }
}

// The golden README's rule for Q8_0: d = max|x| / 127 stored as fp16,
// q = round(x * 127 / max|x|) — ties to even on x86 (_mm256_round_ps).
TEST(QuantizeActivations, Q8_0FollowsTheX86Rule) {
  auto x = random_activations(32 * 9, 3);
  // Block 1 all zero; block 2 with exact ties x * 127 / amax = k + 0.5.
  for (int j = 32; j < 64; ++j) x[j] = 0;
  for (int j = 64; j < 96; ++j) x[j] = static_cast<float>((j % 7) - 3) + 0.5f;
  x[64] = 127;  // amax = 127 -> multiplier 1, quants = round(x)
  std::vector<uint8_t> out(activation_row_bytes(TensorType::Q8_0, 32 * 9));
  ASSERT_TRUE(quantize_activations(TensorType::Q8_0, x.data(), 32 * 9, out.data()).ok());
  for (int b = 0; b < 9; ++b) {
    BlockQ8_0 blk;
    std::memcpy(&blk, out.data() + b * sizeof(BlockQ8_0), sizeof(blk));
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[b * 32 + j]));
    EXPECT_EQ(blk.d, fp32_to_fp16(amax / 127.f)) << "block " << b;
    const float id = amax != 0 ? 127.f / amax : 0.f;
    for (int j = 0; j < 32; ++j) {
      const double expect = round_half_even(static_cast<double>(x[b * 32 + j] * id));
      EXPECT_EQ(blk.qs[j], static_cast<int>(expect)) << "block " << b << " j " << j;
    }
  }
  // The ties: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2, -2.5 -> -2.
  BlockQ8_0 ties;
  std::memcpy(&ties, out.data() + 2 * sizeof(BlockQ8_0), sizeof(ties));
  for (int j = 1; j < 32; ++j) {
    const float v = x[64 + j];
    EXPECT_EQ(ties.qs[j], static_cast<int>(round_half_even(v))) << v;
  }
}

// x86 multiplies by 127 / amax; ggml's portable reference by 1 / (amax / 127).
// The two multipliers differ by an ulp for some amax, which flips the
// rounding of a value sitting on a half step. Find such a case and check we
// follow x86 (the golden outputs' machine).
TEST(QuantizeActivations, Q8_0UsesTheX86Multiplier) {
  bool found = false;
  for (int i = 0; i < 100000 && !found; ++i) {
    const float amax = 1.0f + 0.000731f * static_cast<float>(i);
    const float id_x86 = 127.f / amax;
    const float id_ref = 1.0f / (amax / 127.f);
    if (id_x86 == id_ref) continue;
    for (int k = 0; k < 126 && !found; ++k) {
      const float v = (static_cast<float>(k) + 0.5f) / id_x86;
      const double q_x86 = round_half_even(static_cast<double>(v * id_x86));
      const double q_ref = round_half_even(static_cast<double>(v * id_ref));
      if (q_x86 == q_ref || std::fabs(v) >= amax) continue;
      found = true;
      std::vector<float> x(32, 0.0f);
      x[0] = amax;
      x[5] = v;
      BlockQ8_0 blk;
      ASSERT_TRUE(quantize_activations(TensorType::Q8_0, x.data(), 32, &blk).ok());
      EXPECT_EQ(blk.qs[5], static_cast<int>(q_x86)) << "amax " << amax << " x " << v;
      EXPECT_EQ(blk.qs[0], 127);
    }
  }
  EXPECT_TRUE(found) << "no distinguishing case found; widen the search";
}

TEST(QuantizeActivations, Q8_1CarriesTheScaledSum) {
  // Many blocks: s = fp16(d * sum) with the fp32 d differs from the variant
  // with the fp16-rounded d only in some blocks.
  constexpr int kBlocks = 256;
  const auto x = random_activations(32 * kBlocks, 4);
  std::vector<uint8_t> q81(activation_row_bytes(TensorType::Q8_1, 32 * kBlocks));
  std::vector<uint8_t> q80(activation_row_bytes(TensorType::Q8_0, 32 * kBlocks));
  ASSERT_EQ(q81.size(), kBlocks * 36u);
  ASSERT_TRUE(quantize_activations(TensorType::Q8_1, x.data(), 32 * kBlocks, q81.data()).ok());
  ASSERT_TRUE(quantize_activations(TensorType::Q8_0, x.data(), 32 * kBlocks, q80.data()).ok());
  int rounded_d_would_differ = 0;
  for (int b = 0; b < kBlocks; ++b) {
    const uint8_t* p1 = q81.data() + b * 36;
    const uint8_t* p0 = q80.data() + b * 34;
    EXPECT_EQ(0, std::memcmp(p1, p0, 2)) << "same d";
    EXPECT_EQ(0, std::memcmp(p1 + 4, p0 + 2, 32)) << "same quants";
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += static_cast<int8_t>(p1[4 + j]);
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[b * 32 + j]));
    uint16_t s;
    std::memcpy(&s, p1 + 2, 2);
    const float d = amax / 127.f;
    EXPECT_EQ(s, fp32_to_fp16(d * static_cast<float>(sum))) << "block " << b;
    if (fp32_to_fp16(fp16_to_fp32(fp32_to_fp16(d)) * static_cast<float>(sum)) != s) ++rounded_d_would_differ;
  }
  EXPECT_GT(rounded_d_would_differ, 0) << "the data does not tell the two rules apart";
}

// The golden README's rule for Q8_K: d = max|x| / 127 in fp32,
// q = round-half-even(x * 127 / max|x|), bsums = sums of 16 quants.
TEST(QuantizeActivations, Q8_KFollowsTheReadmeRule) {
  auto x = random_activations(256 * 3, 5);
  for (int j = 256; j < 512; ++j) x[j] = 0;  // an all-zero block
  std::vector<uint8_t> out(activation_row_bytes(TensorType::Q8_K, 256 * 3));
  ASSERT_TRUE(quantize_activations(TensorType::Q8_K, x.data(), 256 * 3, out.data()).ok());
  for (int b = 0; b < 3; ++b) {
    BlockQ8_K blk;
    std::memcpy(&blk, out.data() + b * sizeof(BlockQ8_K), sizeof(blk));
    float amax = 0;
    for (int j = 0; j < 256; ++j) amax = std::fmax(amax, std::fabs(x[b * 256 + j]));
    if (amax == 0) {
      EXPECT_EQ(blk.d, 0.0f);
      for (int j = 0; j < 256; ++j) EXPECT_EQ(blk.qs[j], 0);
      continue;
    }
    // ggml stores d = 1 / (-127 / max), which is +-max/127 up to an ulp; the
    // sign follows the value of largest magnitude, with q negated to match.
    EXPECT_NEAR(std::fabs(blk.d), amax / 127.0, amax / 127.0 * 2e-7);
    const float sign = blk.d < 0 ? -1.0f : 1.0f;
    for (int j = 0; j < 256; ++j) {
      const double expect = round_half_even(static_cast<double>(x[b * 256 + j] * (127.f / amax)));
      EXPECT_EQ(sign * blk.qs[j], static_cast<float>(expect)) << "block " << b << " j " << j;
    }
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += blk.qs[16 * g + j];
      EXPECT_EQ(blk.bsums[g], sum);
    }
  }
}

TEST(QuantizeActivations, RejectsBadArguments) {
  std::vector<float> x(64);
  std::vector<uint8_t> out(1024);
  EXPECT_EQ(quantize_activations(TensorType::Q4_0, x.data(), 32, out.data()).code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(quantize_activations(TensorType::Q8_0, x.data(), 48, out.data()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(quantize_activations(TensorType::Q8_K, x.data(), 64, out.data()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(quantize_activations(TensorType::Q8_0, nullptr, 32, out.data()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(quantize_activations(TensorType::F16, x.data(), 3, out.data()).ok());
}

// The dot-product units directly (what a SIMD kernel will be compared with):
// a misaligned F32 weight row gives the same bits as an aligned one.
TEST(VecDot, MisalignedF32RowMatchesAligned) {
  const auto w = testing::random_floats(300, 9);
  const auto x = testing::random_floats(300, 10);
  std::vector<uint8_t> shifted(300 * 4 + 1);
  std::memcpy(shifted.data() + 1, w.data(), 300 * 4);
  const float a = ref::vec_dot_f32(300, reinterpret_cast<const uint8_t*>(w.data()), x.data());
  const float b = ref::vec_dot_f32(300, shifted.data() + 1, x.data());
  EXPECT_EQ(a, b);
}

// --------------------------------------------------------------- get_rows

TEST(GetRows, DequantizesTheRequestedRows) {
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0,
                          TensorType::Q4_K, TensorType::Q6_K}) {
    SCOPED_TRACE(type_name(type));
    const int64_t n_in = tensor_type_traits(type).block_size == 256 ? 256 : 64;
    const auto m = make_matrix(type, n_in, 10, 21);
    const int32_t ids[] = {9, 0, 3, 3};
    std::vector<float> out(static_cast<size_t>(4 * n_in));
    ASSERT_TRUE(get_rows(m.view(), ids, 4, out.data()).ok());
    for (int i = 0; i < 4; ++i) {
      for (int64_t c = 0; c < n_in; ++c) {
        EXPECT_EQ(out[static_cast<size_t>(i * n_in + c)], m.values[static_cast<size_t>(ids[i] * n_in + c)]);
      }
    }
  }
}

TEST(GetRows, RejectsIdsOutOfRange) {
  const auto m = make_matrix(TensorType::F32, 8, 5, 1);
  std::vector<float> out(16);
  for (int32_t bad : {5, -1, 1 << 30}) {
    const int32_t ids[] = {0, bad};
    Status st = get_rows(m.view(), ids, 2, out.data());
    EXPECT_EQ(st.code(), ErrorCode::kOutOfRange);
    EXPECT_NE(st.message().find(std::to_string(bad)), std::string::npos) << st.message();
  }
  EXPECT_EQ(get_rows(m.view(), nullptr, 1, out.data()).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kazeia::kernels
