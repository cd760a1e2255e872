// What the SDOT tile strips share (strip_dotprod.cpp: the legacy formats,
// strip_kquants_dotprod.cpp: Q4_K / Q5_K / Q6_K): 4 weight rows in the 4
// lanes of a vector, their quants transposed in 4-byte groups so that SDOT
// by element (vdotq_laneq_s32) against one token's 16 activation bytes adds
// four groups of each row into its own lane. Also the Q4_K / Q5_K scale
// unpacking of four rows at once (K4Scales), which the SMMLA tiles of
// strip_i8mm.cpp use as well.
//
// Include only from sources compiled with +dotprod (*_dotprod.cpp,
// *_i8mm.cpp); like neon_util.h, everything is in an anonymous namespace.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/arm/neon_util.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm {
namespace {

constexpr int kTileRows = 4;    // rows per tile (the lanes)
constexpr int kTileTokens = 4;  // most tokens per tile

// [a0 b0 a2 b2], [a1 b1 a3 b3] of two rows' 32-bit groups, then the 64-bit
// halves of two such pairs: g[k] = group k of rows 0..3 in lanes 0..3.
inline void transpose4(const int8x16_t r[4], int8x16_t g[4]) {
  const int32x4_t r0 = vreinterpretq_s32_s8(r[0]), r1 = vreinterpretq_s32_s8(r[1]);
  const int32x4_t r2 = vreinterpretq_s32_s8(r[2]), r3 = vreinterpretq_s32_s8(r[3]);
  const int64x2_t t0 = vreinterpretq_s64_s32(vtrn1q_s32(r0, r1)), t1 = vreinterpretq_s64_s32(vtrn2q_s32(r0, r1));
  const int64x2_t t2 = vreinterpretq_s64_s32(vtrn1q_s32(r2, r3)), t3 = vreinterpretq_s64_s32(vtrn2q_s32(r2, r3));
  g[0] = vreinterpretq_s8_s64(vtrn1q_s64(t0, t2));
  g[1] = vreinterpretq_s8_s64(vtrn1q_s64(t1, t3));
  g[2] = vreinterpretq_s8_s64(vtrn2q_s64(t0, t2));
  g[3] = vreinterpretq_s8_s64(vtrn2q_s64(t1, t3));
}

// 16 bytes at `at` of each of the four rows, transposed.
inline void load_transposed(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[4]) {
  int8x16_t q[kTileRows];
  for (int r = 0; r < kTileRows; ++r) q[r] = load_s8x16(rows[r] + at);
  transpose4(q, g);
}

// Lane r: the exact sum of 16 products, group k of g against bytes
// 4k .. 4k + 3 of x (k = 0..3), added to acc.
inline int32x4_t dot16(int32x4_t acc, const int8x16_t g[4], int8x16_t x) {
  acc = vdotq_laneq_s32(acc, g[0], x, 0);
  acc = vdotq_laneq_s32(acc, g[1], x, 1);
  acc = vdotq_laneq_s32(acc, g[2], x, 2);
  return vdotq_laneq_s32(acc, g[3], x, 3);
}

// The four fp16 values at `at` of the rows, as floats in lanes 0..3.
inline float32x4_t row_halves(const uint8_t* const rows[kTileRows], size_t at) {
  return halves_to_f32x4(load_u16(rows[0] + at), load_u16(rows[1] + at), load_u16(rows[2] + at),
                         load_u16(rows[3] + at));
}

// Byte j (0..3) of each 32-bit lane, zero-extended (j need not be a
// constant: a shift by a register, so a rolled loop does not branch on it).
inline int32x4_t lane_byte(uint8x16_t v, int j) {
  const uint32x4_t w = vshlq_u32(vreinterpretq_u32_u8(v), vdupq_n_s32(-8 * j));
  return vreinterpretq_s32_u32(vandq_u32(w, vdupq_n_u32(0xFF)));
}

// The 8 six-bit scales and mins of a Q4_K / Q5_K super-block of the four
// rows (the layout of scale_min_k4 in tensor/blocks.h), unpacked for all of
// them at once from the rows' 12 scale bytes transposed: lane r of
// scale_lo holds row r's scales 0..3 as bytes, scale_hi 4..7, the same for
// the mins. Reads 16 bytes at the scales (the last 4 are the block's next
// field).
struct K4Scales {
  uint8x16_t scale_lo, scale_hi, min_lo, min_hi;
  // Sub-block s's scale (min) of the four rows as int32 lanes.
  int32x4_t scale(int s) const { return lane_byte(pick(s, scale_lo, scale_hi), s % 4); }
  int32x4_t min(int s) const { return lane_byte(pick(s, min_lo, min_hi), s % 4); }
  // lo for s < 4, else hi, without a branch.
  static uint8x16_t pick(int s, uint8x16_t lo, uint8x16_t hi) {
    return vbslq_u8(vdupq_n_u8(s < 4 ? 0xFF : 0), lo, hi);
  }
  // Lane r: the sum over the sub-blocks of row r's min_s times the
  // token's activation sum over s (bsums of 16 in pairs: at most 2 * 16 *
  // 128, int16) - the integer the Q4_K / Q5_K mins term scales.
  int32x4_t mins_term(const BlockQ8_K& xb) const {
    const int16x8_t pairs = vpaddq_s16(vld1q_s16(xb.bsums), vld1q_s16(xb.bsums + 8));
    const int32x4_t p_lo = vmovl_s16(vget_low_s16(pairs)), p_hi = vmovl_high_s16(pairs);
    int32x4_t mt = vmulq_laneq_s32(min(0), p_lo, 0);
    mt = vmlaq_laneq_s32(mt, min(1), p_lo, 1);
    mt = vmlaq_laneq_s32(mt, min(2), p_lo, 2);
    mt = vmlaq_laneq_s32(mt, min(3), p_lo, 3);
    mt = vmlaq_laneq_s32(mt, min(4), p_hi, 0);
    mt = vmlaq_laneq_s32(mt, min(5), p_hi, 1);
    mt = vmlaq_laneq_s32(mt, min(6), p_hi, 2);
    return vmlaq_laneq_s32(mt, min(7), p_hi, 3);
  }
};
inline K4Scales k4_scales(const uint8_t* const rows[kTileRows], size_t at) {
  int8x16_t t[4];
  load_transposed(rows, at, t);
  const uint8x16_t b0 = vreinterpretq_u8_s8(t[0]), b4 = vreinterpretq_u8_s8(t[1]), b8 = vreinterpretq_u8_s8(t[2]);
  const uint8x16_t low6 = vdupq_n_u8(63), low4 = vdupq_n_u8(0x0F);
  // j < 4: bytes j and j + 4, low 6 bits; j >= 4: byte j + 4's nibble and
  // the top 2 bits of bytes j - 4 (scale) and j (min).
  return {vandq_u8(b0, low6), vorrq_u8(vandq_u8(b8, low4), vshlq_n_u8(vshrq_n_u8(b0, 6), 4)), vandq_u8(b4, low6),
          vorrq_u8(vshrq_n_u8(b8, 4), vshlq_n_u8(vshrq_n_u8(b4, 6), 4))};
}

// Sub-block s of a Q4_K / Q5_K row, 16 of its 32 elements as signed
// quants: the low nibbles (even s) or high ones (odd s) of `bytes` (16 of
// qs bytes 32 (s / 2) ..); Q5_K adds 16 where bit s of the matching qh
// bytes at `qh` is set. The SMMLA tiles' unpacking (strip_i8mm.cpp,
// token_groups_i8mm.cpp).
template <bool kQ5>
inline int8x16_t k45_quants(uint8x16_t bytes, const uint8_t* qh, int s) {
  uint8x16_t v = s % 2 == 0 ? vandq_u8(bytes, vdupq_n_u8(0x0F)) : vshrq_n_u8(bytes, 4);
  if constexpr (kQ5) v = vorrq_u8(v, bit_as_16(vld1q_u8(qh), vdupq_n_u8(static_cast<uint8_t>(1u << s))));
  return vreinterpretq_s8_u8(v);
}

// The weight rows r0 .. r0 + N - 1 of a strip in rows[], those past its
// last repeating the last one; returns how many are real.
template <int N>
inline int group_rows(const StripArgs& a, int64_t r0, const uint8_t* (&rows)[N]) {
  const int n_real = static_cast<int>(a.n_rows - r0 < N ? a.n_rows - r0 : N);
  for (int r = 0; r < N; ++r) rows[r] = a.w + static_cast<size_t>(r0 + (r < n_real ? r : n_real - 1)) * a.w_stride;
  return n_real;
}

// A strip: rows in groups of 4 (the last group repeats its last real row;
// only real rows are stored), tokens in tiles of kWide (8, 12 or 16), then
// of 8, then of 4, then the 1-3 left: Tile<C>::run(a, rows, n_real, t0)
// takes the rows of one group times tokens t0 .. t0 + C - 1, written to
// a.y (already offset to the group's row). A wider tile unpacks each block
// of the 4 rows once for more tokens: NEON's 32 registers hold 8-16
// tokens' accumulators (widths per format: tools/arm_instruction_count.sh
// at 24 and 32 tokens, see strip_dotprod.cpp and strip_kquants_dotprod.cpp).
template <template <int> class Tile, int kWide = kTileTokens>
void tile_strip(const StripArgs& a) {
  static_assert(kWide == kTileTokens || kWide == 8 || kWide == 12 || kWide == 16);
  for (int64_t r0 = 0; r0 < a.n_rows; r0 += kTileRows) {
    const uint8_t* rows[kTileRows];
    const int n_real = group_rows(a, r0, rows);
    StripArgs at = a;
    at.y = a.y + r0;
    const int64_t n = a.x.n_tokens;
    int64_t t = 0;
    if constexpr (kWide > 8) {
      for (; t + kWide <= n; t += kWide) Tile<kWide>::run(at, rows, n_real, t);
    }
    if constexpr (kWide >= 8) {
      for (; t + 8 <= n; t += 8) Tile<8>::run(at, rows, n_real, t);
    }
    for (; t + kTileTokens <= n; t += kTileTokens) Tile<kTileTokens>::run(at, rows, n_real, t);
    switch (n - t) {
      case 3: Tile<3>::run(at, rows, n_real, t); break;
      case 2: Tile<2>::run(at, rows, n_real, t); break;
      case 1: Tile<1>::run(at, rows, n_real, t); break;
      default: break;
    }
  }
}

// A token-group strip's walk (matmul's tile_strip: token_groups_i8mm.cpp,
// strip_dotprod.cpp): rows in groups of 4 (the last repeating its last real
// row) outside, matmul's groups of kGroupTokens inside, fn(at, rows,
// n_real, group, g0, n_group) for each: at's y at the rows' first, group
// the bytes of tokens g0 .. g0 + n_group - 1 (the last group padded).
constexpr int kGroupTokens = 16;
template <class Fn>
inline void for_token_groups(const StripArgs& a, Fn&& fn) {
  for (int64_t r0 = 0; r0 < a.n_rows; r0 += kTileRows) {
    const uint8_t* rows[kTileRows];
    const int n_real = group_rows(a, r0, rows);
    StripArgs at = a;
    at.y = a.y + r0;
    for (int64_t g0 = 0; g0 < a.x.n_tokens; g0 += kGroupTokens) {
      const int n_group = static_cast<int>(a.x.n_tokens - g0 < kGroupTokens ? a.x.n_tokens - g0 : kGroupTokens);
      fn(at, rows, n_real, a.tiles + static_cast<size_t>(g0 / kGroupTokens) * a.tile_group_bytes, g0, n_group);
    }
  }
}

// The activation rows of tokens t0 .. t0 + C - 1 as blocks of X, in x[0..N)
// (N >= C: the entries past C repeat the last real token, the padding of
// a tile that takes tokens in pairs; its results are not stored).
template <class X, int N>
inline void token_rows(const StripArgs& a, int64_t t0, int C, const X* (&x)[N]) {
  for (int c = 0; c < N; ++c)
    x[c] = reinterpret_cast<const X*>(a.x.q + static_cast<size_t>(t0 + (c < C ? c : C - 1)) * a.x.q_stride);
}

// fn(i) for i = 0 .. N - 1: unrolled with i a compile-time constant
// (std::integral_constant) when kUnroll, else a plain loop. A tile of few
// tokens unrolls its loops (what depends on i folds to constants); one of
// four keeps them rolled (unrolled, its tokens' sums and the unpacked quants
// spilled). Which is which is counted per format (strip_kquants_dotprod.cpp).
template <int N, bool kUnroll, class Fn>
inline void repeat(Fn&& fn) {
  if constexpr (kUnroll) {
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (fn(std::integral_constant<int, I>{}), ...);
    }(std::make_integer_sequence<int, N>{});
  } else {
    for (int i = 0; i < N; ++i) fn(i);
  }
}

// acc + (d_rows * d_x) * isum, lane by lane: a K-quant super-block's float
// update, as the ARM row dots do it.
inline float32x4_t add_scaled(float32x4_t acc, float32x4_t d_rows, float d_x, int32x4_t isum) {
  return vaddq_f32(acc, vmulq_f32(vmulq_n_f32(d_rows, d_x), vcvtq_f32_s32(isum)));
}

// Token t's four results (lanes = rows) into y + t * ldy, the first n_real.
inline void store_rows(float* y, float32x4_t v, int n_real) {
  if (n_real == kTileRows) {
    vst1q_f32(y, v);
    return;
  }
  float out[kTileRows];
  vst1q_f32(out, v);
  for (int r = 0; r < n_real; ++r) y[r] = out[r];
}

}  // namespace
}  // namespace kazeia::kernels::arm
