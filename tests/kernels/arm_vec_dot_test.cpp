// ARM row dots (src/kernels/arm) against the scalar reference, at every ARM
// level the run may use (scripts/test-arm.sh runs this under qemu with all
// levels, and again with KAZEIA_CPU_LEVEL=neon and =scalar).
//
// Two checks per weight type and level:
//  - realistic rows (reference-quantized random weights, reference-quantized
//    activations), row lengths that are and are not multiples of the SIMD
//    step / block group, weight rows at odd addresses: F32, F16, BF16 and
//    the legacy formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and Q2_K must equal
//    the reference bit for bit (their kernels repeat its float operations;
//    this build compiles with -ffp-contract=off), Q3_K .. Q6_K must be
//    within 1e-5 of sum |w_i x_i| (their float order differs);
//  - rows whose scales are powers of two, so every float operation is exact:
//    every type must equal the reference bit for bit, which checks the
//    integer sums (and the element order) exactly.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "arm_test_util.h"
#include "kernel_test_util.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using arm_testing::kArmLevels;
using arm_testing::level_unavailable;
using arm_testing::OffsetBuffer;

const TensorType kDotTypes[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,
                                TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                                TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                                TensorType::Q6_K};

bool is_float(TensorType t) {
  return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}

// The kernels that repeat the reference's float operations (arm_kernels.h).
bool bit_identical(TensorType t) { return !arm_testing::is_k_quant(t) || t == TensorType::Q2_K; }

// Row lengths: for the float types, around the 16-lane step; for the block
// types, block counts around the 4-block group of the legacy kernels.
std::vector<int64_t> row_lengths(TensorType type) {
  if (is_float(type)) return {1, 3, 4, 15, 16, 17, 31, 33, 100, 255, 256, 1000, 4097};
  const int64_t block = tensor_type_traits(type).block_size;
  const std::vector<int64_t> blocks = block == kQK_K
                                          ? std::vector<int64_t>{1, 2, 3, 5, 16}
                                          : std::vector<int64_t>{1, 2, 3, 4, 5, 7, 8, 13, 64, 129};
  std::vector<int64_t> n;
  for (int64_t nb : blocks) n.push_back(nb * block);
  return n;
}

// Alignment the reference may assume for an activation row of `vdt`.
size_t activation_alignment(TensorType vdt) {
  switch (vdt) {
    case TensorType::F32: return alignof(float);
    case TensorType::Q8_K: return alignof(BlockQ8_K);
    default: return 2;  // F16, BF16, Q8_0, Q8_1
  }
}

class ArmVecDot : public ::testing::TestWithParam<std::tuple<TensorType, CpuLevel>> {
 protected:
  void SetUp() override {
    std::tie(type_, level_) = GetParam();
    if (std::string why = level_unavailable(level_); !why.empty()) GTEST_SKIP() << why;
    fn_ = arm::arm_vec_dot_fn(type_, level_);
    ref_ = ref::vec_dot_fn(type_);
    ASSERT_NE(fn_, nullptr) << "no ARM kernel for " << tensor_type_name(type_);
    ASSERT_NE(ref_, nullptr);
  }

  TensorType type_{};
  CpuLevel level_{};
  ref::VecDotFn fn_ = nullptr;
  ref::VecDotFn ref_ = nullptr;
};

TEST_P(ArmVecDot, MatchesReferenceOnRealisticRows) {
  const TensorType vdt = vec_dot_type(type_);
  const size_t x_align = activation_alignment(vdt);
  uint32_t seed = 1000 + static_cast<uint32_t>(type_);
  for (int64_t n : row_lengths(type_)) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const testing::TestMatrix w = testing::make_matrix(type_, n, 1, ++seed);
    const std::vector<float> xf = testing::random_activations(static_cast<size_t>(n), ++seed);
    std::vector<uint8_t> x(activation_row_bytes(vdt, n));
    ASSERT_TRUE(quantize_activations(vdt, xf.data(), n, x.data()).ok());

    const std::vector<double> xd = testing::decode_activation(vdt, x.data(), n);
    const double magnitude = testing::dot_ref(w.values.data(), xd.data(), n).magnitude;
    const float expected = ref_(n, w.bytes.data(), x.data());

    for (size_t w_offset : {0, 1, 2, 3, 7}) {
      for (size_t x_offset : {size_t{0}, x_align, 3 * x_align}) {
        OffsetBuffer wb(w.bytes, w_offset);
        OffsetBuffer xb(x, x_offset);
        const float got = fn_(n, wb.data(), xb.data());
        if (bit_identical(type_)) {
          EXPECT_EQ(got, expected) << "w offset " << w_offset << ", x offset " << x_offset;
        } else {
          EXPECT_LE(std::fabs(static_cast<double>(got) - expected), 1e-5 * magnitude + 1e-30)
              << "w offset " << w_offset << ", x offset " << x_offset << ": got " << got
              << ", reference " << expected << ", sum |w x| " << magnitude;
        }
      }
    }
  }
}

// Float rows of small integers (exact products and sums) and quantized rows
// with power-of-two scales: every summation order gives the exact value.
TEST_P(ArmVecDot, EqualsReferenceBitForBitWhenArithmeticIsExact) {
  uint32_t seed = 5000 + static_cast<uint32_t>(type_);
  for (int64_t n : row_lengths(type_)) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<uint8_t> w;
    std::vector<uint8_t> x;
    if (is_float(type_)) {
      std::mt19937 rng(++seed);
      std::uniform_int_distribution<int> small(-8, 8);
      std::vector<float> wf(static_cast<size_t>(n));
      std::vector<float> xf(static_cast<size_t>(n));
      for (auto& v : wf) v = static_cast<float>(small(rng));
      for (auto& v : xf) v = static_cast<float>(small(rng));
      w.resize(type_row_bytes(type_, n));
      x.resize(activation_row_bytes(type_, n));
      ASSERT_TRUE(quantize_row(type_, wf.data(), w.data(), n).ok());
      ASSERT_TRUE(quantize_activations(type_, xf.data(), n, x.data()).ok());
    } else {
      const int64_t nb = n / tensor_type_traits(type_).block_size;
      w = arm_testing::exact_weight_row(type_, nb, ++seed);
      x = arm_testing::exact_activation_row(type_, nb, ++seed);
    }
    const float expected = ref_(n, w.data(), x.data());
    if (!is_float(type_)) {
      // The premise: with these scales the reference is exact too.
      ASSERT_EQ(static_cast<double>(expected),
                arm_testing::exact_dot(type_, w.data(), x.data(), n));
    }
    OffsetBuffer wb(w, 1);
    EXPECT_EQ(fn_(n, wb.data(), x.data()), expected);
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<TensorType, CpuLevel>>& info) {
  return std::string(tensor_type_name(std::get<0>(info.param))) + "_" +
         cpu_level_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Arm, ArmVecDot,
                         ::testing::Combine(::testing::ValuesIn(kDotTypes),
                                            ::testing::ValuesIn(kArmLevels)),
                         case_name);

// The lookup: a kernel at every ARM level for the implemented types, the
// SDOT version from dotprod up, nothing for other types or levels.
TEST(ArmVecDotTable, OffersKernelsByLevel) {
  for (TensorType t : kDotTypes) {
    EXPECT_EQ(arm::arm_vec_dot_fn(t, CpuLevel::kScalar), nullptr) << tensor_type_name(t);
    EXPECT_EQ(arm::arm_vec_dot_fn(t, CpuLevel::kAvx2), nullptr) << tensor_type_name(t);
    for (CpuLevel level : kArmLevels) {
      EXPECT_NE(arm::arm_vec_dot_fn(t, level), nullptr) << tensor_type_name(t);
    }
  }
  for (TensorType t : kDotTypes) {
    if (is_float(t)) continue;
    EXPECT_NE(arm::arm_vec_dot_fn(t, CpuLevel::kNeon), arm::arm_vec_dot_fn(t, CpuLevel::kDotprod));
    EXPECT_EQ(arm::arm_vec_dot_fn(t, CpuLevel::kDotprod), arm::arm_vec_dot_fn(t, CpuLevel::kI8mm));
  }
}

}  // namespace
}  // namespace kazeia::kernels

#else  // not aarch64

#include "kernels/arm/arm_kernels.h"

namespace kazeia::kernels {
namespace {

TEST(ArmVecDot, SkippedOffAarch64) {
  // The lookup exists everywhere and offers nothing off ARM.
  EXPECT_EQ(arm::arm_vec_dot_fn(TensorType::Q4_0, CpuLevel::kAvx2), nullptr);
  GTEST_SKIP() << "ARM kernels are built only for aarch64; run scripts/test-arm.sh (qemu)";
}

}  // namespace
}  // namespace kazeia::kernels

#endif
