// Q4_0, Q8_0, Q4_K and Q5_K strips with the Armv8.6 8-bit matrix multiply
// (compiled with +i8mm, only called when the CPU has it): 4 rows x 2-12
// tokens per block (K-quants: per sub-block, 2-8 tokens) as 2 x 2 SMMLA
// tiles.
//
// SMMLA multiplies a 2x8 int8 matrix (rows in bytes 0-7 and 8-15) by an 8x2
// one (columns likewise) into a 2x2 int32 accumulator: 32 products an
// instruction, twice SDOT's 16. Per block, rows 2i and 2i + 1 are
// interleaved in 8-byte pieces (ZIP1 / ZIP2 on 64-bit lanes), as are
// tokens 2j and 2j + 1, and four SMMLAs over the block's four pieces give
// accumulator (i, j) = [r2i.t2j, r2i.t2j+1, r2i+1.t2j, r2i+1.t2j+1], the
// exact block sums. Their float update is the reference's (Q4_0:
// fma(sumi * d_w, d_x, acc); Q8_0: fma(d_w * d_x, sumi, acc)) with the
// scales laid out as the lanes are: every output is the reference dot of
// its row and token, bit for bit (given no contraction,
// cmake/ArmCrossBuild.cmake). One token (decode) takes the SDOT tile: a
// pair of tokens would be half padding.
//
// Instructions executed per (row, token, 32 weights), 1024-input rows, 16
// rows (tools/arm_instruction_count.sh, ARM_COUNT_LEVEL=i8mm), SMMLA /
// SDOT tiles: 2 tokens Q4_0 9.5 / 10.4, Q8_0 8.0 / 9.7; 4 tokens Q4_0 7.0 /
// 7.9, Q8_0 6.2 / 7.3 - and each SMMLA makes twice the products of an
// SDOT; 24 tokens in tiles of 12 (tile_strip) Q4_0 5.55 / 6.24, Q8_0
// 5.21 / 6.00. (A 2x2 SMMLA tile per pair of rows and tokens with its own
// float chain, the first i8mm kernel, took 13.8 / 12.3 a pair in its
// loop.)
// K-quants, SMMLA / SDOT tiles: 2 tokens Q4_K 8.93 / 10.21, Q5_K 14.20 /
// 15.14; 4 tokens Q4_K 7.33 / 7.37, Q5_K 9.65 / 10.62 (3 tokens, a
// padded pair: Q4_K 9.08 / 8.50) - half the multiply instructions, and
// fewer vector ones (the SDOT tile's transposes and lane sums become the
// pairing ZIPs). Q6_K keeps its SDOT tile.
//
// matmul sends Q4_0, Q8_0, Q4_K and Q5_K batches of more than 4 tokens
// (Q6_K: 8) to the token groups of token_groups_i8mm.cpp instead (the
// tokens paired once per call); these strips take 2-4 tokens there (a
// speculative batch).
#include <arm_neon.h>

#include <cstddef>
#include <type_traits>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/mmla_pairs.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::i8mm {
namespace {

// Tokens t and t + 1 (the second only when real) from the accumulators
// of the two row pairs, lanes [r2i.t, r2i.t+1, r2i+1.t, r2i+1.t+1]:
// token t is lanes 0 and 2 of both, t + 1 lanes 1 and 3; each minus its
// rows-in-lanes `minus` (the K-quants' mins term; 0 leaves every value,
// -0 included, as it is).
inline void store_pair(const StripArgs& a, int64_t t, bool second, int n_real, float32x4_t pair0, float32x4_t pair1,
                       float32x4_t minus0 = vdupq_n_f32(0.0f), float32x4_t minus1 = vdupq_n_f32(0.0f)) {
  store_rows(a.y + static_cast<size_t>(t) * a.ldy, vsubq_f32(vuzp1q_f32(pair0, pair1), minus0), n_real);
  if (second) store_rows(a.y + static_cast<size_t>(t + 1) * a.ldy, vsubq_f32(vuzp2q_f32(pair0, pair1), minus1), n_real);
}

// A token missing from the last pair (C = 1 or 3: a batch's leftover)
// repeats the last real one; its results are not stored.
template <class F>
struct MmlaTile {
  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      static_assert(C >= 1 && C <= 12);
      constexpr int kPairs = (C + 1) / 2;
      const BlockQ8_0* x[2 * kPairs];
      token_rows(a, t0, C, x);
      float32x4_t acc[2][kPairs];  // [row pair][token pair]
      for (auto& row_pair : acc)
        for (auto& v : row_pair) v = vdupq_n_f32(0.0f);
      for (int64_t b = 0; b < a.n_in / kQK; ++b) {
        const RowPairs rp = row_pairs<F>(rows, b);
        for (int j = 0; j < kPairs; ++j) {
          const BlockQ8_0& x0 = x[2 * j][b];
          const BlockQ8_0& x1 = x[2 * j + 1][b];
          const Pairs xp = pair_up(vld1q_s8(x0.qs), vld1q_s8(x0.qs + 16), vld1q_s8(x1.qs), vld1q_s8(x1.qs + 16));
          // Tokens [2j, 2j+1, 2j, 2j+1].
          const float32x4_t dx = halves_to_f32x4(x0.d, x1.d, x0.d, x1.d);
          for (int i = 0; i < 2; ++i) {
            const ScaledSums s = scale_sums<F::kOrder>(vcvtq_f32_s32(block_2x2(rp.w[i], xp)), rp.dw[i], dx);
            acc[i][j] = vfmaq_f32(acc[i][j], s.a, s.b);
          }
        }
      }
      for (int j = 0; j < kPairs; ++j) store_pair(a, t0 + 2 * j, 2 * j + 1 < C, n_real, acc[0][j], acc[1][j]);
    }
  };
};

// Q4_K (kQ5 false) and Q5_K: per sub-block (32 elements) the rows'
// quants are paired as for Q4_0 and four SMMLAs give each row pair's and
// token pair's exact sub-block sums; they are scaled by the rows' six-bit
// scales ([s_2i, s_2i, s_2i+1, s_2i+1], the accumulator's lane order)
// into a super-block sum per lane. The float update is the SDOT tile's and
// the row dot's, lane by lane: scaled += (d_w * d_x) * isum in the pair
// layout, the mins term in the rows-in-lanes layout of the SDOT tile
// (K4Scales::mins_term), the two brought together once at the end: every
// output is the row dot's float, bit for bit.
template <bool kQ5>
struct K45Mmla {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;
  // Q4_K loads a chunk's qs bytes once for its two sub-blocks (kPerLoad 2;
  // 4 tokens: 7.33 instructions per (row, token, 32 weights) against 7.52
  // loading them per sub-block; 2 tokens 8.93 / 10.01); Q5_K, with its qh
  // bytes live as well, per sub-block (10.41 / 9.75 and 15.19 / 14.72), and
  // so does Q4_K's tile of 8 tokens (6.88 / 8.30: their sums and
  // accumulators fill the registers).

  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      static_assert(C >= 1 && C <= 8);
      constexpr int kPairs = (C + 1) / 2;
      constexpr int kPerLoad = kQ5 || C > 4 ? 1 : 2;
      const BlockQ8_K* x[2 * kPairs];
      token_rows(a, t0, C, x);
      float32x4_t scaled[2][kPairs], mins[C];
      for (auto& row_pair : scaled)
        for (auto& v : row_pair) v = vdupq_n_f32(0.0f);
      for (auto& v : mins) v = vdupq_n_f32(0.0f);
      for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
        const size_t at = sizeof(Block) * static_cast<size_t>(sb);
        const K4Scales ks = k4_scales(rows, at + offsetof(Block, scales));
        // The sub-blocks' scales in the accumulators' lane order, unpacked
        // once per super-block (unpacked in the loop: 7 instructions a
        // sub-block).
        int32x4_t scale_pairs[8][2];
        for (int s = 0; s < 8; ++s) {
          const int32x4_t sc = ks.scale(s);
          scale_pairs[s][0] = vzip1q_s32(sc, sc);
          scale_pairs[s][1] = vzip2q_s32(sc, sc);
        }
        int32x4_t isum[2][kPairs];
        for (auto& row_pair : isum)
          for (auto& v : row_pair) v = vdupq_n_s32(0);
        // Groups of kPerLoad sub-blocks share one load of their qs bytes
        // (sub-block s: the low nibbles of bytes 32 (s / 2) .. + 31 for even
        // s, the high ones for odd s). Q5_K's fifth bits are bit s of
        // qh[0..31].
        for (int g = 0; g < 8 / kPerLoad; ++g) {
          uint8x16_t b[kTileRows][2];
          for (int r = 0; r < kTileRows; ++r)
            for (int i = 0; i < 2; ++i)
              b[r][i] = vld1q_u8(rows[r] + at + offsetof(Block, qs) + 32 * (g * kPerLoad / 2) + 16 * i);
          for (int k = 0; k < kPerLoad; ++k) {
            const int s = g * kPerLoad + k;
            int8x16_t w[kTileRows][2];
            for (int r = 0; r < kTileRows; ++r)
              for (int i = 0; i < 2; ++i)
                w[r][i] = k45_quants<kQ5>(b[r][i], rows[r] + at + offsetof(BlockQ5_K, qh) + 16 * i, s);  // qh: Q5_K only
            const Pairs wp[2] = {pair_up(w[0][0], w[0][1], w[1][0], w[1][1]),
                                 pair_up(w[2][0], w[2][1], w[3][0], w[3][1])};
            const int32x4_t* sp = scale_pairs[s];
            for (int j = 0; j < kPairs; ++j) {
              const int8_t* x0 = x[2 * j][sb].qs + 32 * s;
              const int8_t* x1 = x[2 * j + 1][sb].qs + 32 * s;
              const Pairs xp = pair_up(vld1q_s8(x0), vld1q_s8(x0 + 16), vld1q_s8(x1), vld1q_s8(x1 + 16));
              for (int i = 0; i < 2; ++i) isum[i][j] = vmlaq_s32(isum[i][j], block_2x2(wp[i], xp), sp[i]);
            }
          }
        }
        const float32x4_t dw = row_halves(rows, at + offsetof(Block, d));
        const float32x4_t dwp[2] = {vzip1q_f32(dw, dw), vzip2q_f32(dw, dw)};
        for (int j = 0; j < kPairs; ++j) {
          const float d2[2] = {x[2 * j][sb].d, x[2 * j + 1][sb].d};
          const float32x2_t dx2 = vld1_f32(d2);
          const float32x4_t dx = vcombine_f32(dx2, dx2);  // tokens [2j, 2j+1, 2j, 2j+1]
          for (int i = 0; i < 2; ++i)
            scaled[i][j] = vaddq_f32(scaled[i][j], vmulq_f32(vmulq_f32(dwp[i], dx), vcvtq_f32_s32(isum[i][j])));
        }
        const float32x4_t dmin = row_halves(rows, at + offsetof(Block, dmin));
        for (int c = 0; c < C; ++c) mins[c] = add_scaled(mins[c], dmin, x[c][sb].d, ks.mins_term(x[c][sb]));
      }
      for (int j = 0; j < kPairs; ++j) {
        const bool second = 2 * j + 1 < C;
        store_pair(a, t0 + 2 * j, second, n_real, scaled[0][j], scaled[1][j], mins[2 * j],
                   second ? mins[2 * j + 1] : vdupq_n_f32(0.0f));
      }
    }
  };
};

}  // namespace

void strip_q4_0(const StripArgs& a) {
  if (a.x.n_tokens == 1) return dotprod::strip_q4_0(a);
  tile_strip<MmlaTile<Q4_0Mmla>::Of, 12>(a);
}
void strip_q8_0(const StripArgs& a) {
  if (a.x.n_tokens == 1) return dotprod::strip_q8_0(a);
  tile_strip<MmlaTile<Q8_0Mmla>::Of, 12>(a);
}
// Q4_K and Q5_K batches of 12 tokens and more take the SDOT tiles of 12
// (24 tokens: Q4_K 6.27 against the SMMLA tiles' 6.56 at 12 and 6.88 at 8,
// Q5_K 7.29 against 7.53 / 7.99): past 8 tokens the SMMLA tile's float
// accumulators (two layouts, scaled and mins) crowd out its sums.
void strip_q4_K(const StripArgs& a) {
  if (a.x.n_tokens == 1 || a.x.n_tokens >= 12) return dotprod::strip_q4_K(a);
  tile_strip<K45Mmla<false>::Of, 8>(a);
}
void strip_q5_K(const StripArgs& a) {
  if (a.x.n_tokens == 1 || a.x.n_tokens >= 12) return dotprod::strip_q5_K(a);
  tile_strip<K45Mmla<true>::Of, 8>(a);
}

}  // namespace kazeia::kernels::arm::i8mm
