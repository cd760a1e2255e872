// Q2_K, Q3_K, Q4_K, Q5_K and Q6_K strips (x Q8_K, any number of tokens) of 4-row x
// 4-token SDOT tiles, rows in the lanes (tile_dotprod.h; compiled with
// +dotprod, only called when the CPU has it).
//
// One token of Q4_K / Q5_K takes a row form instead (K45Tile::one_token:
// nothing to share a transposition with).
//
// Per super-block the four rows' quants are transposed in 4-byte groups
// once and serve every token of the tile: one sub-block of one token is
// SDOTs by element (16 products each per row) leaving the row's exact
// sub-block sum in its lane, then one multiply-add by the four rows'
// sub-block scales (an int32 vector, lane r = row r's). The integers are
// the row dots' (int8_dot_kernels.h) and so is the float update, lane by
// lane:
//   Q4_K / Q5_K: scaled += (d_w * d_x) * isum, mins += (dmin_w * d_x) *
//                mins_term (sum of min_s times the sub-block's activation
//                sum, from bsums); the result scaled - mins;
//   Q6_K:        sum += (d_w * d_x) * isum, the quants' offset 32 as each
//                sub-block's start, -32 times its activation sum (bsums).
// So a strip gives the row dot's float for every (row, token), bit for bit
// (a few ulps from the reference's eight lane sums, as the row dots).
//
// Instructions executed per (row, token, 32 weights), 1024-input rows, 16
// rows (tools/arm_instruction_count.sh under qemu; no aarch64 hardware here
// to time them), strip / row dot: 1 token Q4_K 11.3 / 20.9 (the tile:
// 12.5), Q5_K 16.6 / 27.2 (21.1), Q6_K 17.8 / 25.4; 4 tokens Q4_K 7.8 /
// 20.6, Q5_K 10.9 / 26.8, Q6_K 9.6 / 25.1; Q2_K (K23Tile) 1 token 17.0 /
// 20.9, 4 tokens 7.7 / 20.6; Q3_K 24.6 / 32.5, 10.8 / 32.2.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::dotprod {
namespace {

// Q4_K (kQ5 false) and Q5_K.
template <bool kQ5>
struct K45Tile {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;

  // One token (decode), four rows: each row's quants stay in their own
  // vectors (at one token a transposition has nothing to share), plain SDOT
  // against the activations as they lie, and the four rows' sub-block sums
  // reduced by three ADDP into lane r = row r, then scaled as the tile's:
  // the same exact isum, the same float update. Q5_K's fifth bits come from
  // the row's own qh bytes, not transposed again per chunk: with
  // A = qh >> 2 ch (bit 0: sub-block 2 ch, bit 1: 2 ch + 1),
  //   sub-block 2 ch:     (A << 4 | q & 15) & 31         SLI, AND
  //   sub-block 2 ch + 1: (A << 3 & 0xF0 | q >> 4) & 31  SHL, SRI, AND
  // Groups of 8 rows (sharing the activation loads) spilled: Q4_K 12.5,
  // Q5_K 22.0 instructions against 11.3 / 16.7.
  static void one_token(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
    const BlockQ8_K* x[1];
    token_rows(a, t0, 1, x);
    float32x4_t scaled = vdupq_n_f32(0.0f), mins = scaled;
    const uint8x16_t low4 = vdupq_n_u8(0x0F), low5 = vdupq_n_u8(0x1F);
    for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
      const size_t at = sizeof(Block) * static_cast<size_t>(sb);
      const BlockQ8_K& xb = x[0][sb];
      const K4Scales ks = k4_scales(rows, at + offsetof(Block, scales));
      int32x4_t isum = vdupq_n_s32(0);
      repeat<4, true>([&](auto ch) {
        int8x16_t xq[4];
        for (int i = 0; i < 4; ++i) xq[i] = vld1q_s8(xb.qs + 64 * ch + 16 * i);
        int32x4_t lo[kTileRows], hi[kTileRows];  // sub-blocks 2 ch, 2 ch + 1 of each row
        for (int r = 0; r < kTileRows; ++r) {
          const uint8_t* w = rows[r] + at;
          uint8x16_t q[4];  // sub-block 2 ch: q[0], q[1]; 2 ch + 1: q[2], q[3]
          for (int i = 0; i < 2; ++i) {
            const uint8x16_t b = vld1q_u8(w + offsetof(Block, qs) + 32 * ch + 16 * i);
            if constexpr (kQ5) {
              uint8x16_t h = vld1q_u8(w + offsetof(BlockQ5_K, qh) + 16 * i);
              if constexpr (ch > 0) h = vshrq_n_u8(h, 2 * ch);
              q[i] = vandq_u8(vsliq_n_u8(b, h, 4), low5);
              q[2 + i] = vandq_u8(vsriq_n_u8(vshlq_n_u8(h, 3), b, 4), low5);
            } else {
              q[i] = vandq_u8(b, low4);
              q[2 + i] = vshrq_n_u8(b, 4);
            }
          }
          const auto s8 = [&](int i) { return vreinterpretq_s8_u8(q[i]); };
          lo[r] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), s8(0), xq[0]), s8(1), xq[1]);
          hi[r] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), s8(2), xq[2]), s8(3), xq[3]);
        }
        isum = vmlaq_s32(isum, sum_lanes_4(lo[0], lo[1], lo[2], lo[3]), ks.scale(2 * ch));
        isum = vmlaq_s32(isum, sum_lanes_4(hi[0], hi[1], hi[2], hi[3]), ks.scale(2 * ch + 1));
      });
      scaled = add_scaled(scaled, row_halves(rows, at + offsetof(Block, d)), xb.d, isum);
      mins = add_scaled(mins, row_halves(rows, at + offsetof(Block, dmin)), xb.d, ks.mins_term(xb));
    }
    store_rows(a.y + static_cast<size_t>(t0) * a.ldy, vsubq_f32(scaled, mins), n_real);
  }

  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      if constexpr (C == 1) {
        one_token(a, rows, n_real, t0);
      } else {
        tile(a, rows, n_real, t0);
      }
    }
    static void tile(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      const BlockQ8_K* x[C];
      token_rows(a, t0, C, x);
      float32x4_t scaled[C], mins[C];
      for (int c = 0; c < C; ++c) scaled[c] = mins[c] = vdupq_n_f32(0.0f);
      const uint8x16_t low4 = vdupq_n_u8(0x0F);
      for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
        const size_t at = sizeof(Block) * static_cast<size_t>(sb);
        const K4Scales ks = k4_scales(rows, at + offsetof(Block, scales));
        int32x4_t isum[C];
        for (int c = 0; c < C; ++c) isum[c] = vdupq_n_s32(0);
        // What depends on the chunk is computed, not branched on, so the
        // chunk loop stays rolled: unrolled, two tokens of Q4_K / Q5_K
        // spilled (1.08x / 1.24x the instructions).
        for (int ch = 0; ch < 4; ++ch) {
          // Chunk ch: 32 bytes of qs, sub-block 2ch in the low nibbles, 2ch + 1 in the high.
          int8x16_t q[2][4];
          load_transposed(rows, at + offsetof(Block, qs) + 32 * ch, q[0]);
          load_transposed(rows, at + offsetof(Block, qs) + 32 * ch + 16, q[1]);
          // Q5_K: the fifth bits of elements l = 0..15 and 16..31 (bit s:
          // sub-block s), transposed again per chunk (held in registers for
          // the whole super-block, they crowded out the rest).
          int8x16_t qh[2][4];
          if constexpr (kQ5) {
            load_transposed(rows, at + offsetof(BlockQ5_K, qh), qh[0]);
            load_transposed(rows, at + offsetof(BlockQ5_K, qh) + 16, qh[1]);
          }
          for (int half = 0; half < 2; ++half) {
            const int s = 2 * ch + half;
            int8x16_t g[2][4];  // sub-block s, elements 0..15 and 16..31
            for (int i = 0; i < 2; ++i) {
              for (int k = 0; k < 4; ++k) {
                const uint8x16_t b = vreinterpretq_u8_s8(q[i][k]);
                uint8x16_t v = half == 0 ? vandq_u8(b, low4) : vshrq_n_u8(b, 4);
                if constexpr (kQ5)
                  v = vorrq_u8(v, bit_as_16(vreinterpretq_u8_s8(qh[i][k]), vdupq_n_u8(static_cast<uint8_t>(1u << s))));
                g[i][k] = vreinterpretq_s8_u8(v);
              }
            }
            const int32x4_t scale = ks.scale(s);
            for (int c = 0; c < C; ++c) {
              const int8_t* xq = x[c][sb].qs + 32 * s;
              const int32x4_t sum = vaddq_s32(dot16(vdupq_n_s32(0), g[0], vld1q_s8(xq)),
                                              dot16(vdupq_n_s32(0), g[1], vld1q_s8(xq + 16)));
              isum[c] = vmlaq_s32(isum[c], sum, scale);
            }
          }
        }
        const float32x4_t dw = row_halves(rows, at + offsetof(Block, d));
        const float32x4_t dmin = row_halves(rows, at + offsetof(Block, dmin));
        for (int c = 0; c < C; ++c) {
          const BlockQ8_K& xb = x[c][sb];
          scaled[c] = add_scaled(scaled[c], dw, xb.d, isum[c]);
          mins[c] = add_scaled(mins[c], dmin, xb.d, ks.mins_term(xb));
        }
      }
      for (int c = 0; c < C; ++c)
        store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, vsubq_f32(scaled[c], mins[c]), n_real);
    }
  };
};

// Q6_K. A half h (128 elements) is 64 bytes of ql (4 low bits) and 32 of qh
// (2 high bits each); chunk k = 0..7 of it (16 elements, sub-block 8h + k)
// takes ql bytes 16 (k % 4) .. + 15, low nibbles for k < 4, and bit pair
// k / 2 of qh bytes 16 (k % 2) .. + 15 (the order documented at BlockQ6_K).
// Chunks p and p + 4 share their ql bytes and qh bytes: both are built from
// one transposed pair of pieces.
struct Q6KTile {
  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      const BlockQ8_K* x[C];
      token_rows(a, t0, C, x);
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
      const uint8x16_t low6 = vdupq_n_u8(63);
      for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
        const size_t at = sizeof(BlockQ6_K) * static_cast<size_t>(sb);
        // Scales (int8): group j of the transposed 16 bytes holds scales
        // 4j .. 4j + 3 of row r in lane r.
        int8x16_t sc[4];
        load_transposed(rows, at + offsetof(BlockQ6_K, scales), sc);
        int32x4_t isum[C];
        // The quants' offset 32 as each sub-block's start: -32 times the
        // token's activation sum over it (the Q8_K bsums), one load a
        // sub-block instead of subtracting 32 from every quant.
        alignas(16) int32_t start[C][16];
        for (int c = 0; c < C; ++c) {
          isum[c] = vdupq_n_s32(0);
          const int16x8_t b_lo = vld1q_s16(x[c][sb].bsums), b_hi = vld1q_s16(x[c][sb].bsums + 8);
          vst1q_s32(start[c], vmull_n_s16(vget_low_s16(b_lo), -32));
          vst1q_s32(start[c] + 4, vmull_high_n_s16(b_lo, -32));
          vst1q_s32(start[c] + 8, vmull_n_s16(vget_low_s16(b_hi), -32));
          vst1q_s32(start[c] + 12, vmull_high_n_s16(b_hi, -32));
        }
        // Unrolled for every tile (rolled, 3 and 4 tokens took 12.7 / 10.9
        // instructions against 11.2 / 9.6). Chunks p and p + 2 read the
        // same qh bytes (16 (p % 2)): one transposition serves both.
        repeat<4, true>([&](auto hq) {
          constexpr int h = hq / 2, par = hq % 2;
          int8x16_t qh[4];
          load_transposed(rows, at + offsetof(BlockQ6_K, qh) + 32 * h + 16 * par, qh);
          repeat<2, true>([&](auto half) {
            constexpr int p = par + 2 * half;
            int8x16_t l[4];
            load_transposed(rows, at + offsetof(BlockQ6_K, ql) + 64 * h + 16 * p, l);
            // Chunk p takes bit pair p / 2 (= half) of qh, chunk p + 4 pair
            // half + 2: with A = qh >> 2 half, the first is A's bits 0, 1
            // and the second its bits 4, 5, so
            //   chunk p:     (A << 4 | l & 15) & 63    SLI, AND
            //   chunk p + 4: (A & 0xF0 | l >> 4) & 63  SRI, AND
            // (quants 0..63; the offset is the start, above): 6 instructions
            // a pair of vectors (5 for half 0) against 10 for shifting and
            // masking each part and subtracting 32.
            int8x16_t g[2][4];
            for (int j = 0; j < 4; ++j) {
              const uint8x16_t lb = vreinterpretq_u8_s8(l[j]);
              uint8x16_t ab = vreinterpretq_u8_s8(qh[j]);
              if constexpr (half == 1) ab = vshrq_n_u8(ab, 2);
              g[0][j] = vreinterpretq_s8_u8(vandq_u8(vsliq_n_u8(lb, ab, 4), low6));
              g[1][j] = vreinterpretq_s8_u8(vandq_u8(vsriq_n_u8(ab, lb, 4), low6));
            }
            for (int high = 0; high < 2; ++high) {
              const int k = p + 4 * high;
              // Sub-block 8h + k's scales, sign-extended from byte k % 4 of group k / 4.
              const int s = 8 * h + k;
              const int32x4_t word = vreinterpretq_s32_s8(sc[s / 4]);
              const int32x4_t scale = vshrq_n_s32(vshlq_s32(word, vdupq_n_s32(8 * (3 - s % 4))), 24);
              for (int c = 0; c < C; ++c) {
                const int32x4_t sum =
                    dot16(vld1q_dup_s32(start[c] + s), g[high], vld1q_s8(x[c][sb].qs + 128 * h + 16 * k));
                isum[c] = vmlaq_s32(isum[c], sum, scale);
              }
            }
          });
        });
        const float32x4_t dw = row_halves(rows, at + offsetof(BlockQ6_K, d));
        for (int c = 0; c < C; ++c)
          acc[c] = add_scaled(acc[c], dw, x[c][sb].d, isum[c]);
      }
      for (int c = 0; c < C; ++c) store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, acc[c], n_real);
    }
  };
};

// Q2_K (kQ3 false) and Q3_K. Element 128h + 32p + l has its 2 low bits at
// bits 2p of qs[32h + l]; sub-block 8h + k (16 elements) is pass p = k / 2
// of qs bytes 32h + 16 (k % 2) .. + 15 (int8_dot_kernels.h's low2_half).
// Shifting the transposed bytes keeps the groups: SDOT by element as for
// the other K-quants. Q3_K subtracts 4 where the element's high bit (bit
// 4h + p of hmask[l]) is clear. The float update is the row dot's, lane by
// lane:
//   Q2_K: acc + ((d_w * d_x) * isum - (dmin_w * d_x) * mins_term) (the
//         reference's bits);
//   Q3_K: acc + (d_w * d_x) * isum (a few ulps from the reference, as the
//         row dot).
template <bool kQ3>
struct K23Tile {
  using Block = std::conditional_t<kQ3, BlockQ3_K, BlockQ2_K>;

  // Sub-block s's scales of the four rows as int32 lanes (Q3_K: minus 32),
  // and Q2_K's mins; from the rows' scale bytes transposed.
  struct Scales {
    uint8x16_t g[4];  // byte b of lane r of g[s / 4]: row r's scale byte for s = 4 (s / 4) + b
    int32x4_t scale(int s) const {
      const int32x4_t v = lane_byte(g[s / 4], s % 4);
      if constexpr (kQ3) return vsubq_s32(v, vdupq_n_s32(32));
      return vandq_s32(v, vdupq_n_s32(15));
    }
    int32x4_t min(int s) const { return vshrq_n_s32(lane_byte(g[s / 4], s % 4), 4); }  // Q2_K
  };
  static Scales scales(const uint8_t* const rows[kTileRows], size_t at) {
    Scales sc;
    if constexpr (!kQ3) {
      int8x16_t t[4];
      load_transposed(rows, at + offsetof(BlockQ2_K, scales), t);
      for (int i = 0; i < 4; ++i) sc.g[i] = vreinterpretq_u8_s8(t[i]);
    } else {
      // 12 scale bytes: read 16 ending inside the block (from 2 before
      // them) and drop the first 2, so the last row's last block reads
      // nothing past it. Scale s = low | high << 4 (tensor/blocks.h's
      // q3_scale): low the low (s < 8) or high nibble of byte s % 8, high
      // bits 2 (s / 4) of byte 8 + s % 4.
      int8x16_t q[kTileRows], t[4];
      for (int r = 0; r < kTileRows; ++r) {
        const int8x16_t v = load_s8x16(rows[r] + at + offsetof(BlockQ3_K, scales) - 2);
        q[r] = vextq_s8(v, v, 2);
      }
      transpose4(q, t);
      const uint8x16_t b0 = vreinterpretq_u8_s8(t[0]), b4 = vreinterpretq_u8_s8(t[1]), b8 = vreinterpretq_u8_s8(t[2]);
      const uint8x16_t low4 = vdupq_n_u8(0x0F), low2 = vdupq_n_u8(3);
      const uint8x16_t low[4] = {vandq_u8(b0, low4), vandq_u8(b4, low4), vshrq_n_u8(b0, 4), vshrq_n_u8(b4, 4)};
      sc.g[0] = vorrq_u8(low[0], vshlq_n_u8(vandq_u8(b8, low2), 4));
      sc.g[1] = vorrq_u8(low[1], vshlq_n_u8(vandq_u8(vshrq_n_u8(b8, 2), low2), 4));
      sc.g[2] = vorrq_u8(low[2], vshlq_n_u8(vandq_u8(vshrq_n_u8(b8, 4), low2), 4));
      sc.g[3] = vorrq_u8(low[3], vshlq_n_u8(vshrq_n_u8(b8, 6), 4));
    }
    return sc;
  }

  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      const BlockQ8_K* x[C];
      token_rows(a, t0, C, x);
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
      const uint8x16_t three = vdupq_n_u8(3), four = vdupq_n_u8(4);
      for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
        const size_t at = sizeof(Block) * static_cast<size_t>(sb);
        const Scales sc = scales(rows, at);
        int8x16_t hm[2][4];  // Q3_K: hmask bytes 0-15 and 16-31, transposed
        if constexpr (kQ3) {
          load_transposed(rows, at + offsetof(BlockQ3_K, hmask), hm[0]);
          load_transposed(rows, at + offsetof(BlockQ3_K, hmask) + 16, hm[1]);
        }
        int32x4_t isum[C];
        for (int c = 0; c < C; ++c) isum[c] = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
          int8x16_t q[2][4];
          load_transposed(rows, at + offsetof(Block, qs) + 32 * h, q[0]);
          load_transposed(rows, at + offsetof(Block, qs) + 32 * h + 16, q[1]);
          // Unrolled for every tile (rolled: 10.56 / 11.90 instructions for
          // Q2_K / Q3_K at 4 tokens against 7.70 / 10.78; at 1 token 15.3 /
          // 34.1 against 17.0 / 24.6).
          repeat<8, true>([&](auto k_) {
            const int k = k_, p = k / 2;
            const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(-2 * p));
            int8x16_t g[4];
            for (int j = 0; j < 4; ++j) {
              uint8x16_t v = vandq_u8(vshlq_u8(vreinterpretq_u8_s8(q[k % 2][j]), shift), three);
              if constexpr (kQ3) {
                const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + p)));
                v = vsubq_u8(v, vbicq_u8(four, vtstq_u8(vreinterpretq_u8_s8(hm[k % 2][j]), bit)));
              }
              g[j] = vreinterpretq_s8_u8(v);
            }
            const int32x4_t scale = sc.scale(8 * h + k);
            for (int c = 0; c < C; ++c) {
              const int32x4_t sum = dot16(vdupq_n_s32(0), g, vld1q_s8(x[c][sb].qs + 128 * h + 16 * k));
              isum[c] = vmlaq_s32(isum[c], sum, scale);
            }
          });
        }
        const float32x4_t dw = row_halves(rows, at + offsetof(Block, d));
        if constexpr (kQ3) {
          for (int c = 0; c < C; ++c) acc[c] = add_scaled(acc[c], dw, x[c][sb].d, isum[c]);
        } else {
          const float32x4_t dmin = row_halves(rows, at + offsetof(BlockQ2_K, dmin));
          for (int c = 0; c < C; ++c) {
            // sum_s min_s * bsums[s] (bsums of 16: one per sub-block).
            const int16x8_t b_lo = vld1q_s16(x[c][sb].bsums), b_hi = vld1q_s16(x[c][sb].bsums + 8);
            const int32x4_t b[4] = {vmovl_s16(vget_low_s16(b_lo)), vmovl_high_s16(b_lo), vmovl_s16(vget_low_s16(b_hi)),
                                    vmovl_high_s16(b_hi)};
            int32x4_t mt = vdupq_n_s32(0);
            repeat<16, true>([&](auto s) { mt = vmlaq_laneq_s32(mt, sc.min(s), b[s / 4], s % 4); });
            const float xd = x[c][sb].d;
            const float32x4_t scaled = vmulq_f32(vmulq_n_f32(dw, xd), vcvtq_f32_s32(isum[c]));
            const float32x4_t mins = vmulq_f32(vmulq_n_f32(dmin, xd), vcvtq_f32_s32(mt));
            acc[c] = vaddq_f32(acc[c], vsubq_f32(scaled, mins));
          }
        }
      }
      for (int c = 0; c < C; ++c) store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, acc[c], n_real);
    }
  };
};

}  // namespace

// The widest tile per format (tile_strip): instructions per (row, token,
// 32 weights) at 24 tokens (32 for 16), 16 x 1024, widest tile 4 / 8 / 12
// / 16: Q2_K 7.60 / 7.17 / 7.29 / 7.09, Q3_K 10.67 / 8.53 / 7.76 / 7.69,
// Q4_K 7.25 / 6.67 / 6.27 / 6.24, Q5_K 10.62 / 8.38 / 7.29 / 7.53, Q6_K
// 9.42 / 9.03 / 9.64 / 7.79 (how GCC allocates each width's registers).
void strip_q4_K(const StripArgs& a) { tile_strip<K45Tile<false>::Of, 12>(a); }
void strip_q5_K(const StripArgs& a) { tile_strip<K45Tile<true>::Of, 12>(a); }
void strip_q6_K(const StripArgs& a) { tile_strip<Q6KTile::Of, 16>(a); }
void strip_q2_K(const StripArgs& a) { tile_strip<K23Tile<false>::Of, 16>(a); }
void strip_q3_K(const StripArgs& a) { tile_strip<K23Tile<true>::Of, 12>(a); }

}  // namespace kazeia::kernels::arm::dotprod
