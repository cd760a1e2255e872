// IEEE binary16 and bfloat16 conversions, in plain integer arithmetic so the
// result does not depend on the host's F16C / FP16 support or rounding mode.
//
// fp32 -> fp16 rounds to nearest, ties to even, as F16C's VCVTPS2PH with
// imm8 = 0 (what ggml's GGML_FP32_TO_FP16 compiles to on x86): subnormal
// halves are produced, values from 65520 up become infinity, and a NaN stays
// a NaN of the same sign whose top 10 payload bits are kept and whose quiet
// bit is set.
//
// fp16 -> fp32 is exact; a signalling NaN comes back quiet (as F16C does).
//
// fp32 -> bf16 is ggml's GGML_FP32_TO_BF16: NaN -> (bits >> 16) | 0x40 (kept
// NaN, forced quiet), everything else rounded to nearest even by adding
// 0x7fff + lsb (so subnormals are rounded, not flushed, and values past the
// largest bf16 become infinity). bf16 -> fp32 is a shift.
#include <bit>
#include <cstdint>

#include "tensor/quant.h"

namespace kazeia {

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    // Infinity (mant == 0) or NaN; a NaN is returned quiet.
    bits = sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u);
  } else if (exp != 0) {
    // Normal: rebias the exponent from 15 to 127.
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half mant * 2^-24: normalize so the leading 1 sits at bit 10.
    int e = -14;  // exponent of the implicit bit position
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= 0x3ffu;
    bits = sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

namespace {

// Shifts m right by `shift` bits (1..31), rounding to nearest, ties to even.
uint32_t shift_round_even(uint32_t m, int shift) {
  const uint32_t kept = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (kept & 1u))) return kept + 1u;
  return kept;
}

}  // namespace

uint16_t fp32_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;

  if (abs > 0x7f800000u) {  // NaN: keep the top payload bits, force quiet
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  if (abs >= 0x477ff000u) {  // >= 65520 (the tie above 65504 rounds to even = inf), or inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (abs >= 0x38800000u) {  // >= 2^-14: a normal half
    // Rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits;
    // a carry out of the mantissa correctly bumps the exponent.
    const uint32_t rebased = abs - (112u << 23);
    return static_cast<uint16_t>(sign | shift_round_even(rebased, 13));
  }
  // Below the smallest normal half: the result is a subnormal (or zero),
  // round(value / 2^-24). value = m * 2^(e - 150) with the implicit bit in m.
  const int e = static_cast<int>(abs >> 23);
  if (e < 102) return sign;  // value < 2^-25: rounds to zero (2^-25 itself is a tie to 0)
  const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  const int shift = 126 - e;  // 14..24
  return static_cast<uint16_t>(sign | shift_round_even(m, shift));
}

float bf16_to_fp32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it a NaN, quiet
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  return static_cast<uint16_t>((bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16);
}

}  // namespace kazeia
