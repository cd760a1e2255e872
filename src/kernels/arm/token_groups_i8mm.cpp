// Q4_0 and Q8_0 prefill at i8mm on token groups: the SMMLA tiles of
// strip_i8mm.cpp, with the activations paired once per matmul call instead
// of once per block of 4 rows.
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

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/mmla_pairs.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::i8mm {
namespace {

constexpr int kGroupTokens = 16;  // matmul's token groups
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

// Rows in groups of 4 (the last repeating its last real row), each times
// every token group in tiles of 8, 4, 2 and 1 pairs: a whole group is one
// tile (16 accumulators), so each block of the 4 rows is unpacked once for
// it; a group's real pairs past the whole tiles take each narrower one at
// most once.
template <class F>
void group_strip(const StripArgs& a) {
  const int64_t n_tokens = a.x.n_tokens;
  for (int64_t r0 = 0; r0 < a.n_rows; r0 += kTileRows) {
    const uint8_t* rows[kTileRows];
    const int n_real = group_rows(a, r0, rows);
    StripArgs at = a;
    at.y = a.y + r0;
    for (int64_t g0 = 0; g0 < n_tokens; g0 += kGroupTokens) {
      const uint8_t* group = a.tiles + static_cast<size_t>(g0 / kGroupTokens) * a.tile_group_bytes;
      const int n_group = static_cast<int>(std::min<int64_t>(kGroupTokens, n_tokens - g0));
      const int n_pairs = (n_group + 1) / 2;
      int j = 0;
      auto tile = [&]<int P>(std::integral_constant<int, P>) {
        if (j + P > n_pairs) return;
        GroupTile<F, P>::run(at, rows, n_real, group + static_cast<size_t>(j) * F::Layout::kPairBytes, g0 + 2 * j,
                             std::min(2 * P, n_group - 2 * j));
        j += P;
      };
      tile(std::integral_constant<int, kGroupPairs>{});
      tile(std::integral_constant<int, 4>{});
      tile(std::integral_constant<int, 2>{});
      tile(std::integral_constant<int, 1>{});
    }
  }
}

// Tokens 2j and 2j + 1 of the n (<= 16) rows at q, q_stride apart, paired
// block by block; a pair's missing token is zero (quants and scale).
template <class L>
void build_group(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  const int64_t n_blocks = n_in / kQK;
  for (int j = 0; j < kGroupPairs; ++j) {
    const BlockQ8_0* x[2];
    for (int k = 0; k < 2; ++k)
      x[k] = 2 * j + k < n ? reinterpret_cast<const BlockQ8_0*>(q + static_cast<size_t>(2 * j + k) * q_stride) : nullptr;
    for (int64_t b = 0; b < n_blocks; ++b) {
      uint8_t* p = out + static_cast<size_t>(b) * L::kBlockBytes + static_cast<size_t>(j) * L::kPairBytes;
      int8x16_t lo[2], hi[2];
      float d[2];
      for (int k = 0; k < 2; ++k) {
        lo[k] = x[k] != nullptr ? vld1q_s8(x[k][b].qs) : vdupq_n_s8(0);
        hi[k] = x[k] != nullptr ? vld1q_s8(x[k][b].qs + 16) : vdupq_n_s8(0);
        d[k] = x[k] != nullptr ? half_to_float(x[k][b].d) : 0.0f;
      }
      const Pairs xp = pair_up(lo[0], hi[0], lo[1], hi[1]);
      for (int e = 0; e < 4; ++e) vst1q_s8(reinterpret_cast<int8_t*>(p) + 16 * e, xp.piece[e]);
      const float scales[4] = {d[0], d[1], d[0], d[1]};
      std::memcpy(p + L::kScales, scales, sizeof(scales));
      if constexpr (L::kPairBytes > L::kStart) {
        int32_t s[2];
        for (int k = 0; k < 2; ++k) s[k] = -8 * (vaddlvq_s8(lo[k]) + vaddlvq_s8(hi[k]));
        const int32_t start[4] = {s[0], s[1], s[0], s[1]};
        std::memcpy(p + L::kStart, start, sizeof(start));
      }
    }
  }
}

}  // namespace

size_t token_group_bytes_q4_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q4_0Group::Layout::kBlockBytes; }
size_t token_group_bytes_q8_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q8_0Group::Layout::kBlockBytes; }
void build_token_group_q4_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q4_0Group::Layout>(n_in, q, q_stride, n, out);
}
void build_token_group_q8_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q8_0Group::Layout>(n_in, q, q_stride, n, out);
}

// Tiles of 8 pairs measured against 6 and 4 (instructions per (row,
// token, 32 weights), 16 x 1024, 32 tokens, tools/arm_instruction_count.sh):
// Q4_0 3.79 / 4.17 / 4.17, Q8_0 3.59 / 3.80 / 3.83 - the 16 accumulators
// spill a few registers each block, and still win by unpacking the rows
// once per group. Taking the row pairs one after the other (4 weight
// operands live, each pair's activations loaded twice): Q4_0 3.97.
void group_strip_q4_0(const StripArgs& a) { group_strip<Q4_0Group>(a); }
void group_strip_q8_0(const StripArgs& a) { group_strip<Q8_0Group>(a); }

}  // namespace kazeia::kernels::arm::i8mm
