// Q4_0, Q8_0, Q4_K, Q5_K and Q6_K prefill at i8mm on token groups: the
// SMMLA tiles of strip_i8mm.cpp (Q6_K: a first SMMLA form), with the
// activations paired once per matmul call instead of once per block of 4
// rows (K-quants: KGroups, Q6Groups below).
//
// An SMMLA takes two tokens' 8-byte pieces side by side (token 2j in bytes
// 0-7, 2j + 1 in 8-15). The strip tiles pair each token pair's block with
// four ZIPs and convert its two fp16 scales every time a block of 4 rows
// meets it: per (row pair, token pair) and block those ~9 instructions sat
// beside 8 for the SMMLAs and the float update. matmul builds token groups
// of 16 once per call (WeightKernels::tile_acts: ref/matmul.cpp), so here
// the tokens arrive paired: per block, pair j is its four SMMLA operands
// (64 bytes) and its scales as floats [d_2j, d_2j+1, d_2j, d_2j+1] in the
// accumulators' lane order (16 bytes; Q4_0 also its block sums' start,
// GroupLayout), loaded by two LDPs and one or two LDRs.
// The same integer sums and the same float update as the strip tiles (the
// reference's order): bit for bit. A group's last pair may hold one real
// token (the other zero, not stored); pairs past its real tokens are not
// computed.
#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/mmla_pairs.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::i8mm {
namespace {

constexpr int kGroupPairs = kGroupTokens / 2;
constexpr size_t kPairQuantBytes = 64;  // four SMMLA operands

// A group's layout per format. Q4_0 adds each pair's -8 * sum(x) (int32,
// [t0, t1, t0, t1]) as the start of its block sums, so its rows enter the
// SMMLAs as raw nibbles: sum((q - 8) x) = sum(q x) - 8 sum(x), the same
// integer, and no subtraction per row and block.
template <bool kOffsetStart>
struct GroupLayout {
  static constexpr size_t kScales = kPairQuantBytes;  // floats [d_t0, d_t1, d_t0, d_t1]
  static constexpr size_t kStart = kScales + 16;       // kOffsetStart: int32 [-8 s_t0, -8 s_t1, ...]
  static constexpr size_t kPairBytes = kStart + (kOffsetStart ? 16 : 0);
  static constexpr size_t kBlockBytes = kGroupPairs * kPairBytes;  // one block of 16 tokens
};

struct Q4_0Group : Q4_0Mmla {
  using Layout = GroupLayout<true>;
  static BlockQuants quants(const uint8_t* block) { return q4_quants<offsetof(BlockQ4_0, qs), 0>(block); }
};
struct Q8_0Group : Q8_0Mmla {
  using Layout = GroupLayout<false>;
};

// 4 rows x P token pairs: `pairs` is the first pair's entry of block 0 in
// its group, t0 its first token, n_tok (2P - 1 or 2P) the real tokens.
template <class F, int P>
struct GroupTile {
  static constexpr size_t kPairBytes = F::Layout::kPairBytes;
  static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, const uint8_t* pairs,
                  int64_t t0, int n_tok) {
    float32x4_t acc[2][P];  // [row pair][token pair]
    for (auto& row_pair : acc)
      for (auto& v : row_pair) v = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < a.n_in / kQK; ++b) {
      const RowPairs rp = row_pairs<F>(rows, b);
      using L = typename F::Layout;
      const uint8_t* xb = pairs + static_cast<size_t>(b) * L::kBlockBytes;
      for (int j = 0; j < P; ++j) {
        const uint8_t* p = xb + static_cast<size_t>(j) * L::kPairBytes;
        const Pairs x = {{load_s8x16(p), load_s8x16(p + 16), load_s8x16(p + 32), load_s8x16(p + 48)}};
        const float32x4_t dx = load_f32x4(p + L::kScales);
        int32x4_t start = vdupq_n_s32(0);
        if constexpr (L::kPairBytes > L::kStart) start = vreinterpretq_s32_u8(vld1q_u8(p + L::kStart));
        for (int i = 0; i < 2; ++i) {
          const ScaledSums s = scale_sums<F::kOrder>(vcvtq_f32_s32(block_2x2(rp.w[i], x, start)), rp.dw[i], dx);
          acc[i][j] = vfmaq_f32(acc[i][j], s.a, s.b);
        }
      }
    }
    for (int j = 0; j < P; ++j) {
      const int64_t t = t0 + 2 * j;
      store_rows(a.y + static_cast<size_t>(t) * a.ldy, vuzp1q_f32(acc[0][j], acc[1][j]), n_real);
      if (2 * j + 1 < n_tok) store_rows(a.y + static_cast<size_t>(t + 1) * a.ldy, vuzp2q_f32(acc[0][j], acc[1][j]), n_real);
    }
  }
};

template <class F>
struct LegacyGroups {
  template <int P>
  using Of = GroupTile<F, P>;
};

// Q8_K groups (Q4_K / Q5_K: kSums 8 sums of 32; Q6_K: 16 of 16): per
// super-block, a pair's 8 sub-blocks of 32 as SMMLA operands, its scales,
// and its sums split 128 h + l, each as int8 pieces of 8 (token 2j bytes
// 0-7, 2j + 1 bytes 8-15; kSums / 8 pieces of l, then of h).
template <int kSums>
struct Q8KGroupLayout {
  static constexpr size_t kScales = 8 * kPairQuantBytes;  // floats [d_t0, d_t1, d_t0, d_t1]
  static constexpr size_t kBsumLow = kScales + 16;
  static constexpr size_t kBsumHigh = kBsumLow + 2 * kSums;
  static constexpr size_t kPairBytes = kBsumHigh + 2 * kSums;
  static constexpr size_t kBlockBytes = kGroupPairs * kPairBytes;  // one super-block of 16 tokens
};
using KGroupLayout = Q8KGroupLayout<8>;
using Q6GroupLayout = Q8KGroupLayout<16>;

// Q4_K (kQ5 false) and Q5_K: per sub-block the rows' quants are paired
// as for Q4_0 and the token pairs' operands come from the group (a pair's
// sub-block s at 64 s); each row pair's and token pair's exact sub-block
// sums are scaled by the rows' six-bit scales in the accumulators' lane
// order into a super-block sum, as the strip tiles do. The mins term
// sum_s min_s * bsum_s (bsum_s: a token's sum over sub-block s) of a row
// pair and token pair is itself a 2x8 by 8x2 product: USMMLA takes the
// rows' eight mins (unsigned, < 64) against the group's bsums split as
// 128 h + l (l in 0..127, h in -32..31: both int8), two USMMLAs instead
// of eight multiply-adds per token. The float update is the row dot's
// (int8_dot_kernels.h), lane by lane in the pair layout:
// scaled += (d_w * d_x) * isum, mins += (dmin_w * d_x) * mins_term, and
// scaled - mins at the end: the row dot's floats, bit for bit.
template <bool kQ5>
struct KGroups {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;
  template <int P>
  struct Of {
    static constexpr size_t kPairBytes = KGroupLayout::kPairBytes;
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, const uint8_t* pairs,
                    int64_t t0, int n_tok) {
      float32x4_t scaled[2][P], mins[2][P];  // [row pair][token pair]
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < P; ++j) scaled[i][j] = mins[i][j] = vdupq_n_f32(0.0f);
      }
      for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
        const size_t at = sizeof(Block) * static_cast<size_t>(sb);
        const uint8_t* xb = pairs + static_cast<size_t>(sb) * KGroupLayout::kBlockBytes;
        const K4Scales ks = k4_scales(rows, at + offsetof(Block, scales));
        int32x4_t isum[2][P];
        for (auto& row_pair : isum)
          for (auto& v : row_pair) v = vdupq_n_s32(0);
        for (int s = 0; s < 8; ++s) {
          // Sub-block s: the low nibbles of bytes 32 (s / 2) .. + 31 for
          // even s, the high ones for odd s; Q5_K's fifth bits are bit s
          // of qh[0..31].
          int8x16_t w[kTileRows][2];
          for (int r = 0; r < kTileRows; ++r)
            for (int h = 0; h < 2; ++h)
              w[r][h] = k45_quants<kQ5>(vld1q_u8(rows[r] + at + offsetof(Block, qs) + 32 * (s / 2) + 16 * h),
                                        rows[r] + at + offsetof(BlockQ5_K, qh) + 16 * h, s);  // qh: Q5_K only
          const Pairs wp[2] = {pair_up(w[0][0], w[0][1], w[1][0], w[1][1]), pair_up(w[2][0], w[2][1], w[3][0], w[3][1])};
          const int32x4_t sc = ks.scale(s);
          const int32x4_t sp[2] = {vzip1q_s32(sc, sc), vzip2q_s32(sc, sc)};  // rows [2i, 2i, 2i+1, 2i+1]
          for (int j = 0; j < P; ++j) {
            const uint8_t* p = xb + static_cast<size_t>(j) * kPairBytes + static_cast<size_t>(s) * kPairQuantBytes;
            const Pairs x = {{load_s8x16(p), load_s8x16(p + 16), load_s8x16(p + 32), load_s8x16(p + 48)}};
            for (int i = 0; i < 2; ++i) isum[i][j] = vmlaq_s32(isum[i][j], block_2x2(wp[i], x), sp[i]);
          }
        }
        // Row r's eight mins as bytes 8 (r % 2) .. + 7 of its pair's operand.
        const uint32x4_t m_lo = vreinterpretq_u32_u8(ks.min_lo), m_hi = vreinterpretq_u32_u8(ks.min_hi);
        const uint8x16_t mp[2] = {vreinterpretq_u8_u32(vzip1q_u32(m_lo, m_hi)), vreinterpretq_u8_u32(vzip2q_u32(m_lo, m_hi))};
        const float32x4_t dw = row_halves(rows, at + offsetof(Block, d));
        const float32x4_t dmin = row_halves(rows, at + offsetof(Block, dmin));
        const float32x4_t dwp[2] = {vzip1q_f32(dw, dw), vzip2q_f32(dw, dw)};
        const float32x4_t dminp[2] = {vzip1q_f32(dmin, dmin), vzip2q_f32(dmin, dmin)};
        for (int j = 0; j < P; ++j) {
          const uint8_t* p = xb + static_cast<size_t>(j) * kPairBytes;
          const float32x4_t dx = load_f32x4(p + KGroupLayout::kScales);
          const int8x16_t b_lo = load_s8x16(p + KGroupLayout::kBsumLow), b_hi = load_s8x16(p + KGroupLayout::kBsumHigh);
          for (int i = 0; i < 2; ++i) {
            const int32x4_t mt = vmlaq_n_s32(vusmmlaq_s32(vdupq_n_s32(0), mp[i], b_lo),
                                             vusmmlaq_s32(vdupq_n_s32(0), mp[i], b_hi), 128);
            scaled[i][j] = vaddq_f32(scaled[i][j], vmulq_f32(vmulq_f32(dwp[i], dx), vcvtq_f32_s32(isum[i][j])));
            mins[i][j] = vaddq_f32(mins[i][j], vmulq_f32(vmulq_f32(dminp[i], dx), vcvtq_f32_s32(mt)));
          }
        }
      }
      for (int j = 0; j < P; ++j) {
        const int64_t t = t0 + 2 * j;
        store_rows(a.y + static_cast<size_t>(t) * a.ldy,
                   vsubq_f32(vuzp1q_f32(scaled[0][j], scaled[1][j]), vuzp1q_f32(mins[0][j], mins[1][j])), n_real);
        if (2 * j + 1 < n_tok)
          store_rows(a.y + static_cast<size_t>(t + 1) * a.ldy,
                     vsubq_f32(vuzp2q_f32(scaled[0][j], scaled[1][j]), vuzp2q_f32(mins[0][j], mins[1][j])), n_real);
      }
    }
  };
};

// Q6_K: a 32-element chunk c of the group's operands holds sub-blocks
// 2c (pieces 0-1) and 2c + 1 (pieces 2-3), 16 elements each, so each
// sub-block's sums take two SMMLAs and its own int8 scale. The rows enter
// as raw 6-bit quants (0..63); their -32 offset is
// -32 sum_s scale_s bsum_s over the 16 sub-blocks, a 2x16 by 16x2 product
// of the rows' scales and the tokens' 16-element sums (split 128 h + l as
// for Q4_K: 4 SMMLAs per row pair, token pair and super-block), added to
// the super-block sum. The float update is the row dot's:
// sum += (d_w * d_x) * isum, lane by lane in the pair layout.

// Sub-block k (16 elements) of half h of a Q6_K block: raw quants 0..63.
// Its low 4 bits are the low (k < 4) or high nibbles of ql bytes
// 64 h + 16 (k % 4) .., its top 2 bits bit pair k / 2 of qh bytes
// 32 h + 16 (k % 2) .. (the element order at BlockQ6_K).
inline uint8x16_t q6_quants(const uint8_t* block, int h, int k) {
  const uint8x16_t l = vld1q_u8(block + offsetof(BlockQ6_K, ql) + 64 * h + 16 * (k % 4));
  const uint8x16_t hb = vld1q_u8(block + offsetof(BlockQ6_K, qh) + 32 * h + 16 * (k % 2));
  const uint8x16_t nibble = k < 4 ? vandq_u8(l, vdupq_n_u8(0x0F)) : vshrq_n_u8(l, 4);
  uint8x16_t top;
  switch (k / 2) {
    case 0: top = vshlq_n_u8(hb, 4); break;
    case 1: top = vshlq_n_u8(hb, 2); break;
    case 2: top = hb; break;
    default: top = vshrq_n_u8(hb, 2); break;
  }
  return vorrq_u8(nibble, vandq_u8(top, vdupq_n_u8(0x30)));
}

template <int P>
struct Q6Groups {
  static constexpr size_t kPairBytes = Q6GroupLayout::kPairBytes;
  static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, const uint8_t* pairs,
                  int64_t t0, int n_tok) {
    using L = Q6GroupLayout;
    float32x4_t acc[2][P];  // [row pair][token pair]
    for (auto& row_pair : acc)
      for (auto& v : row_pair) v = vdupq_n_f32(0.0f);
    for (int64_t sb = 0; sb < a.n_in / kQK_K; ++sb) {
      const size_t at = sizeof(BlockQ6_K) * static_cast<size_t>(sb);
      const uint8_t* xb = pairs + static_cast<size_t>(sb) * L::kBlockBytes;
      // The rows' 16 scales: transposed (lane r: row r's bytes 4g .. 4g + 3
      // in sc4[g]) for the sub-block sums, paired in 8-byte pieces
      // (sub-blocks 0-7, 8-15) as the offset's SMMLA operands.
      int8x16_t sc4[4], raw[kTileRows];
      load_transposed(rows, at + offsetof(BlockQ6_K, scales), sc4);
      for (int r = 0; r < kTileRows; ++r) raw[r] = load_s8x16(rows[r] + at + offsetof(BlockQ6_K, scales));
      const int8x16_t sp[2][2] = {{zip_lo64(raw[0], raw[1]), zip_hi64(raw[0], raw[1])},
                                  {zip_lo64(raw[2], raw[3]), zip_hi64(raw[2], raw[3])}};
      int32x4_t isum[2][P];
      for (int j = 0; j < P; ++j) {
        const uint8_t* p = xb + static_cast<size_t>(j) * kPairBytes;
        const int8x16_t lo[2] = {load_s8x16(p + L::kBsumLow), load_s8x16(p + L::kBsumLow + 16)};
        const int8x16_t hi[2] = {load_s8x16(p + L::kBsumHigh), load_s8x16(p + L::kBsumHigh + 16)};
        for (int i = 0; i < 2; ++i) {
          const int32x4_t off_lo = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), sp[i][0], lo[0]), sp[i][1], lo[1]);
          const int32x4_t off_hi = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), sp[i][0], hi[0]), sp[i][1], hi[1]);
          isum[i][j] = vmlaq_n_s32(vmulq_n_s32(off_lo, -32), off_hi, -32 * 128);
        }
      }
      for (int c = 0; c < 8; ++c) {
        const int h = c / 4, k0 = 2 * (c % 4);
        int8x16_t w[kTileRows][2];
        for (int r = 0; r < kTileRows; ++r)
          for (int e = 0; e < 2; ++e) w[r][e] = vreinterpretq_s8_u8(q6_quants(rows[r] + at, h, k0 + e));
        const Pairs wp[2] = {pair_up(w[0][0], w[0][1], w[1][0], w[1][1]), pair_up(w[2][0], w[2][1], w[3][0], w[3][1])};
        // Sub-blocks 2c and 2c + 1's scales, rows [2i, 2i, 2i+1, 2i+1].
        int32x4_t scp[2][2];
        for (int e = 0; e < 2; ++e) {
          const int s = 2 * c + e;
          const int32x4_t g = vreinterpretq_s32_s8(sc4[s / 4]);
          const int32x4_t sc = vshrq_n_s32(vshlq_s32(g, vdupq_n_s32(24 - 8 * (s % 4))), 24);
          scp[0][e] = vzip1q_s32(sc, sc);
          scp[1][e] = vzip2q_s32(sc, sc);
        }
        for (int j = 0; j < P; ++j) {
          const uint8_t* p = xb + static_cast<size_t>(j) * kPairBytes + static_cast<size_t>(c) * kPairQuantBytes;
          const int8x16_t x[4] = {load_s8x16(p), load_s8x16(p + 16), load_s8x16(p + 32), load_s8x16(p + 48)};
          for (int i = 0; i < 2; ++i) {
            const int32x4_t s0 = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), wp[i].piece[0], x[0]), wp[i].piece[1], x[1]);
            const int32x4_t s1 = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), wp[i].piece[2], x[2]), wp[i].piece[3], x[3]);
            isum[i][j] = vmlaq_s32(vmlaq_s32(isum[i][j], s0, scp[i][0]), s1, scp[i][1]);
          }
        }
      }
      const float32x4_t dw = row_halves(rows, at + offsetof(BlockQ6_K, d));
      const float32x4_t dwp[2] = {vzip1q_f32(dw, dw), vzip2q_f32(dw, dw)};
      for (int j = 0; j < P; ++j) {
        const float32x4_t dx = load_f32x4(xb + static_cast<size_t>(j) * kPairBytes + L::kScales);
        for (int i = 0; i < 2; ++i)
          acc[i][j] = vaddq_f32(acc[i][j], vmulq_f32(vmulq_f32(dwp[i], dx), vcvtq_f32_s32(isum[i][j])));
      }
    }
    for (int j = 0; j < P; ++j) {
      const int64_t t = t0 + 2 * j;
      store_rows(a.y + static_cast<size_t>(t) * a.ldy, vuzp1q_f32(acc[0][j], acc[1][j]), n_real);
      if (2 * j + 1 < n_tok) store_rows(a.y + static_cast<size_t>(t + 1) * a.ldy, vuzp2q_f32(acc[0][j], acc[1][j]), n_real);
    }
  }
};

// Rows in groups of 4 (the last repeating its last real row), each times
// every token group in tiles of kWide, 4, 2 and 1 pairs (each narrower one
// at most once, for a group's real pairs past the wider tiles). Legacy
// formats: a whole group is one tile (16 accumulators), so each block of
// the 4 rows is unpacked once for it.
template <template <int> class Tile, int kWide>
void group_strip(const StripArgs& a) {
  static_assert(kWide == kGroupPairs || kWide == 4 || kWide == 2);
  for_token_groups(a, [](const StripArgs& at, const uint8_t* const* rows, int n_real, const uint8_t* group, int64_t g0,
                         int n_group) {
    const int n_pairs = (n_group + 1) / 2;
    int j = 0;
    auto tile = [&]<int P>(std::integral_constant<int, P>) {
      while (j + P <= n_pairs) {
        Tile<P>::run(at, rows, n_real, group + static_cast<size_t>(j) * Tile<P>::kPairBytes, g0 + 2 * j,
                     std::min(2 * P, n_group - 2 * j));
        j += P;
      }
    };
    tile(std::integral_constant<int, kWide>{});
    if constexpr (kWide > 4) tile(std::integral_constant<int, 4>{});
    if constexpr (kWide > 2) tile(std::integral_constant<int, 2>{});
    tile(std::integral_constant<int, 1>{});
  });
}

// fn(x, b, p) for every pair j of a group and block b: x the pair's
// tokens 2j and 2j + 1 of the n (<= 16) activation rows at q (q_stride
// apart) as rows of Block, null for a token past n (the group's padding);
// p the pair's entry of block b in out (layout L).
template <class Block, class L, class Fn>
inline void for_pair_blocks(int64_t n_blocks, const uint8_t* q, size_t q_stride, int n, uint8_t* out, Fn&& fn) {
  for (int j = 0; j < kGroupPairs; ++j) {
    const Block* x[2];
    for (int k = 0; k < 2; ++k)
      x[k] = 2 * j + k < n ? reinterpret_cast<const Block*>(q + static_cast<size_t>(2 * j + k) * q_stride) : nullptr;
    for (int64_t b = 0; b < n_blocks; ++b)
      fn(x, b, out + static_cast<size_t>(b) * L::kBlockBytes + static_cast<size_t>(j) * L::kPairBytes);
  }
}

// The 32 quants at qs[0] and qs[1] (null: zeros) paired as SMMLA operands
// into p (64 bytes); returns them as loaded.
struct TokenQuants {
  int8x16_t lo[2], hi[2];
};
inline TokenQuants store_operands(uint8_t* p, const int8_t* const qs[2]) {
  TokenQuants t;
  for (int k = 0; k < 2; ++k) {
    t.lo[k] = qs[k] != nullptr ? vld1q_s8(qs[k]) : vdupq_n_s8(0);
    t.hi[k] = qs[k] != nullptr ? vld1q_s8(qs[k] + 16) : vdupq_n_s8(0);
  }
  const Pairs xp = pair_up(t.lo[0], t.hi[0], t.lo[1], t.hi[1]);
  for (int e = 0; e < 4; ++e) vst1q_s8(reinterpret_cast<int8_t*>(p) + 16 * e, xp.piece[e]);
  return t;
}

// Q8_0 rows paired block by block (GroupLayout L); a pair's missing token
// is zero (quants, scale and sum).
template <class L>
void build_group(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  for_pair_blocks<BlockQ8_0, L>(n_in / kQK, q, q_stride, n, out, [](const BlockQ8_0* const x[2], int64_t b, uint8_t* p) {
    const int8_t* qs[2];
    float d[2];
    for (int k = 0; k < 2; ++k) {
      qs[k] = x[k] != nullptr ? x[k][b].qs : nullptr;
      d[k] = x[k] != nullptr ? half_to_float(x[k][b].d) : 0.0f;
    }
    const TokenQuants t = store_operands(p, qs);
    const float scales[4] = {d[0], d[1], d[0], d[1]};
    std::memcpy(p + L::kScales, scales, sizeof(scales));
    if constexpr (L::kPairBytes > L::kStart) {
      int32_t sum[2];
      for (int k = 0; k < 2; ++k) sum[k] = -8 * (vaddlvq_s8(t.lo[k]) + vaddlvq_s8(t.hi[k]));
      const int32_t start[4] = {sum[0], sum[1], sum[0], sum[1]};
      std::memcpy(p + L::kStart, start, sizeof(start));
    }
  });
}

// The Q8_K rows' counterpart (Q8KGroupLayout): per super-block, each
// pair's 8 sub-blocks of operands, its scales and its kSums sums (of
// 256 / kSums of Q8_K's 16-element bsums each), split: |sum| <= 32 * 128,
// so h = sum >> 7 is in -32..31 and l = sum & 127.
template <int kSums>
void build_k_group(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  using L = Q8KGroupLayout<kSums>;
  constexpr int kPer = 16 / kSums;  // bsums per sum
  for_pair_blocks<BlockQ8_K, L>(n_in / kQK_K, q, q_stride, n, out, [](const BlockQ8_K* const x[2], int64_t b, uint8_t* p) {
    for (int s = 0; s < 8; ++s) {
      const int8_t* qs[2];
      for (int k = 0; k < 2; ++k) qs[k] = x[k] != nullptr ? x[k][b].qs + 32 * s : nullptr;
      store_operands(p + kPairQuantBytes * s, qs);
    }
    float d[2];
    int8_t low[kSums / 8][16], high[kSums / 8][16];
    for (int k = 0; k < 2; ++k) {
      d[k] = x[k] != nullptr ? x[k][b].d : 0.0f;
      for (int s = 0; s < kSums; ++s) {
        int sum = 0;
        for (int u = 0; u < kPer && x[k] != nullptr; ++u) sum += x[k][b].bsums[kPer * s + u];
        low[s / 8][8 * k + s % 8] = static_cast<int8_t>(sum & 127);
        high[s / 8][8 * k + s % 8] = static_cast<int8_t>(sum >> 7);
      }
    }
    const float scales[4] = {d[0], d[1], d[0], d[1]};
    std::memcpy(p + L::kScales, scales, sizeof(scales));
    std::memcpy(p + L::kBsumLow, low, sizeof(low));
    std::memcpy(p + L::kBsumHigh, high, sizeof(high));
  });
}

}  // namespace

size_t token_group_bytes_q4_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q4_0Group::Layout::kBlockBytes; }
size_t token_group_bytes_q8_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q8_0Group::Layout::kBlockBytes; }
size_t token_group_bytes_k(int64_t n_in) { return static_cast<size_t>(n_in / kQK_K) * KGroupLayout::kBlockBytes; }
void build_token_group_q4_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q4_0Group::Layout>(n_in, q, q_stride, n, out);
}
void build_token_group_q8_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q8_0Group::Layout>(n_in, q, q_stride, n, out);
}
void build_token_group_k(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_k_group<8>(n_in, q, q_stride, n, out);
}
size_t token_group_bytes_q6_K(int64_t n_in) { return static_cast<size_t>(n_in / kQK_K) * Q6GroupLayout::kBlockBytes; }
void build_token_group_q6_K(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_k_group<16>(n_in, q, q_stride, n, out);
}

// Tiles of 8 pairs (a whole group) measured against narrower ones
// (instructions per (row, token, 32 weights), 16 x 1024, 32 tokens,
// tools/arm_instruction_count.sh): Q4_0 3.79 / 4.17 / 4.17 at 8 / 6 / 4
// pairs, Q8_0 3.59 / 3.80 / 3.83 (before Q4_0's offset start: 3.60 with
// it); Q4_K 4.51 / 5.31 / 6.15 at 8 / 4 / 2 pairs, Q5_K 5.07 / 6.54 /
// 8.52; Q6_K 6.54 / 9.18 at 8 / 4 pairs. The accumulators (legacy 16,
// Q6_K 32, Q4_K / Q5_K 48) spill a few registers each block, and still
// win by unpacking the rows once per group (Q6_K's float sums kept in
// memory, updated once per super-block: 6.51, so not what spills).
// Taking the row pairs one after the other (4 weight operands live, each
// pair's activations loaded twice): Q4_0 3.97.
void group_strip_q4_0(const StripArgs& a) { group_strip<LegacyGroups<Q4_0Group>::Of, kGroupPairs>(a); }
void group_strip_q8_0(const StripArgs& a) { group_strip<LegacyGroups<Q8_0Group>::Of, kGroupPairs>(a); }
void group_strip_q4_K(const StripArgs& a) { group_strip<KGroups<false>::Of, 8>(a); }
void group_strip_q5_K(const StripArgs& a) { group_strip<KGroups<true>::Of, 8>(a); }
void group_strip_q6_K(const StripArgs& a) { group_strip<Q6Groups, kGroupPairs>(a); }

}  // namespace kazeia::kernels::arm::i8mm
