// The i8mm 2-row x 2-token tiles (Q4_0, Q8_0) against four reference row
// dots, bit for bit (the tiles repeat the reference's float operations; this
// build compiles with -ffp-contract=off): on realistic rows, and on rows with
// power-of-two scales where the reference itself is exact. Row strides with
// padding, weight rows at odd addresses, an output stride, and a check that
// only the four outputs are written. Then the matmul strips (dotprod's
// 4 x 4 SDOT tiles, also taken at i8mm) with odd row and token counts.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "arm_test_util.h"
#include "kernel_test_util.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using arm_testing::OffsetBuffer;

const TensorType kTileTypes[] = {TensorType::Q4_0, TensorType::Q8_0};

// Two rows of `row_bytes` each, laid out at a stride of row_bytes + pad.
std::vector<uint8_t> two_rows(const std::vector<uint8_t>& r0, const std::vector<uint8_t>& r1,
                              size_t pad) {
  std::vector<uint8_t> out(r0.size() + pad + r1.size(), 0xEE);
  std::copy(r0.begin(), r0.end(), out.begin());
  std::copy(r1.begin(), r1.end(), out.begin() + static_cast<std::ptrdiff_t>(r0.size() + pad));
  return out;
}

class ArmI8mmTile : public ::testing::TestWithParam<TensorType> {
 protected:
  void SetUp() override {
    type_ = GetParam();
    if (std::string why = arm_testing::level_unavailable(CpuLevel::kI8mm); !why.empty()) {
      GTEST_SKIP() << why;
    }
    fn_ = arm::arm_vec_dot_2x2_fn(type_, CpuLevel::kI8mm);
    ASSERT_NE(fn_, nullptr);
  }

  // Runs the tile on rows w[0..1] x x[0..1] under several layouts and checks
  // each output with `check(got, r, t)`.
  template <typename Check>
  void run_layouts(int64_t n, const std::vector<uint8_t> w[2], const std::vector<uint8_t> x[2],
                   Check check) {
    constexpr size_t kYStride = 5;
    for (size_t w_pad : {0, 6}) {
      for (size_t w_offset : {0, 1, 3}) {
        const std::vector<uint8_t> wr = two_rows(w[0], w[1], w_pad);
        const std::vector<uint8_t> xr = two_rows(x[0], x[1], 2);  // keeps 2-byte alignment
        OffsetBuffer wb(wr, w_offset);
        OffsetBuffer xb(xr, 0);
        std::vector<float> y(2 * kYStride, -12345.0f);
        fn_(n, wb.data(), w[0].size() + w_pad, xb.data(), x[0].size() + 2, y.data(), kYStride);
        SCOPED_TRACE("w pad " + std::to_string(w_pad) + ", w offset " + std::to_string(w_offset));
        for (size_t i = 0; i < y.size(); ++i) {
          const size_t t = i / kYStride;
          const size_t r = i % kYStride;
          if (r < 2) {
            check(y[i], r, t);
          } else {
            EXPECT_EQ(y[i], -12345.0f) << "wrote outside the tile at " << i;
          }
        }
      }
    }
  }

  TensorType type_{};
  arm::VecDot2x2Fn fn_ = nullptr;
};

TEST_P(ArmI8mmTile, MatchesReferenceOnRealisticRows) {
  const ref::VecDotFn ref_fn = ref::vec_dot_fn(type_);
  uint32_t seed = 300 + static_cast<uint32_t>(type_);
  for (int64_t nb : {1, 2, 3, 8, 13, 64}) {
    const int64_t n = nb * kQK;
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<uint8_t> w[2];
    std::vector<double> wv[2];
    std::vector<uint8_t> x[2];
    std::vector<double> xv[2];
    for (int k = 0; k < 2; ++k) {
      const testing::TestMatrix m = testing::make_matrix(type_, n, 1, ++seed);
      w[k] = m.bytes;
      wv[k] = m.values;
      const std::vector<float> xf = testing::random_activations(static_cast<size_t>(n), ++seed);
      x[k].resize(activation_row_bytes(TensorType::Q8_0, n));
      ASSERT_TRUE(quantize_activations(TensorType::Q8_0, xf.data(), n, x[k].data()).ok());
      xv[k] = testing::decode_activation(TensorType::Q8_0, x[k].data(), n);
    }
    run_layouts(n, w, x, [&](float got, size_t r, size_t t) {
      const float expected = ref_fn(n, w[r].data(), x[t].data());
      const double magnitude = testing::dot_ref(wv[r].data(), xv[t].data(), n).magnitude;
      EXPECT_EQ(got, expected) << "row " << r << ", token " << t << ", sum |w x| " << magnitude;
    });
  }
}

TEST_P(ArmI8mmTile, EqualsReferenceBitForBitWhenArithmeticIsExact) {
  const ref::VecDotFn ref_fn = ref::vec_dot_fn(type_);
  uint32_t seed = 900 + static_cast<uint32_t>(type_);
  for (int64_t nb : {1, 3, 4, 9, 129}) {
    const int64_t n = nb * kQK;
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<uint8_t> w[2];
    std::vector<uint8_t> x[2];
    for (int k = 0; k < 2; ++k) {
      w[k] = arm_testing::exact_weight_row(type_, nb, ++seed);
      x[k] = arm_testing::exact_activation_row(type_, nb, ++seed);
    }
    run_layouts(n, w, x, [&](float got, size_t r, size_t t) {
      const float expected = ref_fn(n, w[r].data(), x[t].data());
      ASSERT_EQ(static_cast<double>(expected),
                arm_testing::exact_dot(type_, w[r].data(), x[t].data(), n));
      EXPECT_EQ(got, expected) << "row " << r << ", token " << t;
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Arm, ArmI8mmTile, ::testing::ValuesIn(kTileTypes),
                         [](const ::testing::TestParamInfo<TensorType>& info) {
                           return std::string(tensor_type_name(info.param));
                         });

// The strips (4 x 4 SDOT tiles) at each level that has them.
class ArmStrip : public ::testing::TestWithParam<std::tuple<TensorType, CpuLevel>> {
 protected:
  void SetUp() override {
    std::tie(type_, level_) = GetParam();
    if (std::string why = arm_testing::level_unavailable(level_); !why.empty()) GTEST_SKIP() << why;
    strip_ = arm::arm_strip_fn(type_, level_);
    ASSERT_NE(strip_, nullptr);
  }

  // Runs the strip over n_rows rows w_stride apart (at an odd address) and
  // n_tokens activation rows; y is ldy = n_rows + 2 per token, prefilled
  // with a marker.
  std::vector<float> run(int64_t n, const std::vector<uint8_t>& w, size_t w_stride, int64_t n_rows,
                         const std::vector<uint8_t>& x, size_t x_stride, int64_t n_tokens) {
    OffsetBuffer wb(w, 1);
    const size_t ldy = static_cast<size_t>(n_rows) + 2;
    std::vector<float> y(ldy * static_cast<size_t>(n_tokens), kMarker);
    StripArgs args;
    args.n_in = n;
    args.w = wb.data();
    args.w_stride = w_stride;
    args.n_rows = n_rows;
    args.x.q = x.data();
    args.x.q_stride = x_stride;
    args.x.n_tokens = n_tokens;
    args.y = y.data();
    args.ldy = ldy;
    args.dot = arm::arm_vec_dot_fn(type_, level_);
    strip_(args);
    return y;
  }

  // Every (row, token) of y is the reference dot, bit for bit, and nothing
  // else of y was written.
  void check(const std::vector<float>& y, int64_t n, const std::vector<uint8_t>& w, size_t w_stride,
             int64_t n_rows, const std::vector<uint8_t>& x, size_t x_stride, int64_t n_tokens) {
    const ref::VecDotFn ref_fn = ref::vec_dot_fn(type_);
    const size_t ldy = static_cast<size_t>(n_rows) + 2;
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (size_t r = 0; r < ldy; ++r) {
        const float got = y[static_cast<size_t>(t) * ldy + r];
        if (r < static_cast<size_t>(n_rows)) {
          const uint8_t* x_row = x.data() + x_stride * static_cast<size_t>(t);
          EXPECT_EQ(got, ref_fn(n, w.data() + w_stride * r, x_row)) << "row " << r << ", token " << t;
        } else {
          EXPECT_EQ(got, kMarker) << "wrote outside the strip: row " << r << ", token " << t;
        }
      }
    }
  }

  static constexpr float kMarker = -12345.0f;
  TensorType type_{};
  CpuLevel level_{};
  arm::StripFn strip_ = nullptr;
};

// Exact scales (the reference exact too), odd row and token counts: whole
// tiles and every leftover shape.
TEST_P(ArmStrip, CoversOddRowAndTokenCounts) {
  const int64_t nb = 5;
  const int64_t n = nb * kQK;
  const size_t w_stride = type_row_bytes(type_, n) + 3;
  const size_t x_stride = activation_row_bytes(TensorType::Q8_0, n);
  for (int64_t n_rows : {1, 2, 3, 5, 16}) {
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 9}) {
      SCOPED_TRACE(std::to_string(n_rows) + " rows, " + std::to_string(n_tokens) + " tokens");
      std::vector<uint8_t> w(w_stride * static_cast<size_t>(n_rows));
      std::vector<uint8_t> x(x_stride * static_cast<size_t>(n_tokens));
      for (int64_t r = 0; r < n_rows; ++r) {
        const auto row = arm_testing::exact_weight_row(type_, nb, 40 + static_cast<uint32_t>(r));
        std::copy(row.begin(), row.end(), w.begin() + static_cast<std::ptrdiff_t>(w_stride * r));
      }
      for (int64_t t = 0; t < n_tokens; ++t) {
        const auto row = arm_testing::exact_activation_row(type_, nb, 80 + static_cast<uint32_t>(t));
        std::copy(row.begin(), row.end(), x.begin() + static_cast<std::ptrdiff_t>(x_stride * t));
      }
      check(run(n, w, w_stride, n_rows, x, x_stride, n_tokens), n, w, w_stride, n_rows, x, x_stride, n_tokens);
    }
  }
}

// Reference-quantized random rows and activations: the float updates must
// round as the reference's, block by block.
TEST_P(ArmStrip, MatchesReferenceOnRealisticRows) {
  for (int64_t nb : {3, 13}) {
    const int64_t n = nb * kQK;
    for (int64_t n_rows : {7, 16}) {
      const int64_t n_tokens = 6;
      SCOPED_TRACE(std::to_string(nb) + " blocks, " + std::to_string(n_rows) + " rows");
      const testing::TestMatrix m = testing::make_matrix(type_, n, n_rows, 7 + static_cast<uint32_t>(nb));
      const size_t w_stride = type_row_bytes(type_, n);
      const size_t x_stride = activation_row_bytes(TensorType::Q8_0, n);
      std::vector<uint8_t> x(x_stride * static_cast<size_t>(n_tokens));
      for (int64_t t = 0; t < n_tokens; ++t) {
        const std::vector<float> xf = testing::random_activations(static_cast<size_t>(n), 90 + static_cast<uint32_t>(t));
        ASSERT_TRUE(quantize_activations(TensorType::Q8_0, xf.data(), n, x.data() + x_stride * static_cast<size_t>(t)).ok());
      }
      check(run(n, m.bytes, w_stride, n_rows, x, x_stride, n_tokens), n, m.bytes, w_stride, n_rows, x, x_stride,
            n_tokens);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arm, ArmStrip,
                         ::testing::Combine(::testing::ValuesIn(kTileTypes),
                                            ::testing::Values(CpuLevel::kDotprod, CpuLevel::kI8mm)),
                         [](const ::testing::TestParamInfo<std::tuple<TensorType, CpuLevel>>& info) {
                           return std::string(tensor_type_name(std::get<0>(info.param))) + "_" +
                                  cpu_level_name(std::get<1>(info.param));
                         });

TEST(ArmI8mmTable, OffersTilesOnlyAtI8mm) {
  for (TensorType t : kTileTypes) {
    EXPECT_EQ(arm::arm_vec_dot_2x2_fn(t, CpuLevel::kDotprod), nullptr);
    EXPECT_NE(arm::arm_vec_dot_2x2_fn(t, CpuLevel::kI8mm), nullptr);
  }
  EXPECT_EQ(arm::arm_vec_dot_2x2_fn(TensorType::Q4_K, CpuLevel::kI8mm), nullptr);
  for (TensorType t : kTileTypes) {
    EXPECT_EQ(arm::arm_strip_fn(t, CpuLevel::kNeon), nullptr);
    EXPECT_NE(arm::arm_strip_fn(t, CpuLevel::kDotprod), nullptr);
    EXPECT_NE(arm::arm_strip_fn(t, CpuLevel::kI8mm), nullptr);
    EXPECT_EQ(arm::arm_strip_fn(t, CpuLevel::kDotprod), arm::arm_strip_fn(t, CpuLevel::kI8mm));
  }
  EXPECT_EQ(arm::arm_strip_fn(TensorType::Q4_K, CpuLevel::kI8mm), nullptr);
}

}  // namespace
}  // namespace kazeia::kernels

#else  // not aarch64

namespace {

TEST(ArmI8mmTile, SkippedOffAarch64) {
  GTEST_SKIP() << "ARM kernels are built only for aarch64; run scripts/test-arm.sh (qemu)";
}

}  // namespace

#endif
