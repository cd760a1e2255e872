// fp16 / bf16 conversions: known bit patterns, ties to even, specials, and
// exhaustive round trips. Independent references: exact ldexp arithmetic for
// fp16 -> fp32, and the compiler's _Float16 (libgcc soft-float, IEEE round to
// nearest even) for fp32 -> fp16 where available.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "tensor/quant.h"

namespace kazeia {
namespace {

float bits_to_float(uint32_t b) { return std::bit_cast<float>(b); }

TEST(Fp16, KnownValuesToHalf) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(fp32_to_fp16(0.5f), 0x3800);
  EXPECT_EQ(fp32_to_fp16(0.1f), 0x2E66);
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);          // largest finite half
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7BFF);          // below the halfway point
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);          // tie with 65536: to even = inf
  EXPECT_EQ(fp32_to_fp16(-70000.0f), 0xFC00);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(fp32_to_fp16(1e-10f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xFC00);
}

TEST(Fp16, TiesToEven) {
  // 1 + 2^-11 is halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01).
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02 (even).
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the first tie rounds up.
  EXPECT_EQ(fp32_to_fp16(bits_to_float(0x3F801001)), 0x3C01);
  // Just below the second tie rounds down.
  EXPECT_EQ(fp32_to_fp16(bits_to_float(0x3F802FFF)), 0x3C01);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0;
  // 3 * 2^-25 is halfway between 2^-24 (odd) and 2 * 2^-24 -> 0x0002.
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(fp32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(fp32_to_fp16(5 * std::ldexp(1.0f, -25)), 0x0002);
  // Rounding up out of the subnormal range gives the smallest normal.
  EXPECT_EQ(fp32_to_fp16(std::ldexp(2047.0f, -25)), 0x0400);
  // Rounding up across a binade: 2047/1024 * 2^0 + a bit -> 2.0.
  EXPECT_EQ(fp32_to_fp16(bits_to_float(0x3FFFF000)), 0x4000);
}

TEST(Fp16, NaNStaysNaN) {
  const uint16_t qnan = fp32_to_fp16(std::nanf(""));
  EXPECT_EQ(qnan & 0x7C00, 0x7C00);
  EXPECT_NE(qnan & 0x03FF, 0);
  EXPECT_EQ(qnan & 0x0200, 0x0200);  // quiet
  // A signalling NaN whose payload is only in the low 13 bits must not turn into inf.
  const uint16_t snan = fp32_to_fp16(bits_to_float(0xFF800001));
  EXPECT_EQ(snan, 0xFE00);
  EXPECT_EQ(fp32_to_fp16(bits_to_float(0x7FC02000)), 0x7E01);  // payload top bits kept
}

TEST(Fp16, KnownValuesToFloat) {
  EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), 5.9604644775390625e-8f);  // 2^-24
  EXPECT_EQ(fp16_to_fp32(0x03FF), 6.0975551605224609375e-5f);  // 1023 * 2^-24
  EXPECT_EQ(fp16_to_fp32(0x0400), 6.103515625e-5f);  // 2^-14
  EXPECT_EQ(fp16_to_fp32(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_fp32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7C01)));
  const float nz = fp16_to_fp32(0x8000);
  EXPECT_EQ(nz, 0.0f);
  EXPECT_TRUE(std::signbit(nz));
}

// Every half value: fp16 -> fp32 equals the exact value (independent ldexp
// arithmetic), and fp32 -> fp16 gives the half back (NaNs: same sign and
// payload, quiet bit set).
TEST(Fp16, ExhaustiveRoundTrip) {
  int nans = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t hv = static_cast<uint16_t>(h);
    const float f = fp16_to_fp32(hv);
    const int exp = (h >> 10) & 0x1F;
    const int mant = h & 0x3FF;
    const bool neg = (h & 0x8000) != 0;
    if (exp == 31 && mant != 0) {
      ++nans;
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(std::signbit(f), neg) << std::hex << h;
      ASSERT_EQ(fp32_to_fp16(f), hv | 0x0200) << std::hex << h;
      continue;
    }
    double expected;
    if (exp == 31) {
      expected = INFINITY;
    } else if (exp == 0) {
      expected = std::ldexp(static_cast<double>(mant), -24);
    } else {
      expected = std::ldexp(static_cast<double>(1024 + mant), exp - 25);
    }
    if (neg) expected = -expected;
    ASSERT_EQ(f, static_cast<float>(expected)) << std::hex << h;
    ASSERT_EQ(std::signbit(f), neg) << std::hex << h;
    ASSERT_EQ(fp32_to_fp16(f), hv) << std::hex << h;
  }
  EXPECT_EQ(nans, 2 * 1023);
}

#if defined(__FLT16_MAX__) && (defined(__clang__) || defined(__x86_64__) || __GNUC__ >= 13)
uint16_t reference_fp16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

void expect_matches_compiler(uint32_t bits) {
  const float f = bits_to_float(bits);
  if (std::isnan(f)) return;
  ASSERT_EQ(fp32_to_fp16(f), reference_fp16(f)) << "float bits 0x" << std::hex << bits;
}

// Every float of the binade just below the smallest normal half (exponent
// 112: all subnormal rounding cases), every third float of the binades of 1
// and of the overflow threshold, a sample of the other binades in and around
// the half range (both signs), plus 1M random floats, against the compiler's
// _Float16.
TEST(Fp16, MatchesCompilerFloat16) {
  for (uint32_t m = 0; m < (1u << 23); ++m) expect_matches_compiler((112u << 23) | m);
  for (uint32_t exp : {127u, 142u}) {
    for (uint32_t m = 0; m < (1u << 23); m += 3) expect_matches_compiler((exp << 23) | m);
  }
  for (uint32_t exp :
       {0u, 1u, 100u, 101u, 102u, 103u, 110u, 111u, 113u, 114u, 127u, 141u, 142u, 143u}) {
    for (uint32_t m = 0; m < (1u << 23); m += 61) {
      expect_matches_compiler((exp << 23) | m);
      expect_matches_compiler(0x80000000u | (exp << 23) | m);
    }
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 1000000; ++i) expect_matches_compiler(rng());
}
#else
TEST(Fp16, MatchesCompilerFloat16) {
  GTEST_SKIP() << "this compiler has no _Float16; the exhaustive and known-value tests still run";
}
#endif

TEST(Bf16, KnownValues) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(fp32_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(fp32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(fp32_to_bf16(-INFINITY), 0xFF80);
  // Ties to even: 0x3F808000 is halfway between 0x3F80 (even) and 0x3F81.
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x3F808000)), 0x3F80);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x3F818000)), 0x3F82);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x3F808001)), 0x3F81);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x3F807FFF)), 0x3F80);
  // The largest float rounds to infinity.
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x7F7FFFFF)), 0x7F80);
  // Subnormals are rounded, not flushed (current ggml).
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x00018000)), 0x0002);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x00008000)), 0x0000);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x00010000)), 0x0001);
  // NaNs stay NaNs and become quiet, even when the payload is in the low bits only.
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x7F800001)), 0x7FC0);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0xFF800001)), 0xFFC0);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x7FFFFFFF)), 0x7FFF);

  EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_fp32(0xC040), -3.0f);
  EXPECT_EQ(bf16_to_fp32(0x7F80), INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(0x7FC0)));
}

TEST(Bf16, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t hv = static_cast<uint16_t>(h);
    const float f = bf16_to_fp32(hv);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), h << 16);
    const bool nan = ((h & 0x7F80) == 0x7F80) && (h & 0x7F);
    if (nan) {
      ASSERT_EQ(fp32_to_bf16(f), hv | 0x40) << std::hex << h;
    } else {
      ASSERT_EQ(fp32_to_bf16(f), hv) << std::hex << h;
    }
  }
}

// Random floats against a direct re-derivation of round-to-nearest-even on
// the top 16 bits (written differently from the library: compare the
// discarded half against 0x8000).
TEST(Bf16, RandomAgainstDirectRounding) {
  std::mt19937 rng(99);
  for (int i = 0; i < 2000000; ++i) {
    const uint32_t b = rng();
    const float f = bits_to_float(b);
    if (std::isnan(f)) continue;
    uint32_t top = b >> 16;
    const uint32_t low = b & 0xFFFF;
    if (low > 0x8000 || (low == 0x8000 && (top & 1))) ++top;
    ASSERT_EQ(fp32_to_bf16(f), static_cast<uint16_t>(top)) << std::hex << b;
  }
}

}  // namespace
}  // namespace kazeia
