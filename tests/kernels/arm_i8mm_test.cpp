// The i8mm 2-row x 2-token tiles (Q4_0, Q8_0) against four reference row
// dots, bit for bit (the tiles repeat the reference's float operations; this
// build compiles with -ffp-contract=off): on realistic rows, and on rows with
// power-of-two scales where the reference itself is exact. Row strides with
// padding, weight rows at odd addresses, an output stride, and a check that
// only the four outputs are written. (The matmul strips, dotprod's SDOT
// tiles at i8mm too: arm_strip_test.cpp.)
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <cmath>
#include <string>
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

TEST(ArmI8mmTable, OffersTilesOnlyAtI8mm) {
  for (TensorType t : kTileTypes) {
    EXPECT_EQ(arm::arm_vec_dot_2x2_fn(t, CpuLevel::kDotprod), nullptr);
    EXPECT_NE(arm::arm_vec_dot_2x2_fn(t, CpuLevel::kI8mm), nullptr);
  }
  EXPECT_EQ(arm::arm_vec_dot_2x2_fn(TensorType::Q4_K, CpuLevel::kI8mm), nullptr);
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
