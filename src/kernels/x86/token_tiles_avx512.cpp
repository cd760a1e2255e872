// AVX-512 VNNI prefill strips for Q4_0 and Q8_0 weights (x Q8_0
// activations) with the tokens in the lanes: 16 weight rows x 16 tokens per
// tile, the AMX strip's data layout (kernels_amx.cpp) computed with vpdpbusd.
//
// Why not the rows-in-lanes strips (strip_runner.h) for a big batch: there
// each activation word is broadcast from its token's row, so a tile of 8
// tokens keeps 16 row pointers live (q and aux) - more than x86 has
// registers; GCC parks half of them in vector registers and moves one back
// (vmovq, on the port vpdpbusd needs) before every other dot. Q4_0's stream
// layout also spends 18 dots on 16 words per pair of blocks. Here the
// activations of 16 tokens are interleaved once per matmul call (tile_acts),
// so one pointer reaches them all and each 64-byte word vector of a block
// meets the 16 rows' weight words, broadcast from the strip's panel.
//
// vpdpbusd multiplies unsigned by signed bytes: the weights enter unsigned
// (Q4_0: the stored nibbles, Q8_0: q + 128, stored as q ^ 0x80), broadcast
// one 4-byte word per row, and the activations signed, as quantized. Each
// (row, block) chain starts from the token group's corr = -bias * sum(x) of
// the block (bias 8 / 128, one vector per block, made by tile_acts), so the
// integer block sum is exactly the reference's. The float update is the
// reference's, vectorised over the 16 tokens:
//   Q4_0: acc = fma(sumi * d_w, d_x, acc)   Q8_0: acc = fma(d_w * d_x, sumi, acc)
// so the results are bit-identical to ref::vec_dot_q4_0 / _q8_0.
#include "kernels/x86/exact_float.h"  // first: before any code

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/static_for.h"
#include "kernels/x86/token_tile_walk.h"
#include "kernels/x86/token_groups_avx512.h"
#include "kernels/x86/x86_kernels.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::x86 {
namespace {

constexpr int kBlock = 32;
constexpr int kTokens = 16;  // tokens per group (lanes)
constexpr int kRows = 16;    // weight rows per strip
static_assert(kTokens == kTileGroupTokens && kRows == kTileStripRows);  // token_tile_walk.h
// Per block of the strip's panel: the 16 rows' 32 unsigned quants, then
// their scales (float).
constexpr size_t kPanelScales = kRows * kBlock;
constexpr size_t kPanelBlockBytes = kPanelScales + 64;

// The activations: groups of 16 tokens with corr = -bias * sum(x) per block
// (token_groups_avx512.h), bias 8 for Q4_0 weights, 128 for Q8_0.
template <bool kQ4>
using Group = Q8Group<kQ4 ? 8 : 128>;

// Blocks [b0, b1) of the strip's 16 rows (the last real row repeated)
// unpacked into the panel, block b0 first. Block by block, the 16 rows'
// scales in one gather: with one or two token groups a strip, the unpacking
// costs as much as the products, and row by row (a scalar scale conversion
// per row and block) it made small batches slower than the rows-in-lanes
// strips.
template <bool kQ4>
void pack_panel(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) {
  constexpr size_t kBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const uint8_t* rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = a.w + static_cast<size_t>(r < a.n_rows ? r : a.n_rows - 1) * a.w_stride;
  const __m512i idx = Avx512::row_offsets(a.w_stride, a.n_rows);  // the same rows, for the scales' gather
  const __m128i nib = _mm_set1_epi8(0x0F);
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = b0; b < b1; ++b) {
    const size_t at = static_cast<size_t>(b) * kBytes;
    uint8_t* pb = panel + static_cast<size_t>(b - b0) * kPanelBlockBytes;
    const __m512i d = _mm512_i32gather_epi32(idx, a.w + at, 1);  // low half: the fp16 scale
    _mm512_store_ps(pb + kPanelScales, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* blk = rows[r] + at;
      if constexpr (kQ4) {  // elements j and j + 16 share byte j
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m256i w = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), nib), _mm_and_si128(q, nib));
        _mm256_store_si256(reinterpret_cast<__m256i*>(pb + r * kBlock), w);
      } else {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        _mm256_store_si256(reinterpret_cast<__m256i*>(pb + r * kBlock), _mm256_xor_si256(q, bias));
      }
    }
  }
}

// Rows kFirst .. kFirst + 7 of kN (1 or 2) consecutive blocks of one token
// group into their accumulators. A (row, block) chain is 8 dependent
// vpdpbusd of ~6 cycles each; measured here, both vector ports stay busy
// only with 12 or more independent chains (8: 1.3 dots per cycle, 16: 1.8).
// Two blocks of 8 rows give 16, word by word side by side; 16 rows of one
// block would need 16 accumulators more than there are registers for.
template <bool kQ4, int kFirst, int kN>
[[gnu::always_inline]] inline void tile_blocks(const uint8_t* act, const uint8_t* pb, __m512 acc[8]) {
  __m512i s[kN][8];
  static_for<kN>([&](auto k) {
    const __m512i corr = _mm512_loadu_si512(act + k * Group<kQ4>::kBlockBytes + Group<kQ4>::kCorr);
    static_for<8>([&](auto i) { s[k][i] = corr; });
  });
  static_for<8>([&](auto w) {
    static_for<kN>([&](auto k) {
      const __m512i x = _mm512_loadu_si512(act + k * Group<kQ4>::kBlockBytes + 64 * w);
      static_for<8>([&](auto i) {
        const uint8_t* wp = pb + k * kPanelBlockBytes + kBlock * (kFirst + i) + 4 * w;
        s[k][i] = _mm512_dpbusd_epi32(s[k][i], Avx512::bcst32(wp), x);
      });
    });
  });
  static_for<kN>([&](auto k) {  // blocks in order: the reference's float sequence
    const __m512 dx = _mm512_loadu_ps(act + k * Group<kQ4>::kBlockBytes + Group<kQ4>::kScales);
    static_for<8>([&](auto i) {
      float dw;
      std::memcpy(&dw, pb + k * kPanelBlockBytes + kPanelScales + 4 * (kFirst + i), sizeof(dw));
      const __m512 sumi = _mm512_cvtepi32_ps(s[k][i]);
      if constexpr (kQ4) {
        acc[i] = _mm512_fmadd_ps(_mm512_mul_ps(sumi, _mm512_set1_ps(dw)), dx, acc[i]);
      } else {
        acc[i] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(dw), dx), sumi, acc[i]);
      }
    });
  });
}

// Q4_0 / Q8_0 as a token-tile format (token_tile_strip below): 32-element
// blocks, chunks of 32.
template <bool kQ4>
struct LegacyTiles {
  using Group = x86::Group<kQ4>;
  static constexpr int64_t kElems = kBlock;
  static constexpr size_t kActBytes = Group::kBlockBytes, kPanelBytes = kPanelBlockBytes;
  static constexpr int64_t kChunk = 32;
  static void pack(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) { pack_panel<kQ4>(a, b0, b1, panel); }
  // Rows kFirst .. kFirst + 7 of a token group over nb blocks.
  template <int kFirst>
  [[gnu::always_inline]] static void rows(const uint8_t* group, const uint8_t* panel, int64_t nb, __m512 acc[8]) {
    int64_t b = 0;
#pragma GCC unroll 1
    for (; b + 2 <= nb; b += 2)
      tile_blocks<kQ4, kFirst, 2>(group + static_cast<size_t>(b) * kActBytes, panel + static_cast<size_t>(b) * kPanelBytes, acc);
    if (b < nb)
      tile_blocks<kQ4, kFirst, 1>(group + static_cast<size_t>(b) * kActBytes, panel + static_cast<size_t>(b) * kPanelBytes, acc);
  }
};

// flatten: the static_for lambdas inlined too (left out of line, the
// accumulators go through memory).
// Chunks of F::kChunk blocks (token_tile_walk.h), their panel (18-20 KB)
// in L1. Whole Q8_0 rows of 96 blocks (a 60 KB panel, read from L2):
// Qwen3-0.6B Q8_0 pp512 ~5 % slower (whole process, 6 alternating pairs);
// chunks of 16: as fast as 32. The prefetched slices of the next strip
// made small batches of Q8_0 as fast as the rows-in-lanes strips, whose
// decoders prefetch the same way.
// F: the format (LegacyTiles): block size, panel and activation bytes per
// block, pack() and rows() - a policy, so other block formats can follow.
template <class F>
[[gnu::flatten]] void token_tile_strip(const StripArgs& a) {
  float* const acc_buf = token_tile_accumulators<F>(a);  // between chunks
  // Each token's 16 results are one cache line of y when the rows are whole
  // and y is line-aligned: written without reading the line first.
  const bool stream = a.stream_lines();
  const int64_t n_tok = a.x.n_tokens;
  walk_token_tiles<F>(a, [&](const uint8_t* group, const uint8_t* panel, int64_t n, int64_t g, bool first, bool last) {
    float* saved = acc_buf + g * kRows * kTokens;  // used when the row takes several chunks
    // Rows 0-7 over the chunk's blocks, then rows 8-15 (the group's
    // activations are read twice, from L1 or L2).
    __m512 acc[kRows];
    static_for<kRows>([&](auto r) { acc[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(saved + kTokens * r); });
    F::template rows<0>(group, panel, n, acc);
    F::template rows<8>(group, panel, n, acc + 8);
    if (!last) {
      static_for<kRows>([&](auto r) { _mm512_storeu_ps(saved + kTokens * r, acc[r]); });
      return;
    }
    // acc[r] holds row r for the 16 tokens; y wants each token's rows side
    // by side.
    const int64_t t0 = g * kTokens;
    store_token_rows(acc, a.y + static_cast<size_t>(t0) * a.ldy, a.ldy, n_tok - t0 < kTokens ? n_tok - t0 : kTokens,
                     static_cast<int>(a.n_rows), stream);
  });
  if (stream) _mm_sfence();  // visible to whoever reads y after this returns
}

}  // namespace

void fill_avx512_token_tiles(KernelTable& table) {
  for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0}) {
    WeightKernels& k = table.weights[static_cast<int>(type)];
    const bool q4 = type == TensorType::Q4_0;
    if (q4) {
      set_token_tiles<LegacyTiles<true>, false>(k, &token_tile_strip<LegacyTiles<true>>, "avx512");
    } else {
      set_token_tiles<LegacyTiles<false>, false>(k, &token_tile_strip<LegacyTiles<false>>, "avx512");
    }
    // Where the tiles start to win (Qwen3-0.6B, 2 threads, kazeia bench -p N,
    // 2 alternating rounds, tiles / rows-in-lanes t/s): Q4_0 10 tokens
    // 181 / 168 and 199 / 172, 12 a tie; Q8_0 (twice the bytes to unpack) 10
    // and 12 tokens 2-5 % behind, 16 ahead (243 / 219, 217 / 208).
    k.tile_above = q4 ? 9 : 13;
  }
}

}  // namespace kazeia::kernels::x86
