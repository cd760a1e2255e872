#include "base/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "common/scoped_env.h"

namespace kazeia {
namespace {

std::vector<std::string>* g_cpu_log_lines = nullptr;
void capture_cpu_log(LogLevel, std::string_view line) { g_cpu_log_lines->emplace_back(line); }

// Captures warnings and restores KAZEIA_CPU_LEVEL and the cached detection.
class CpuFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.emplace("KAZEIA_CPU_LEVEL", nullptr);
    saved_level_ = log_level();
    set_log_level(LogLevel::kWarn);
    g_cpu_log_lines = &lines_;
    saved_sink_ = set_log_sink(capture_cpu_log);
  }
  void TearDown() override {
    set_log_sink(saved_sink_);
    g_cpu_log_lines = nullptr;
    set_log_level(saved_level_);
    env_.reset();  // KAZEIA_CPU_LEVEL as it was
    redetect_cpu_features_for_testing();
  }
  const CpuFeatures& detect_with(const char* value) {
    setenv("KAZEIA_CPU_LEVEL", value, 1);
    return redetect_cpu_features_for_testing();
  }
  bool warned() const {
    for (const auto& l : lines_)
      if (l.find("warn") != std::string::npos && l.find("KAZEIA_CPU_LEVEL") != std::string::npos) return true;
    return false;
  }

  std::vector<std::string> lines_;
  std::optional<testing::ScopedEnv> env_;
  LogLevel saved_level_ = LogLevel::kWarn;
  LogSink saved_sink_ = nullptr;
};

#if defined(__x86_64__)
const std::vector<CpuLevel> kArchLevels = {CpuLevel::kScalar, CpuLevel::kAvx2, CpuLevel::kAvx512};
const char* kOtherArchLevel = "neon";
#elif defined(__aarch64__)
const std::vector<CpuLevel> kArchLevels = {CpuLevel::kScalar, CpuLevel::kNeon, CpuLevel::kDotprod,
                                           CpuLevel::kI8mm};
const char* kOtherArchLevel = "avx2";
#else
const std::vector<CpuLevel> kArchLevels = {CpuLevel::kScalar};
const char* kOtherArchLevel = "avx2";
#endif

// Flags agree with the level they came with.
void expect_consistent(const CpuFeatures& f) {
  EXPECT_LE(f.level, f.hw_level);
#if defined(__x86_64__)
  EXPECT_FALSE(f.neon || f.dotprod || f.i8mm);
  if (f.level >= CpuLevel::kAvx2) {
    EXPECT_TRUE(f.avx && f.avx2 && f.fma && f.f16c && f.bmi2);
  }
  if (f.level >= CpuLevel::kAvx512) {
    EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni);
  } else {
    EXPECT_FALSE(f.avx512f || f.avx512bw || f.avx512vnni || f.amx_int8 || f.avx512bf16);
  }
  if (f.level < CpuLevel::kAvx2) {
    EXPECT_FALSE(f.avx || f.avx2 || f.fma || f.avx_vnni);
  }
  // AVX-512 without AVX2 does not exist; the masking must preserve that.
  if (f.avx512f) {
    EXPECT_TRUE(f.avx2);
  }
  if (f.avx2 || f.fma || f.f16c) {
    EXPECT_TRUE(f.avx);
  }
#elif defined(__aarch64__)
  EXPECT_FALSE(f.avx || f.avx2 || f.avx512f);
  if (f.level >= CpuLevel::kNeon) {
    EXPECT_TRUE(f.neon);
  }
  if (f.level >= CpuLevel::kDotprod) {
    EXPECT_TRUE(f.dotprod && f.fp16);
  }
  if (f.level >= CpuLevel::kI8mm) {
    EXPECT_TRUE(f.i8mm);
  }
  if (f.level < CpuLevel::kI8mm) {
    EXPECT_FALSE(f.i8mm);
  }
  if (f.level < CpuLevel::kDotprod) {
    EXPECT_FALSE(f.dotprod);
  }
#endif
}

TEST_F(CpuFeaturesTest, DetectionIsConsistentAndCached) {
  const CpuFeatures& f = redetect_cpu_features_for_testing();
  EXPECT_EQ(f.level, f.hw_level);  // no override in the environment
  expect_consistent(f);
  EXPECT_EQ(&cpu_features(), &f);
  EXPECT_EQ(cpu_level(), f.level);
  bool known = false;
  for (CpuLevel l : kArchLevels) known |= (l == f.hw_level);
  EXPECT_TRUE(known) << cpu_level_name(f.hw_level);
  std::printf("cpu level: %s; features: %s\n", cpu_level_name(f.level), cpu_features_string(f).c_str());
  EXPECT_TRUE(lines_.empty());
}

TEST_F(CpuFeaturesTest, HardwareDetectionIsDeterministic) {
  CpuFeatures a = detect_cpu_features_hw(), b = detect_cpu_features_hw();
  EXPECT_EQ(cpu_features_string(a), cpu_features_string(b));
  EXPECT_EQ(a.hw_level, b.hw_level);
}

TEST_F(CpuFeaturesTest, EnvForcesEveryLowerLevel) {
  const CpuLevel hw = detect_cpu_features_hw().hw_level;
  for (CpuLevel want : kArchLevels) {
    if (want > hw) continue;
    SCOPED_TRACE(cpu_level_name(want));
    const CpuFeatures& f = detect_with(cpu_level_name(want));
    EXPECT_EQ(f.level, want);
    EXPECT_EQ(f.hw_level, hw);
    EXPECT_EQ(cpu_level(), want);
    expect_consistent(f);
  }
  EXPECT_FALSE(warned());
  const CpuFeatures& scalar = detect_with("SCALAR");  // case-insensitive
  EXPECT_EQ(scalar.level, CpuLevel::kScalar);
#if defined(__x86_64__) || defined(__aarch64__)
  // Forced scalar clears every SIMD flag (SSE4.2 is baseline, not a level).
  std::string s = cpu_features_string(scalar);
  EXPECT_TRUE(s.empty() || s == "SSE4.2") << s;
#endif
}

TEST_F(CpuFeaturesTest, EnvNeverRaisesTheLevel) {
  const CpuLevel hw = detect_cpu_features_hw().hw_level;
  for (CpuLevel want : kArchLevels) {
    if (want <= hw) continue;
    lines_.clear();
    const CpuFeatures& f = detect_with(cpu_level_name(want));
    EXPECT_EQ(f.level, hw) << cpu_level_name(want);
    EXPECT_TRUE(warned());
  }
  // Whatever this machine has, a scalar-only CPU asked for the top level stays scalar.
  CpuFeatures none;
  lines_.clear();
  CpuFeatures f = apply_cpu_level_override(none, cpu_level_name(kArchLevels.back()));
  EXPECT_EQ(f.level, CpuLevel::kScalar);
  if (kArchLevels.size() > 1) {
    EXPECT_TRUE(warned());
  }
}

TEST_F(CpuFeaturesTest, UnknownOrForeignValuesAreIgnoredWithWarning) {
  const CpuLevel hw = detect_cpu_features_hw().hw_level;
  for (const char* value : {"turbo", "avx3", "AVX-512", "1", kOtherArchLevel}) {
    lines_.clear();
    const CpuFeatures& f = detect_with(value);
    EXPECT_EQ(f.level, hw) << value;
    EXPECT_TRUE(warned()) << value;
  }
  lines_.clear();
  EXPECT_EQ(detect_with("").level, hw);  // empty: no request, no warning
  EXPECT_TRUE(lines_.empty());
}

TEST_F(CpuFeaturesTest, OverrideMasksFlagsAboveTheLevel) {
  // A synthetic Sapphire Rapids-like x86 CPU and a synthetic Neoverse V2-like
  // ARM CPU: the masking rules hold whatever this machine is.
  CpuFeatures x86;
  x86.sse42 = x86.avx = x86.avx2 = x86.fma = x86.f16c = x86.bmi2 = true;
  x86.avx512f = x86.avx512bw = x86.avx512vl = x86.avx512dq = x86.avx512vnni = true;
  x86.avx512bf16 = x86.avx_vnni = x86.amx_tile = x86.amx_int8 = true;
  x86.hw_level = x86.level = CpuLevel::kAvx512;
  CpuFeatures arm;
  arm.neon = arm.dotprod = arm.i8mm = arm.fp16 = arm.bf16 = arm.sve = true;
  arm.hw_level = arm.level = CpuLevel::kI8mm;
#if defined(__x86_64__)
  CpuFeatures f = apply_cpu_level_override(x86, "avx2");
  EXPECT_EQ(f.level, CpuLevel::kAvx2);
  EXPECT_EQ(cpu_features_string(f), "SSE4.2 AVX AVX2 FMA F16C BMI2 AVX_VNNI");
  f = apply_cpu_level_override(x86, "scalar");
  EXPECT_EQ(cpu_features_string(f), "SSE4.2");
  f = apply_cpu_level_override(x86, "avx512");
  EXPECT_EQ(cpu_features_string(f), cpu_features_string(x86));
  (void)arm;
#elif defined(__aarch64__)
  CpuFeatures f = apply_cpu_level_override(arm, "dotprod");
  EXPECT_EQ(f.level, CpuLevel::kDotprod);
  EXPECT_EQ(cpu_features_string(f), "NEON DOTPROD FP16");
  f = apply_cpu_level_override(arm, "neon");
  EXPECT_EQ(cpu_features_string(f), "NEON");
  f = apply_cpu_level_override(arm, "scalar");
  EXPECT_EQ(cpu_features_string(f), "");
  (void)x86;
#endif
  EXPECT_FALSE(warned());
}

TEST(CpuLevel, NamesRoundTrip) {
  for (CpuLevel l : {CpuLevel::kScalar, CpuLevel::kAvx2, CpuLevel::kAvx512, CpuLevel::kNeon,
                     CpuLevel::kDotprod, CpuLevel::kI8mm}) {
    auto parsed = parse_cpu_level(cpu_level_name(l));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, l);
  }
  EXPECT_EQ(parse_cpu_level("Avx512"), CpuLevel::kAvx512);
  EXPECT_FALSE(parse_cpu_level("").has_value());
  EXPECT_FALSE(parse_cpu_level("sse").has_value());
  // Ordered within an architecture.
  EXPECT_LT(CpuLevel::kScalar, CpuLevel::kAvx2);
  EXPECT_LT(CpuLevel::kAvx2, CpuLevel::kAvx512);
  EXPECT_LT(CpuLevel::kScalar, CpuLevel::kNeon);
  EXPECT_LT(CpuLevel::kNeon, CpuLevel::kDotprod);
  EXPECT_LT(CpuLevel::kDotprod, CpuLevel::kI8mm);
}

}  // namespace
}  // namespace kazeia
