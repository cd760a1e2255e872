// Small NEON helpers shared by the ARM kernel sources.
//
// Everything here is in an anonymous namespace on purpose. The including
// sources are compiled with different -march flags (baseline, +dotprod,
// +i8mm); an ordinary inline function would be emitted once per source and
// the linker would keep any one copy, possibly one compiled with
// instructions a lower level lacks. With internal linkage each source keeps
// its own copy.
//
// Loads go through byte vectors: weight rows come straight from a mapped
// file at any alignment, and a byte load makes no alignment promise.
#pragma once

#if !defined(__aarch64__)
#error "kernels/arm/neon_util.h is for aarch64 sources only"
#endif

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"

namespace kazeia::kernels::arm {
namespace {

inline float32x4_t load_f32x4(const uint8_t* p) { return vreinterpretq_f32_u8(vld1q_u8(p)); }
inline int8x16_t load_s8x16(const uint8_t* p) { return vreinterpretq_s8_u8(vld1q_u8(p)); }
inline int8x16_t load_s8x16(const int8_t* p) { return vld1q_s8(p); }

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// IEEE half -> float with the FCVT instruction: exact, the same value as
// fp16_to_fp32() from tensor/quant.h (a signalling NaN comes back quiet in
// both), but inline, which matters once per 32-element block.
inline float half_to_float(uint16_t h) {
  __fp16 f;
  std::memcpy(&f, &h, sizeof(f));
  return static_cast<float>(f);
}

// Four halves (e.g. the scales of four blocks) to a float vector.
inline float32x4_t halves_to_f32x4(uint16_t h0, uint16_t h1, uint16_t h2, uint16_t h3) {
  const uint16_t h[4] = {h0, h1, h2, h3};
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

// [sum(a), sum(b), sum(c), sum(d)]: the exact block sums of four integer
// dot-product accumulators, in one vector.
inline int32x4_t sum_lanes_4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

// How the reference adds a legacy block's integer sum, scaled by the two
// fp16 scales, to the running sum (ref/vec_dot_legacy.cpp):
//   Q4_0: fma(sumi * d_w, d_x, acc)       Q8_0: fma(d_w * d_x, sumi, acc)
// The two factors of the fused multiply-add, per lane.
enum class ScaleOrder { kWeightFirst, kProductOfScales };

// Whether a legacy format's block contribution is fused into the running
// sum (Q4_0, Q8_0: fma with the factors above) or added (Q5_0, Q4_1,
// Q5_1: sum + term).
enum class LegacyAdd { kFused, kPlain };

struct ScaledSums {
  float32x4_t a, b;  // the block's contribution is a * b, fused into the add
};
template <ScaleOrder kOrder>
inline ScaledSums scale_sums(float32x4_t sumi, float32x4_t dw, float32x4_t dx) {
  if constexpr (kOrder == ScaleOrder::kWeightFirst) return {vmulq_f32(sumi, dw), dx};
  return {vmulq_f32(dw, dx), sumi};
}

// A legacy block's contribution as the reference forms it
// (ref/vec_dot_legacy.cpp), lane by lane, from its float integer sum, the
// weight scales d_w (and offsets m_w) and the activation scales d_x (and
// sums s_x; both only read for kMin, Q4_1 / Q5_1):
//   Q4_0: sum = fma(sumi * d_w, d_x, sum)    Q8_0: sum = fma(d_w * d_x, sumi, sum)
//   Q5_0: sum += (d_w * d_x) * sumi          Q4_1 / Q5_1: sum += (d_w * d_x) * sumi + m_w * s_x
// kFused: the contribution is fma(a, b, sum); kPlain: sum + a.
struct LegacyTerms {
  float32x4_t a, b;
};
template <LegacyAdd kAdd, ScaleOrder kOrder, bool kMin>
inline LegacyTerms legacy_terms(float32x4_t fsum, float32x4_t dw, float32x4_t dx, float32x4_t mw, float32x4_t sx) {
  if constexpr (kAdd == LegacyAdd::kFused) {
    const ScaledSums s = scale_sums<kOrder>(fsum, dw, dx);
    return {s.a, s.b};
  } else if constexpr (kMin) {
    return {vaddq_f32(vmulq_f32(vmulq_f32(dw, dx), fsum), vmulq_f32(mw, sx)), fsum};
  } else {
    return {vmulq_f32(vmulq_f32(dw, dx), fsum), fsum};
  }
}

// Q4 nibbles of 16 bytes as signed 8-bit values: low (byte & 15) and high
// (byte >> 4) halves, each minus `offset` (8 for Q4_0, 0 for Q4_K).
inline int8x16_t low_nibbles(uint8x16_t bytes, int8_t offset) {
  return vsubq_s8(vreinterpretq_s8_u8(vandq_u8(bytes, vdupq_n_u8(0x0F))), vdupq_n_s8(offset));
}
inline int8x16_t high_nibbles(uint8x16_t bytes, int8_t offset) {
  return vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(bytes, 4)), vdupq_n_s8(offset));
}

// The 32 quants of one legacy block as two 16-byte halves: elements 0-15
// and 16-31.
struct BlockQuants {
  int8x16_t lo, hi;
};
inline BlockQuants q8_0_quants(const uint8_t* block) {
  const uint8_t* qs = block + offsetof(BlockQ8_0, qs);
  return {load_s8x16(qs), load_s8x16(qs + 16)};
}

// Q4_0 / Q4_1: element j < 16 is the low nibble of qs[j], element j + 16
// the high nibble; Q4_0's minus 8.
template <size_t kQs, int8_t kOffset>
inline BlockQuants q4_quants(const uint8_t* block) {
  const uint8x16_t qs = vld1q_u8(block + kQs);
  return {low_nibbles(qs, kOffset), high_nibbles(qs, kOffset)};
}

// 16 in the bytes of `bytes` that have any bit of `mask` set, else 0: a
// quant's fifth bit (Q5_0, Q5_1, Q5_K) from its packed bit field.
inline uint8x16_t bit_as_16(uint8x16_t bytes, uint8x16_t mask) {
  return vandq_u8(vtstq_u8(bytes, mask), vdupq_n_u8(0x10));
}

}  // namespace
}  // namespace kazeia::kernels::arm
