// The ARM matmul strips (4-row tiles of 1 to 16 tokens: SDOT from dotprod
// up, SMMLA for Q4_0 / Q8_0 / Q4_K / Q5_K at i8mm) against row dots, for
// every strip type:
//  - rows with power-of-two scales, where the reference itself is exact:
//    every output equals the reference bit for bit (the integer sums and
//    their element order exactly), over odd row and token counts (whole
//    tiles and every leftover shape), with nothing outside the strip
//    written;
//  - reference-quantized random rows and activations: every output equals
//    the same level's row dot bit for bit (the strips repeat its float
//    operations lane by lane; the row dots are checked against the
//    reference in arm_vec_dot_test.cpp), and is within 1e-5 of
//    sum |w_i x_i| of the reference.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
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

const TensorType kStripTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                  TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K,
                                  TensorType::Q5_K, TensorType::Q6_K};

class ArmStrip : public ::testing::TestWithParam<std::tuple<TensorType, CpuLevel>> {
 protected:
  void SetUp() override {
    std::tie(type_, level_) = GetParam();
    if (std::string why = arm_testing::level_unavailable(level_); !why.empty()) GTEST_SKIP() << why;
    strip_ = arm::arm_strip_fn(type_, level_);
    dot_ = arm::arm_vec_dot_fn(type_, level_);
    ASSERT_NE(strip_, nullptr);
    ASSERT_NE(dot_, nullptr);
    block_ = tensor_type_traits(type_).block_size;
    vdt_ = vec_dot_type(type_);
  }

  // Runs the strip over n_rows rows w_stride apart (at an odd address) and
  // n_tokens activation rows; y holds ldy = n_rows + 2 per token, prefilled
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
    args.dot = dot_;
    strip_(args);
    return y;
  }

  // check(got, r, t) for every (row, token) of the strip; nothing else of
  // y written.
  template <class Check>
  void check_all(const std::vector<float>& y, int64_t n_rows, int64_t n_tokens, Check check) {
    const size_t ldy = static_cast<size_t>(n_rows) + 2;
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (size_t r = 0; r < ldy; ++r) {
        const float got = y[static_cast<size_t>(t) * ldy + r];
        if (r < static_cast<size_t>(n_rows)) {
          check(got, static_cast<int64_t>(r), t);
        } else {
          EXPECT_EQ(got, kMarker) << "wrote outside the strip: row " << r << ", token " << t;
        }
        if (HasFailure()) return;  // one report per case
      }
    }
  }

  static constexpr float kMarker = -12345.0f;
  TensorType type_{};
  CpuLevel level_{};
  TensorType vdt_{};
  int64_t block_ = 0;
  arm::StripFn strip_ = nullptr;
  ref::VecDotFn dot_ = nullptr;
};

TEST_P(ArmStrip, CoversOddRowAndTokenCountsExactly) {
  const int64_t nb = block_ == kQK_K ? 2 : 5;
  const int64_t n = nb * block_;
  const size_t w_stride = type_row_bytes(type_, n) + 3;
  const size_t x_stride = activation_row_bytes(vdt_, n);
  const ref::VecDotFn ref_fn = ref::vec_dot_fn(type_);
  for (int64_t n_rows : {1, 2, 3, 5, 16}) {
    // Every tile width (1-4, 8, 12, 16) and the cascades after the wide
    // ones: 13 = 12 + 1, 20 = 12 + 8 or 16 + 4, 27 = 12 + 12 + 3 or
    // 16 + 8 + 3.
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 8, 9, 12, 13, 16, 20, 27}) {
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
      const std::vector<float> y = run(n, w, w_stride, n_rows, x, x_stride, n_tokens);
      check_all(y, n_rows, n_tokens, [&](float got, int64_t r, int64_t t) {
        const uint8_t* w_row = w.data() + w_stride * static_cast<size_t>(r);
        const uint8_t* x_row = x.data() + x_stride * static_cast<size_t>(t);
        const float expected = ref_fn(n, w_row, x_row);
        ASSERT_EQ(static_cast<double>(expected), arm_testing::exact_dot(type_, w_row, x_row, n));  // the premise
        EXPECT_EQ(got, expected) << "row " << r << ", token " << t;
      });
    }
  }
}

TEST_P(ArmStrip, MatchesTheRowDotOnRealisticRows) {
  const ref::VecDotFn ref_fn = ref::vec_dot_fn(type_);
  for (int64_t nb : {3, 13}) {
    const int64_t n = nb * block_;
    // 6 tokens: tiles of 4 and 2; 27: the widest tiles, 8 and 3 (as above).
    for (auto [n_rows, n_tokens] : {std::pair<int64_t, int64_t>{7, 6}, {16, 6}, {7, 27}, {16, 27}}) {
      SCOPED_TRACE(std::to_string(nb) + " blocks, " + std::to_string(n_rows) + " rows, " + std::to_string(n_tokens) +
                   " tokens");
      const testing::TestMatrix m = testing::make_matrix(type_, n, n_rows, 7 + static_cast<uint32_t>(nb));
      const size_t w_stride = type_row_bytes(type_, n);
      const size_t x_stride = activation_row_bytes(vdt_, n);
      std::vector<uint8_t> x(x_stride * static_cast<size_t>(n_tokens));
      std::vector<std::vector<double>> xd;
      for (int64_t t = 0; t < n_tokens; ++t) {
        const std::vector<float> xf =
            testing::random_activations(static_cast<size_t>(n), 90 + static_cast<uint32_t>(t));
        uint8_t* row = x.data() + x_stride * static_cast<size_t>(t);
        ASSERT_TRUE(quantize_activations(vdt_, xf.data(), n, row).ok());
        xd.push_back(testing::decode_activation(vdt_, row, n));
      }
      const std::vector<float> y = run(n, m.bytes, w_stride, n_rows, x, x_stride, n_tokens);
      check_all(y, n_rows, n_tokens, [&](float got, int64_t r, int64_t t) {
        const uint8_t* w_row = m.bytes.data() + w_stride * static_cast<size_t>(r);
        const uint8_t* x_row = x.data() + x_stride * static_cast<size_t>(t);
        EXPECT_EQ(got, dot_(n, w_row, x_row)) << "row " << r << ", token " << t;
        const double magnitude =
            testing::dot_ref(m.values.data() + static_cast<size_t>(n * r), xd[static_cast<size_t>(t)].data(), n)
                .magnitude;
        EXPECT_LE(std::fabs(static_cast<double>(got) - ref_fn(n, w_row, x_row)), 1e-5 * magnitude + 1e-30)
            << "row " << r << ", token " << t;
      });
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arm, ArmStrip,
                         ::testing::Combine(::testing::ValuesIn(kStripTypes),
                                            ::testing::Values(CpuLevel::kDotprod, CpuLevel::kI8mm)),
                         [](const ::testing::TestParamInfo<std::tuple<TensorType, CpuLevel>>& info) {
                           return std::string(tensor_type_name(std::get<0>(info.param))) + "_" +
                                  cpu_level_name(std::get<1>(info.param));
                         });

// Quantized strips from dotprod up (SMMLA tiles for Q4_0 / Q8_0 / Q4_K /
// Q5_K at i8mm, SDOT ones for the rest), none below. The float types'
// strips exist at every level.
TEST(ArmStripTable, OffersStripsFromDotprod) {
  for (TensorType t : kStripTypes) {
    EXPECT_EQ(arm::arm_strip_fn(t, CpuLevel::kNeon), nullptr) << tensor_type_name(t);
    EXPECT_NE(arm::arm_strip_fn(t, CpuLevel::kDotprod), nullptr) << tensor_type_name(t);
    EXPECT_NE(arm::arm_strip_fn(t, CpuLevel::kI8mm), nullptr) << tensor_type_name(t);
    const bool mmla = t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::Q4_K || t == TensorType::Q5_K;
    EXPECT_EQ(arm::arm_strip_fn(t, CpuLevel::kDotprod) == arm::arm_strip_fn(t, CpuLevel::kI8mm), !mmla)
        << tensor_type_name(t);
  }
  // F32, F16 and BF16 at every level (SimdTables checks their bits).
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
    EXPECT_NE(arm::arm_strip_fn(t, CpuLevel::kNeon), nullptr) << tensor_type_name(t);
    EXPECT_EQ(arm::arm_strip_fn(t, CpuLevel::kNeon), arm::arm_strip_fn(t, CpuLevel::kI8mm)) << tensor_type_name(t);
  }
}

}  // namespace
}  // namespace kazeia::kernels

#else  // not aarch64

namespace {

TEST(ArmStrip, SkippedOffAarch64) {
  GTEST_SKIP() << "ARM kernels are built only for aarch64; run scripts/test-arm.sh (qemu)";
}

}  // namespace

#endif
