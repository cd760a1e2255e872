// The quantized row dots (Q4_0, Q5_0, Q8_0 x Q8_0; Q4_1, Q5_1 x Q8_1;
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K x Q8_K), written once over an 8-bit
// multiply-accumulate primitive and instantiated twice:
// vec_dot_int8_neon.cpp with widening multiplies (any aarch64),
// vec_dot_int8_dotprod.cpp with SDOT. Include only from those two sources.
//
// The primitive, `Dot::accumulate(acc, a, b)`, adds the 16 products a[i]*b[i]
// of two int8x16 vectors into the four int32 lanes of acc, in a lane layout
// of its choosing; the kernels only ever use the total over the lanes, so
// the integer sums are exact and identical for both instantiations.
//
// Integer sums stay exact as in the reference (every block or sub-block sum,
// times its integer scale, fits easily in int32). The legacy formats and
// Q2_K then follow the reference's float arithmetic exactly; the other
// K-quants apply the scales once per super-block to the whole integer sum
// (the reference keeps eight lane sums), so their float rounding differs
// slightly.
//
// Like neon_util.h, everything is in an anonymous namespace so each source
// keeps its own copy compiled with its own -march flags.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/arm/neon_util.h"
#include "kernels/ref/vec_dot.h"
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

// Q5_0 / Q5_1: the Q4 nibbles plus a fifth bit (16) per element, element
// j's in bit j of the little-endian 32-bit qh; Q5_0's minus 16.
template <size_t kQh, size_t kQs, int8_t kOffset>
inline BlockQuants q5_quants(const uint8_t* block) {
  static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bit = vld1q_u8(kBit);
  const uint8_t* qh = block + kQh;
  // Elements j < 16 read qh bytes 0 and 1, elements 16 + j bytes 2 and 3.
  const uint8x16_t h_lo = bit_as_16(vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1])), bit);
  const uint8x16_t h_hi = bit_as_16(vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3])), bit);
  const uint8x16_t qs = vld1q_u8(block + kQs);
  const uint8x16_t lo = vorrq_u8(vandq_u8(qs, vdupq_n_u8(0x0F)), h_lo);
  const uint8x16_t hi = vorrq_u8(vshrq_n_u8(qs, 4), h_hi);
  return {vsubq_s8(vreinterpretq_s8_u8(lo), vdupq_n_s8(kOffset)),
          vsubq_s8(vreinterpretq_s8_u8(hi), vdupq_n_s8(kOffset))};
}

// A legacy format for the row dots: the weight block's bytes, its
// activation block type, its unpacking, and `terms`: four blocks'
// contributions as the reference forms them (legacy_terms, neon_util.h),
// added to the sum in block order by `add`.
template <size_t kWBytes, class XBlock, BlockQuants (*kUnpack)(const uint8_t*), LegacyAdd kAdd, ScaleOrder kOrder>
struct LegacyFormat {
  // Q8_1 activations carry s for the weights' offset m (Q4_1 / Q5_1).
  static constexpr bool kMin = std::is_same_v<XBlock, ref::BlockQ8_1>;
  static constexpr size_t kWeightBytes = kWBytes;
  using X = XBlock;
  static BlockQuants unpack(const uint8_t* w) { return kUnpack(w); }

  // Four blocks' terms: w[k] the weight blocks, x[k] the activation blocks.
  static LegacyTerms terms(int32x4_t sumi, const uint8_t* const w[4], const X* const x[4]) {
    // d is the first field of every block; m (Q4_1 / Q5_1) the second.
    const float32x4_t dw = halves_to_f32x4(load_u16(w[0]), load_u16(w[1]), load_u16(w[2]), load_u16(w[3]));
    const float32x4_t dx = halves_to_f32x4(x[0]->d, x[1]->d, x[2]->d, x[3]->d);
    float32x4_t mw = vdupq_n_f32(0.0f), sx = mw;
    if constexpr (kMin) {
      mw = halves_to_f32x4(load_u16(w[0] + 2), load_u16(w[1] + 2), load_u16(w[2] + 2), load_u16(w[3] + 2));
      sx = halves_to_f32x4(x[0]->s, x[1]->s, x[2]->s, x[3]->s);
    }
    return legacy_terms<kAdd, kOrder, kMin>(vcvtq_f32_s32(sumi), dw, dx, mw, sx);
  }
  template <int kLane>
  static float add(float sum, const LegacyTerms& t) {
    if constexpr (kAdd == LegacyAdd::kFused) return std::fma(vgetq_lane_f32(t.a, kLane), vgetq_lane_f32(t.b, kLane), sum);
    return sum + vgetq_lane_f32(t.a, kLane);
  }
};

using Q4_0Format = LegacyFormat<sizeof(BlockQ4_0), BlockQ8_0, q4_quants<offsetof(BlockQ4_0, qs), 8>,
                                LegacyAdd::kFused, ScaleOrder::kWeightFirst>;
using Q8_0Format =
    LegacyFormat<sizeof(BlockQ8_0), BlockQ8_0, q8_0_quants, LegacyAdd::kFused, ScaleOrder::kProductOfScales>;
using Q4_1Format = LegacyFormat<sizeof(BlockQ4_1), ref::BlockQ8_1, q4_quants<offsetof(BlockQ4_1, qs), 0>,
                                LegacyAdd::kPlain, ScaleOrder::kProductOfScales>;
using Q5_0Format =
    LegacyFormat<sizeof(BlockQ5_0), BlockQ8_0, q5_quants<offsetof(BlockQ5_0, qh), offsetof(BlockQ5_0, qs), 16>,
                 LegacyAdd::kPlain, ScaleOrder::kProductOfScales>;
using Q5_1Format =
    LegacyFormat<sizeof(BlockQ5_1), ref::BlockQ8_1, q5_quants<offsetof(BlockQ5_1, qh), offsetof(BlockQ5_1, qs), 0>,
                 LegacyAdd::kPlain, ScaleOrder::kProductOfScales>;

// Shared body of the legacy dots. Four blocks per step: their exact
// integer sums land in one vector (sum_lanes_4) and are scaled in one go;
// the four block results are then added to the running sum one after the
// other. That is the reference's float arithmetic operation for operation,
// so the result is the reference's bit for bit (given no other contraction
// into fused multiply-adds, see cmake/ArmCrossBuild.cmake). The serial
// float adds cost little next to a block's integer work.
template <typename Dot, class F>
float dot_legacy(int64_t n, const uint8_t* w_row, const void* x_row) {
  using X = typename F::X;
  const auto* x = static_cast<const X*>(x_row);
  const int64_t nb = n / kQK;
  auto w_block = [&](int64_t ib) { return w_row + ib * static_cast<int64_t>(F::kWeightBytes); };

  float sumf = 0.0f;
  int64_t ib = 0;
  for (; ib + 4 <= nb; ib += 4) {
    int32x4_t sums[4];
    const uint8_t* w[4];
    const X* xb[4];
    for (int k = 0; k < 4; ++k) {
      w[k] = w_block(ib + k);
      xb[k] = &x[ib + k];
      const BlockQuants q = F::unpack(w[k]);
      sums[k] = dot_block32<Dot>(q.lo, q.hi, xb[k]->qs);
    }
    const LegacyTerms t = F::terms(sum_lanes_4(sums[0], sums[1], sums[2], sums[3]), w, xb);
    sumf = F::template add<0>(sumf, t);
    sumf = F::template add<1>(sumf, t);
    sumf = F::template add<2>(sumf, t);
    sumf = F::template add<3>(sumf, t);
  }
  for (; ib < nb; ++ib) {
    // One block in lane 0 (the other lanes repeat it and are not used).
    const uint8_t* w[4] = {w_block(ib), w_block(ib), w_block(ib), w_block(ib)};
    const X* xb[4] = {&x[ib], &x[ib], &x[ib], &x[ib]};
    const BlockQuants q = F::unpack(w[0]);
    const int32_t sumi = vaddvq_s32(dot_block32<Dot>(q.lo, q.hi, xb[0]->qs));
    sumf = F::template add<0>(sumf, F::terms(vdupq_n_s32(sumi), w, xb));
  }
  return sumf;
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

// Q4_K / Q5_K x Q8_K. Per super-block: isum = sum_s scale_s * (q8 . q over
// sub-block s), exact in int32; then
//   sumf += (d_w * d_x) * isum,   summs += (dmin_w * d_x) * mins_term.
// Q5_K's quants take a fifth bit: element 32s + l of sub-block s has it in
// bit s of qh[l].
template <typename Dot, bool kQ5>
float dot_q45_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;
  const auto* x = static_cast<const BlockQ8_K*>(x_row);
  float sum_scaled = 0.0f;
  float sum_mins = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const uint8_t* w = w_row + ib * static_cast<int64_t>(sizeof(Block));
    const BlockQ8_K& xb = x[ib];
    const ScalesMins sm = q4_K_scales_mins(w + offsetof(Block, scales));
    const uint8_t* qs = w + offsetof(Block, qs);
    uint8x16_t qh0 = vdupq_n_u8(0), qh1 = vdupq_n_u8(0);
    if constexpr (kQ5) {
      qh0 = vld1q_u8(w + offsetof(BlockQ5_K, qh));
      qh1 = vld1q_u8(w + offsetof(BlockQ5_K, qh) + 16);
    }
    // Sub-block s's fifth bits of elements l = 0..15 (half 0) or 16..31.
    auto fifth = [](uint8x16_t qh, int s) { return bit_as_16(qh, vdupq_n_u8(static_cast<uint8_t>(1u << s))); };

    int32x4_t isum = vdupq_n_s32(0);
    // 32 bytes of qs hold sub-block 2c (low nibbles) and 2c + 1 (high).
    for (int c = 0; c < 4; ++c) {
      const uint8x16_t q0 = vld1q_u8(qs + 32 * c);
      const uint8x16_t q1 = vld1q_u8(qs + 32 * c + 16);
      int8x16_t l0 = low_nibbles(q0, 0), l1 = low_nibbles(q1, 0);
      int8x16_t h0 = high_nibbles(q0, 0), h1 = high_nibbles(q1, 0);
      if constexpr (kQ5) {
        l0 = vorrq_s8(l0, vreinterpretq_s8_u8(fifth(qh0, 2 * c)));
        l1 = vorrq_s8(l1, vreinterpretq_s8_u8(fifth(qh1, 2 * c)));
        h0 = vorrq_s8(h0, vreinterpretq_s8_u8(fifth(qh0, 2 * c + 1)));
        h1 = vorrq_s8(h1, vreinterpretq_s8_u8(fifth(qh1, 2 * c + 1)));
      }
      const int8_t* xq = xb.qs + 64 * c;
      int32x4_t lo = vdupq_n_s32(0);
      lo = Dot::accumulate(lo, l0, vld1q_s8(xq));
      lo = Dot::accumulate(lo, l1, vld1q_s8(xq + 16));
      int32x4_t hi = vdupq_n_s32(0);
      hi = Dot::accumulate(hi, h0, vld1q_s8(xq + 32));
      hi = Dot::accumulate(hi, h1, vld1q_s8(xq + 48));
      isum = vmlaq_n_s32(isum, lo, sm.scale[2 * c]);
      isum = vmlaq_n_s32(isum, hi, sm.scale[2 * c + 1]);
    }
    const float d = half_to_float(load_u16(w + offsetof(Block, d))) * xb.d;
    const float dmin = half_to_float(load_u16(w + offsetof(Block, dmin))) * xb.d;
    sum_scaled += d * static_cast<float>(vaddvq_s32(isum));
    sum_mins += dmin * static_cast<float>(q4_K_mins_term(xb, sm.min));
  }
  return sum_scaled - sum_mins;
}

template <typename Dot>
float dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q45_K<Dot, false>(n, w_row, x_row);
}
template <typename Dot>
float dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q45_K<Dot, true>(n, w_row, x_row);
}

// Q2_K / Q3_K: element 128h + 32p + l (half h, pass p = 0..3, l < 32) has
// its 2 low bits at bits 2p of qs[32h + l]; elements l < 16 and 16 + l are
// sub-blocks 8h + 2p and 8h + 2p + 1 (the order documented at BlockQ2_K).
// low2_pass<p>: pass p's 16 values of 16 qs bytes.
template <int kPass>
inline uint8x16_t low2_pass(uint8x16_t q) {
  return vandq_u8(vshrq_n_u8(q, 2 * kPass), vdupq_n_u8(3));
}
// Half h's 8 vectors of 16 values: v[k] is sub-block 8h + k.
inline void low2_half(const uint8_t* qs, int h, uint8x16_t v[8]) {
  const uint8x16_t q0 = vld1q_u8(qs + 32 * h), q1 = vld1q_u8(qs + 32 * h + 16);
  v[0] = low2_pass<0>(q0), v[1] = low2_pass<0>(q1), v[2] = low2_pass<1>(q0), v[3] = low2_pass<1>(q1);
  v[4] = low2_pass<2>(q0), v[5] = low2_pass<2>(q1), v[6] = low2_pass<3>(q0), v[7] = low2_pass<3>(q1);
}

// Q2_K x Q8_K, the reference's integers and float operations:
//   isum = sum_s (scales[s] & 15) * (q8 . q2 over s),
//   summs = sum_s bsums[s] * (scales[s] >> 4),
//   sumf += (d_x * d_w) * isum - (d_x * dmin_w) * summs
// (bit for bit, given no contraction).
template <typename Dot>
float dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x = static_cast<const BlockQ8_K*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const uint8_t* w = w_row + ib * static_cast<int64_t>(sizeof(BlockQ2_K));
    const BlockQ8_K& xb = x[ib];
    const uint8x16_t sc = vld1q_u8(w + offsetof(BlockQ2_K, scales));
    // summs: the mins (high nibbles) times the bsums, widened.
    const int16x8_t m_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vshrq_n_u8(sc, 4))));
    const int16x8_t m_hi = vreinterpretq_s16_u16(vmovl_high_u8(vshrq_n_u8(sc, 4)));
    const int16x8_t b_lo = vld1q_s16(xb.bsums), b_hi = vld1q_s16(xb.bsums + 8);
    int32x4_t mins = vmull_s16(vget_low_s16(m_lo), vget_low_s16(b_lo));
    mins = vmlal_high_s16(mins, m_lo, b_lo);
    mins = vmlal_s16(mins, vget_low_s16(m_hi), vget_low_s16(b_hi));
    mins = vmlal_high_s16(mins, m_hi, b_hi);
    uint8_t scale[16];
    vst1q_u8(scale, vandq_u8(sc, vdupq_n_u8(0x0F)));

    int32x4_t isum = vdupq_n_s32(0);
    const uint8_t* qs = w + offsetof(BlockQ2_K, qs);
    for (int h = 0; h < 2; ++h) {
      const int8_t* xq = xb.qs + 128 * h;
      uint8x16_t v[8];
      low2_half(qs, h, v);
      for (int k = 0; k < 8; ++k) {
        const int32x4_t dot = Dot::accumulate(vdupq_n_s32(0), vreinterpretq_s8_u8(v[k]), vld1q_s8(xq + 16 * k));
        isum = vmlaq_n_s32(isum, dot, scale[8 * h + k]);
      }
    }
    const float dall = xb.d * half_to_float(load_u16(w + offsetof(BlockQ2_K, d)));
    const float dmin = xb.d * half_to_float(load_u16(w + offsetof(BlockQ2_K, dmin)));
    sumf += dall * static_cast<float>(vaddvq_s32(isum)) - dmin * static_cast<float>(vaddvq_s32(mins));
  }
  return sumf;
}

// Q3_K x Q8_K: Q2_K's low bits, minus 4 where the element's high bit (bit
// 4h + p of hmask[l] for element 128h + 32p + l) is clear; sub-block scales
// 6-bit, minus 32. isum exact; sumf += (d_w * d_x) * isum per super-block
// (the reference keeps eight lane sums: a few ulps apart, as Q4_K).
template <typename Dot>
float dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x = static_cast<const BlockQ8_K*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const uint8_t* w = w_row + ib * static_cast<int64_t>(sizeof(BlockQ3_K));
    const BlockQ8_K& xb = x[ib];
    const uint8_t* sc = w + offsetof(BlockQ3_K, scales);
    int32_t scale[16];
    for (int s = 0; s < 16; ++s) scale[s] = q3_scale(sc, s) - 32;
    const uint8x16_t hm[2] = {vld1q_u8(w + offsetof(BlockQ3_K, hmask)), vld1q_u8(w + offsetof(BlockQ3_K, hmask) + 16)};
    const uint8x16_t four = vdupq_n_u8(4);
    int32x4_t isum = vdupq_n_s32(0);
    const uint8_t* qs = w + offsetof(BlockQ3_K, qs);
    for (int h = 0; h < 2; ++h) {
      const int8_t* xq = xb.qs + 128 * h;
      uint8x16_t v[8];
      low2_half(qs, h, v);
      for (int k = 0; k < 8; ++k) {
        // Pass k / 2, elements l = 16 (k % 2) .. + 15: bit 4h + k / 2 of hmask[l].
        const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + k / 2)));
        const uint8x16_t minus = vbicq_u8(four, vtstq_u8(hm[k % 2], bit));
        const int8x16_t q = vsubq_s8(vreinterpretq_s8_u8(v[k]), vreinterpretq_s8_u8(minus));
        const int32x4_t dot = Dot::accumulate(vdupq_n_s32(0), q, vld1q_s8(xq + 16 * k));
        isum = vmlaq_n_s32(isum, dot, scale[8 * h + k]);
      }
    }
    const float d = half_to_float(load_u16(w + offsetof(BlockQ3_K, d))) * xb.d;
    sumf += d * static_cast<float>(vaddvq_s32(isum));
  }
  return sumf;
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
