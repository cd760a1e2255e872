// Q4_0 and Q8_0 strips (any number of tokens) with SDOT, rows in the lanes
// (compiled with +dotprod, only called when the CPU has it).
//
// The row dots (int8_dot_kernels.h) give one (row, token) per call: per
// block they unpack the row, load the token's 32 activations, and SDOT them
// into a vector whose four lanes must then be summed. Here four rows meet
// up to four tokens per block. The four rows' quants are transposed in
// 4-byte groups (two TRN levels), so vector k holds group k (elements
// 4k .. 4k + 3) of row r in lane r; SDOT by element (vdotq_laneq_s32)
// multiplies it by the token's group k, and after the block's eight groups
// lane r of the accumulator is row r's exact block sum: no lane reduction,
// and the rows' unpacking and the token's loads are shared by four dot
// products each.
//
// Instructions per block in the compiled loops (GCC 12, -O3; no aarch64
// hardware here to time them), per (row, token) pair: Q4_0 4 x 4 tiles 120
// = 7.5, one token (4 x 1) 59 = 14.8; its row dot 82 per four blocks =
// 20.5; the i8mm 2 x 2 SMMLA tile 55 per block = 13.8 (Q8_0: 7.0, 13.5,
// 17.5, 12.3). So these strips serve every token count, decode included,
// from dotprod up.
//
// Float update per block, as the reference (ref/vec_dot_legacy.cpp):
//   Q4_0: acc = fma(sumi * d_w, d_x, acc)   Q8_0: acc = fma(d_w * d_x, sumi, acc)
// lane by lane: every output is the reference dot of its row and token, bit
// for bit (given no contraction, cmake/ArmCrossBuild.cmake).
#include <arm_neon.h>

#include <cstddef>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::dotprod {
namespace {

constexpr int kRows = 4;    // rows per tile (the lanes)
constexpr int kTokens = 4;  // most tokens per tile

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

struct Q4_0Rows {
  static constexpr size_t kBytes = sizeof(BlockQ4_0);
  // Groups 0..7 of the block at `at` of the four rows (elements j < 16: low
  // nibbles of qs[j], j + 16: high; minus 8).
  static void groups(const uint8_t* const rows[kRows], size_t at, int8x16_t g[8]) {
    int8x16_t q[kRows];
    for (int r = 0; r < kRows; ++r) q[r] = load_s8x16(rows[r] + at + offsetof(BlockQ4_0, qs));
    int8x16_t t[4];
    transpose4(q, t);
    for (int k = 0; k < 4; ++k) {
      const uint8x16_t b = vreinterpretq_u8_s8(t[k]);
      g[k] = low_nibbles(b, 8);
      g[k + 4] = high_nibbles(b, 8);
    }
  }
  // acc + block contribution, the reference's order.
  static float32x4_t update(float32x4_t acc, int32x4_t sumi, float32x4_t dw, float dx) {
    return vfmaq_n_f32(acc, vmulq_f32(vcvtq_f32_s32(sumi), dw), dx);
  }
};

struct Q8_0Rows {
  static constexpr size_t kBytes = sizeof(BlockQ8_0);
  static void groups(const uint8_t* const rows[kRows], size_t at, int8x16_t g[8]) {
    for (int h = 0; h < 2; ++h) {
      int8x16_t q[kRows];
      for (int r = 0; r < kRows; ++r) q[r] = load_s8x16(rows[r] + at + offsetof(BlockQ8_0, qs) + 16 * h);
      transpose4(q, g + 4 * h);
    }
  }
  static float32x4_t update(float32x4_t acc, int32x4_t sumi, float32x4_t dw, float dx) {
    return vfmaq_f32(acc, vmulq_n_f32(dw, dx), vcvtq_f32_s32(sumi));
  }
};

// Four rows (the last ones may repeat a real row: n_real of them are
// stored) times tokens [t0, t0 + C) of a.
template <class F, int C>
void tile(const StripArgs& a, const uint8_t* const rows[kRows], int n_real, int64_t t0) {
  const uint8_t* x[C];
  for (int c = 0; c < C; ++c) x[c] = a.x.q + static_cast<size_t>(t0 + c) * a.x.q_stride;
  float32x4_t acc[C];
  for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
  const int64_t nb = a.n_in / kQK;
  for (int64_t b = 0; b < nb; ++b) {
    const size_t at = F::kBytes * static_cast<size_t>(b);
    int8x16_t g[8];
    F::groups(rows, at, g);
    const float32x4_t dw = halves_to_f32x4(load_u16(rows[0] + at), load_u16(rows[1] + at), load_u16(rows[2] + at),
                                           load_u16(rows[3] + at));
    for (int c = 0; c < C; ++c) {
      const uint8_t* xb = x[c] + sizeof(BlockQ8_0) * static_cast<size_t>(b);
      const int8x16_t x0 = load_s8x16(xb + offsetof(BlockQ8_0, qs));
      const int8x16_t x1 = load_s8x16(xb + offsetof(BlockQ8_0, qs) + 16);
      // Two chains of four (groups 0-3, 4-7), joined: exact int32 either way.
      int32x4_t s0 = vdotq_laneq_s32(vdupq_n_s32(0), g[0], x0, 0);
      int32x4_t s1 = vdotq_laneq_s32(vdupq_n_s32(0), g[4], x1, 0);
      s0 = vdotq_laneq_s32(s0, g[1], x0, 1);
      s1 = vdotq_laneq_s32(s1, g[5], x1, 1);
      s0 = vdotq_laneq_s32(s0, g[2], x0, 2);
      s1 = vdotq_laneq_s32(s1, g[6], x1, 2);
      s0 = vdotq_laneq_s32(s0, g[3], x0, 3);
      s1 = vdotq_laneq_s32(s1, g[7], x1, 3);
      acc[c] = F::update(acc[c], vaddq_s32(s0, s1), dw, half_to_float(load_u16(xb)));
    }
  }
  for (int c = 0; c < C; ++c) {
    float* y = a.y + static_cast<size_t>(t0 + c) * a.ldy;
    if (n_real == kRows) {
      vst1q_f32(y, acc[c]);
    } else {
      float out[kRows];
      vst1q_f32(out, acc[c]);
      for (int r = 0; r < n_real; ++r) y[r] = out[r];
    }
  }
}

template <class F>
void strip(const StripArgs& a) {
  for (int64_t r0 = 0; r0 < a.n_rows; r0 += kRows) {
    const int n_real = static_cast<int>(a.n_rows - r0 < kRows ? a.n_rows - r0 : kRows);
    const uint8_t* rows[kRows];
    for (int r = 0; r < kRows; ++r)
      rows[r] = a.w + static_cast<size_t>(r0 + (r < n_real ? r : n_real - 1)) * a.w_stride;
    StripArgs at = a;
    at.y = a.y + r0;
    int64_t t = 0;
    for (; t + kTokens <= a.x.n_tokens; t += kTokens) tile<F, kTokens>(at, rows, n_real, t);
    switch (a.x.n_tokens - t) {
      case 3: tile<F, 3>(at, rows, n_real, t); break;
      case 2: tile<F, 2>(at, rows, n_real, t); break;
      case 1: tile<F, 1>(at, rows, n_real, t); break;
      default: break;
    }
  }
}

}  // namespace

void strip_q4_0(const StripArgs& a) { strip<Q4_0Rows>(a); }
void strip_q8_0(const StripArgs& a) { strip<Q8_0Rows>(a); }

}  // namespace kazeia::kernels::arm::dotprod
