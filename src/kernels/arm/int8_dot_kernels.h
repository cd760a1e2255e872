// The quantized row dots (Q4_0, Q8_0 x Q8_0; Q4_K, Q6_K x Q8_K), written
// once over an 8-bit multiply-accumulate primitive and instantiated twice:
// vec_dot_int8_neon.cpp with widening multiplies (any aarch64),
// vec_dot_int8_dotprod.cpp with SDOT. Include only from those two sources.
//
// The primitive, `Dot::accumulate(acc, a, b)`, adds the 16 products a[i]*b[i]
// of two int8x16 vectors into the four int32 lanes of acc, in a lane layout
// of its choosing; the kernels only ever use the total over the lanes, so
// the integer sums are exact and identical for both instantiations.
//
// Integer sums stay exact as in the reference (every block or sub-block sum,
// times its integer scale, fits easily in int32). The legacy formats then
// follow the reference's float arithmetic exactly; the K-quants apply the
// scales once per super-block to the whole integer sum (the reference keeps
// eight lane sums), so their float rounding differs slightly.
//
// Like neon_util.h, everything is in an anonymous namespace so each source
// keeps its own copy compiled with its own -march flags.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstdint>

#include "kernels/arm/neon_util.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm {
namespace {

// Sum of the 32 products of one legacy block: two 16-byte halves.
template <typename Dot>
inline int32x4_t dot_block32(int8x16_t w_lo, int8x16_t w_hi, const int8_t* x_qs) {
  int32x4_t acc = vdupq_n_s32(0);
  acc = Dot::accumulate(acc, w_lo, vld1q_s8(x_qs));
  acc = Dot::accumulate(acc, w_hi, vld1q_s8(x_qs + 16));
  return acc;
}

// One Q8_0 weight block as two 16-byte halves of quants, and its scale.
struct Q8_0Quants {
  int8x16_t lo, hi;
};
inline Q8_0Quants q8_0_quants(const uint8_t* block) {
  const uint8_t* qs = block + offsetof(BlockQ8_0, qs);
  return {load_s8x16(qs), load_s8x16(qs + 16)};
}

// One Q4_0 weight block: element j < 16 is the low nibble of qs[j], element
// j + 16 the high nibble, both minus 8.
inline Q8_0Quants q4_0_quants(const uint8_t* block) {
  const uint8x16_t qs = vld1q_u8(block + offsetof(BlockQ4_0, qs));
  return {low_nibbles(qs, 8), high_nibbles(qs, 8)};
}

// Shared body of the Q4_0 and Q8_0 dots. Four blocks per step: their exact
// integer sums land in one vector (sum_lanes_4) and are scaled in one go;
// the four block results are then fused into the running sum one after the
// other. That is the reference's float arithmetic operation for operation,
// so the result is ref::vec_dot_q4_0 / _q8_0 bit for bit (given no other
// contraction into fused multiply-adds, see cmake/ArmCrossBuild.cmake). The
// serial float fma costs little next to a block's integer work.
template <typename Dot, size_t kBlockBytes, Q8_0Quants (*Unpack)(const uint8_t*),
          ScaleOrder kOrder>
float dot_legacy_q8_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x = static_cast<const BlockQ8_0*>(x_row);
  const int64_t nb = n / kQK;
  auto w_block = [&](int64_t ib) { return w_row + ib * static_cast<int64_t>(kBlockBytes); };
  auto w_scale = [&](int64_t ib) { return load_u16(w_block(ib)); };  // d is the first field

  float sumf = 0.0f;
  int64_t ib = 0;
  for (; ib + 4 <= nb; ib += 4) {
    int32x4_t sums[4];
    for (int k = 0; k < 4; ++k) {
      const Q8_0Quants w = Unpack(w_block(ib + k));
      sums[k] = dot_block32<Dot>(w.lo, w.hi, x[ib + k].qs);
    }
    const int32x4_t sumi = sum_lanes_4(sums[0], sums[1], sums[2], sums[3]);
    const float32x4_t dw =
        halves_to_f32x4(w_scale(ib), w_scale(ib + 1), w_scale(ib + 2), w_scale(ib + 3));
    const float32x4_t dx = halves_to_f32x4(x[ib].d, x[ib + 1].d, x[ib + 2].d, x[ib + 3].d);
    const ScaledSums s = scale_sums<kOrder>(vcvtq_f32_s32(sumi), dw, dx);
    sumf = std::fma(vgetq_lane_f32(s.a, 0), vgetq_lane_f32(s.b, 0), sumf);
    sumf = std::fma(vgetq_lane_f32(s.a, 1), vgetq_lane_f32(s.b, 1), sumf);
    sumf = std::fma(vgetq_lane_f32(s.a, 2), vgetq_lane_f32(s.b, 2), sumf);
    sumf = std::fma(vgetq_lane_f32(s.a, 3), vgetq_lane_f32(s.b, 3), sumf);
  }
  for (; ib < nb; ++ib) {
    const Q8_0Quants w = Unpack(w_block(ib));
    const float sumi = static_cast<float>(vaddvq_s32(dot_block32<Dot>(w.lo, w.hi, x[ib].qs)));
    const float dw = half_to_float(w_scale(ib));
    const float dx = half_to_float(x[ib].d);
    sumf = kOrder == ScaleOrder::kWeightFirst ? std::fma(sumi * dw, dx, sumf) : std::fma(dw * dx, sumi, sumf);
  }
  return sumf;
}

template <typename Dot>
float dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy_q8_0<Dot, sizeof(BlockQ4_0), q4_0_quants, ScaleOrder::kWeightFirst>(n, w_row,
                                                                                         x_row);
}

template <typename Dot>
float dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy_q8_0<Dot, sizeof(BlockQ8_0), q8_0_quants, ScaleOrder::kProductOfScales>(
      n, w_row, x_row);
}

// ------------------------------------------------------------------ K-quants

// The eight 6-bit scales and mins of a Q4_K block (the same unpacking as
// scale_min_k4() in tensor/blocks.h, for all eight sub-blocks at once).
struct ScalesMins {
  uint8_t scale[8];
  int16_t min[8];
};
inline ScalesMins q4_K_scales_mins(const uint8_t* s) {
  ScalesMins r;
  for (int j = 0; j < 4; ++j) {
    r.scale[j] = s[j] & 63;
    r.min[j] = s[j + 4] & 63;
    r.scale[j + 4] = static_cast<uint8_t>((s[j + 8] & 0x0F) | ((s[j] >> 6) << 4));
    r.min[j + 4] = static_cast<int16_t>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
  }
  return r;
}

// sum over the 8 sub-blocks of min[s] * (sum of the 32 activation quants of
// sub-block s) = the reference's mins_term (bsums hold sums of 16).
inline int32_t q4_K_mins_term(const BlockQ8_K& x, const int16_t min[8]) {
  const int16x8_t bsums = vpaddq_s16(vld1q_s16(x.bsums), vld1q_s16(x.bsums + 8));
  const int16x8_t mins = vld1q_s16(min);
  const int32x4_t prod = vmlal_s16(vmull_s16(vget_low_s16(bsums), vget_low_s16(mins)),
                                   vget_high_s16(bsums), vget_high_s16(mins));
  return vaddvq_s32(prod);
}

// Q4_K x Q8_K. Per super-block: isum = sum_s scale_s * (q8 . q4 over
// sub-block s), exact in int32; then
//   sumf += (d_w * d_x) * isum,   summs += (dmin_w * d_x) * mins_term.
template <typename Dot>
float dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x = static_cast<const BlockQ8_K*>(x_row);
  float sum_scaled = 0.0f;
  float sum_mins = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const uint8_t* w = w_row + ib * static_cast<int64_t>(sizeof(BlockQ4_K));
    const BlockQ8_K& xb = x[ib];
    const ScalesMins sm = q4_K_scales_mins(w + offsetof(BlockQ4_K, scales));
    const uint8_t* qs = w + offsetof(BlockQ4_K, qs);

    int32x4_t isum = vdupq_n_s32(0);
    // 32 bytes of qs hold sub-block 2c (low nibbles) and 2c + 1 (high).
    for (int c = 0; c < 4; ++c) {
      const uint8x16_t q0 = vld1q_u8(qs + 32 * c);
      const uint8x16_t q1 = vld1q_u8(qs + 32 * c + 16);
      const int8_t* xq = xb.qs + 64 * c;
      int32x4_t lo = vdupq_n_s32(0);
      lo = Dot::accumulate(lo, low_nibbles(q0, 0), vld1q_s8(xq));
      lo = Dot::accumulate(lo, low_nibbles(q1, 0), vld1q_s8(xq + 16));
      int32x4_t hi = vdupq_n_s32(0);
      hi = Dot::accumulate(hi, high_nibbles(q0, 0), vld1q_s8(xq + 32));
      hi = Dot::accumulate(hi, high_nibbles(q1, 0), vld1q_s8(xq + 48));
      isum = vmlaq_n_s32(isum, lo, sm.scale[2 * c]);
      isum = vmlaq_n_s32(isum, hi, sm.scale[2 * c + 1]);
    }
    const float d = half_to_float(load_u16(w + offsetof(BlockQ4_K, d))) * xb.d;
    const float dmin = half_to_float(load_u16(w + offsetof(BlockQ4_K, dmin))) * xb.d;
    sum_scaled += d * static_cast<float>(vaddvq_s32(isum));
    sum_mins += dmin * static_cast<float>(q4_K_mins_term(xb, sm.min));
  }
  return sum_scaled - sum_mins;
}

// Q6_K x Q8_K. A half (128 elements) is 64 bytes of ql (low 4 bits) and 32
// of qh (2 high bits each); in 16-element chunks k = 0..7 (one sub-block of
// 16 each), chunk k takes
//   ql bytes 16 * (k % 4) .. +15, nibble k < 4 ? low : high,
//   qh bytes 16 * (k % 2) .. +15, bit pair k / 2 (bits 2(k/2), 2(k/2)+1),
// which is the element order documented at BlockQ6_K. Values are q - 32.
template <typename Dot>
float dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x = static_cast<const BlockQ8_K*>(x_row);
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  const uint8x16_t bits45 = vdupq_n_u8(0x30);
  const int8x16_t bias = vdupq_n_s8(32);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const uint8_t* w = w_row + ib * static_cast<int64_t>(sizeof(BlockQ6_K));
    const BlockQ8_K& xb = x[ib];
    const auto* scales = reinterpret_cast<const int8_t*>(w + offsetof(BlockQ6_K, scales));

    int32x4_t isum = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = w + offsetof(BlockQ6_K, ql) + 64 * h;
      const uint8_t* qh = w + offsetof(BlockQ6_K, qh) + 32 * h;
      const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16);
      const uint8x16_t l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
      const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
      // The high bit pair of each chunk, moved to bits 4..5.
      const uint8x16_t hb[4][2] = {
          {vshlq_n_u8(h0, 4), vshlq_n_u8(h1, 4)},  // bits 0-1
          {vshlq_n_u8(h0, 2), vshlq_n_u8(h1, 2)},  // bits 2-3
          {h0, h1},                                // bits 4-5
          {vshrq_n_u8(h0, 2), vshrq_n_u8(h1, 2)},  // bits 6-7
      };
      const uint8x16_t lows[4] = {l0, l1, l2, l3};
      const int8_t* xq = xb.qs + 128 * h;
      for (int k = 0; k < 8; ++k) {
        const uint8x16_t l = lows[k % 4];
        const uint8x16_t nibble = k < 4 ? vandq_u8(l, low4) : vshrq_n_u8(l, 4);
        const uint8x16_t q = vorrq_u8(nibble, vandq_u8(hb[k / 2][k % 2], bits45));
        const int8x16_t v = vsubq_s8(vreinterpretq_s8_u8(q), bias);
        const int32x4_t dot = Dot::accumulate(vdupq_n_s32(0), v, vld1q_s8(xq + 16 * k));
        isum = vmlaq_n_s32(isum, dot, scales[8 * h + k]);
      }
    }
    const float d = half_to_float(load_u16(w + offsetof(BlockQ6_K, d))) * xb.d;
    sumf += d * static_cast<float>(vaddvq_s32(isum));
  }
  return sumf;
}

}  // namespace
}  // namespace kazeia::kernels::arm
