// ARM activation quantizers (Q8_0, Q8_1, Q8_K) against the reference:
// the output bytes must be identical, for realistic activations and for the
// inputs where a rounding or selection rule shows: exact rounding ties,
// ties for the largest magnitude, zeros, NaN, infinities, subnormal and huge
// blocks.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "arm_test_util.h"
#include "kernel_test_util.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels {
namespace {

using arm_testing::OffsetBuffer;

const TensorType kActTypes[] = {TensorType::Q8_0, TensorType::Q8_1, TensorType::Q8_K};

using QuantizeFn = void (*)(const float*, int64_t, uint8_t*);

QuantizeFn reference_for(TensorType vdt) {
  switch (vdt) {
    case TensorType::Q8_0: return ref::quantize_row_q8_0_act;
    case TensorType::Q8_1: return ref::quantize_row_q8_1_act;
    default: return ref::quantize_row_q8_K_act;
  }
}

int64_t block_of(TensorType vdt) { return vdt == TensorType::Q8_K ? kQK_K : kQK; }

// Named blocks of one block size each, built to hit one rule.
struct SpecialBlock {
  std::string name;
  std::vector<float> x;
};

std::vector<SpecialBlock> special_blocks(int64_t bs, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-120, 120);
  auto blank = [&] { return std::vector<float>(static_cast<size_t>(bs), 0.0f); };
  std::vector<SpecialBlock> out;

  out.push_back({"zeros", blank()});
  out.push_back({"negative zeros", std::vector<float>(static_cast<size_t>(bs), -0.0f)});

  // Magnitude 127 at the front: the Q8_0 multiplier 127 / amax and the Q8_K
  // one (-127 / max, max = -127 here) are exactly +-1, so k + 0.5 values sit
  // on rounding ties (half-even in both references).
  {
    auto x = blank();
    x[0] = -127.0f;
    for (int64_t i = 1; i < bs; ++i) x[i] = static_cast<float>(small(rng)) + 0.5f;
    out.push_back({"ties", x});
  }
  // Largest magnitude twice with opposite signs: the first one sets Q8_K's sign.
  for (const float first : {5.0f, -5.0f}) {
    auto x = blank();
    for (int64_t i = 0; i < bs; ++i) x[i] = static_cast<float>(small(rng)) / 40.0f;
    x[3] = first;
    x[bs - 2] = -first;
    out.push_back({first > 0 ? "max tie positive first" : "max tie negative first", x});
  }
  {
    auto x = blank();
    for (int64_t i = 0; i < bs; ++i) x[i] = static_cast<float>(small(rng)) / 7.0f;
    x[5] = nan;
    out.push_back({"one NaN", x});
  }
  out.push_back({"all NaN", std::vector<float>(static_cast<size_t>(bs), nan)});
  for (const float v : {inf, -inf}) {
    auto x = blank();
    for (int64_t i = 0; i < bs; ++i) x[i] = static_cast<float>(small(rng));
    x[bs / 2] = v;
    out.push_back({v > 0 ? "+inf" : "-inf", x});
  }
  {
    // amax subnormal: 127 / amax overflows to infinity, 0 * inf is NaN.
    auto x = blank();
    for (int64_t i = 0; i < bs; i += 3) x[i] = static_cast<float>(small(rng)) * 1e-42f;
    x[1] = 1e-40f;
    out.push_back({"subnormal", x});
  }
  {
    auto x = blank();
    for (int64_t i = 0; i < bs; ++i) x[i] = static_cast<float>(small(rng)) * 2.5e36f;
    out.push_back({"huge", x});
  }
  {
    // Values a few ulps around k + 0.5 steps of a random scale.
    auto x = blank();
    const float step = 0.0371f;
    for (int64_t i = 0; i < bs; ++i) {
      float v = (static_cast<float>(small(rng)) + 0.5f) * step;
      for (int u = static_cast<int>(rng() % 5); u > 0; --u) v = std::nextafter(v, 0.0f);
      x[i] = v;
    }
    x[0] = 127.0f * step;
    out.push_back({"near ties", x});
  }
  return out;
}

std::string first_difference(const std::vector<uint8_t>& a, const uint8_t* b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return "first difference at byte " + std::to_string(i) + ": reference " +
             std::to_string(a[i]) + ", ARM " + std::to_string(b[i]);
    }
  }
  return "identical";
}

class ArmQuantizeAct : public ::testing::TestWithParam<TensorType> {
 protected:
  void SetUp() override {
    vdt_ = GetParam();
    if (std::string why = arm_testing::level_unavailable(CpuLevel::kNeon); !why.empty()) {
      GTEST_SKIP() << why;
    }
    fn_ = arm::arm_quantize_act_fn(vdt_, cpu_level());
    ASSERT_NE(fn_, nullptr);
  }

  // Quantizes x with both and compares bytes; the ARM output goes to an
  // odd address (activation buffers have no alignment promise).
  void expect_identical(const std::vector<float>& x, const std::string& what) {
    const auto n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> expected(activation_row_bytes(vdt_, n));
    reference_for(vdt_)(x.data(), n, expected.data());
    for (size_t offset : {0, 1, 3}) {
      OffsetBuffer got(std::vector<uint8_t>(expected.size(), 0xA5), offset);
      fn_(x.data(), n, got.data());
      EXPECT_EQ(std::memcmp(expected.data(), got.data(), expected.size()), 0)
          << what << ", output offset " << offset << ": " << first_difference(expected, got.data());
    }
  }

  TensorType vdt_{};
  arm::QuantizeActFn fn_ = nullptr;
};

TEST_P(ArmQuantizeAct, SameBytesAsReferenceOnRealisticRows) {
  const int64_t bs = block_of(vdt_);
  uint32_t seed = 77;
  for (int64_t nb : {1, 2, 3, 5, 17, 64}) {
    std::vector<float> x = testing::random_activations(static_cast<size_t>(nb * bs), ++seed);
    expect_identical(x, std::to_string(nb) + " blocks");
    // Wide dynamic range between blocks.
    for (int64_t i = 0; i < nb * bs; ++i) {
      x[i] *= std::ldexp(1.0f, static_cast<int>((i / bs) % 40) - 20);
    }
    expect_identical(x, std::to_string(nb) + " blocks, scaled");
  }
}

TEST_P(ArmQuantizeAct, SameBytesAsReferenceOnSpecialBlocks) {
  const int64_t bs = block_of(vdt_);
  std::vector<float> all;
  for (const SpecialBlock& b : special_blocks(bs, 99)) {
    expect_identical(b.x, b.name);
    all.insert(all.end(), b.x.begin(), b.x.end());
  }
  expect_identical(all, "all special blocks in one row");
}

INSTANTIATE_TEST_SUITE_P(Arm, ArmQuantizeAct, ::testing::ValuesIn(kActTypes),
                         [](const ::testing::TestParamInfo<TensorType>& info) {
                           return std::string(tensor_type_name(info.param));
                         });

TEST(ArmQuantizeActTable, OffersQuantizersFromNeonUp) {
  for (TensorType t : kActTypes) {
    EXPECT_EQ(arm::arm_quantize_act_fn(t, CpuLevel::kScalar), nullptr);
    EXPECT_NE(arm::arm_quantize_act_fn(t, CpuLevel::kNeon), nullptr);
    EXPECT_EQ(arm::arm_quantize_act_fn(t, CpuLevel::kNeon),
              arm::arm_quantize_act_fn(t, CpuLevel::kI8mm));
  }
  EXPECT_EQ(arm::arm_quantize_act_fn(TensorType::F16, CpuLevel::kNeon), nullptr);
}

}  // namespace
}  // namespace kazeia::kernels

#else  // not aarch64

namespace {

TEST(ArmQuantizeAct, SkippedOffAarch64) {
  GTEST_SKIP() << "ARM kernels are built only for aarch64; run scripts/test-arm.sh (qemu)";
}

}  // namespace

#endif
