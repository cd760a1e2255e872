// AVX2 prefill strips for Q4_0 and Q8_0 weights (x Q8_0 activations) with
// the tokens in the lanes: token_tiles_avx512.cpp's design on 8-lane
// vectors, without VNNI. A strip is 16 weight rows; a token group is 16
// tokens, each 4-byte activation word of a block stored as two 8-token
// vectors (tile_acts below). A row's weight word, broadcast, meets both
// halves: vpmaddubsw (unsigned weights x signed activations, pairs summed
// to int16), so one broadcast feeds 16 tokens and no row pointer is live in
// the inner loop (the rows-in-lanes strips, strip_runner.h, broadcast the
// activations instead and keep a pointer per token: with 16 vector
// registers AVX2 spilled their accumulators and ran at a quarter of the
// multiplier's rate).
//
// Q4_0: the stored nibbles (0..15) as the unsigned side. A vpmaddubsw pair
// is at most 2 * 15 * 128 = 3840 in magnitude, so a block's 8 words sum in
// int16 (8 * 3840 < 2^15) and widen once (vpmaddwd by 1); the chain starts
// from corr = -8 * sum(x) of the block (made by tile_acts), so the integer
// block sum is exactly the reference's. Q8_0: signed weights, so the
// sign trick: |w| (stored in the panel) times x with w's sign (vpsignb);
// a pair reaches 2 * 128 * 127, no room to sum in int16: each word widens.
// The float update is the reference's, vectorised over the tokens:
//   Q4_0: acc = fma(sumi * d_w, d_x, acc)   Q8_0: acc = fma(d_w * d_x, sumi, acc)
// so the results are bit-identical to ref::vec_dot_q4_0 / _q8_0.
#include "kernels/x86/exact_float.h"  // first: before any code

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/static_for.h"
#include "kernels/x86/transpose8_avx2.h"
#include "kernels/x86/x86_kernels.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels::x86 {
namespace {

constexpr int kBlock = 32;
constexpr int kTokens = 16;  // tokens per group (matmul's kTileGroup): two vectors
constexpr int kRows = 16;    // weight rows per strip (matmul's rows per tile strip)
constexpr int kRowsPerPass = 4;  // rows whose chains run side by side (register budget)

// One block of a token group: word w of the 16 tokens at 64 * w (token t's
// 4 bytes at 4 * t), then (Q4_0) corr = -8 * sum of the block's quants per
// token as int32, then the 16 scales as float.
template <bool kQ4>
struct Group {
  static constexpr size_t kCorr = 8 * 64;
  static constexpr size_t kScales = kCorr + (kQ4 ? 64 : 0);
  static constexpr size_t kBlockBytes = kScales + 64;

  static size_t bytes(int64_t n_in) { return static_cast<size_t>(n_in / kBlock) * kBlockBytes; }

  // Up to 16 Q8_0 rows, q_stride apart; missing tokens are zeros (their
  // results are never stored).
  static void build(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
    const int64_t nb = n_in / kBlock;
    if (n < kTokens) std::memset(out, 0, bytes(n_in));  // a full group overwrites every byte
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* dst = out + static_cast<size_t>(b) * kBlockBytes;
      for (int t = 0; t < n; ++t) {
        const uint8_t* blk = q + static_cast<size_t>(t) * q_stride + static_cast<size_t>(b) * sizeof(BlockQ8_0);
        for (int w = 0; w < 8; ++w) std::memcpy(dst + 64 * w + 4 * t, blk + 2 + 4 * w, 4);
        if constexpr (kQ4) {
          int32_t sum = 0;
          for (int j = 0; j < kBlock; ++j) sum += static_cast<int8_t>(blk[2 + j]);
          const int32_t corr = -8 * sum;
          std::memcpy(dst + kCorr + 4 * t, &corr, 4);
        }
        uint16_t d;
        std::memcpy(&d, blk, 2);
        const float df = fp16_to_fp32(d);
        std::memcpy(dst + kScales + 4 * t, &df, 4);
      }
    }
  }
};

// Per block of the strip's panel: the 16 rows' 32 weight bytes (Q4_0: the
// nibbles, elements in order; Q8_0: |q|, then q), then their scales.
template <bool kQ4>
struct PanelLayout {
  static constexpr size_t kRowBytes = kQ4 ? kBlock : 2 * kBlock;
  static constexpr size_t kScales = kRows * kRowBytes;
  static constexpr size_t kBlockBytes = kScales + 64;
};

template <bool kQ4>
void pack_panel(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) {
  using L = PanelLayout<kQ4>;
  constexpr size_t kBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const uint8_t* rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = a.w + static_cast<size_t>(r < a.n_rows ? r : a.n_rows - 1) * a.w_stride;
  const __m128i nib = _mm_set1_epi8(0x0F);
  for (int64_t b = b0; b < b1; ++b) {
    const size_t at = static_cast<size_t>(b) * kBytes;
    uint8_t* pb = panel + static_cast<size_t>(b - b0) * L::kBlockBytes;
    alignas(32) uint16_t d[kRows];
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* blk = rows[r] + at;
      std::memcpy(&d[r], blk, 2);
      if constexpr (kQ4) {  // elements j and j + 16 share byte j
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m256i w = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), nib), _mm_and_si128(q, nib));
        _mm256_store_si256(reinterpret_cast<__m256i*>(pb + r * L::kRowBytes), w);
      } else {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        _mm256_store_si256(reinterpret_cast<__m256i*>(pb + r * L::kRowBytes), _mm256_abs_epi8(q));
        _mm256_store_si256(reinterpret_cast<__m256i*>(pb + r * L::kRowBytes + kBlock), q);
      }
    }
    // VCVTPH2PS: the reference's conversion (tensor/quant.h), bit for bit.
    _mm256_store_ps(reinterpret_cast<float*>(pb + L::kScales),
                    _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d))));
    _mm256_store_ps(reinterpret_cast<float*>(pb + L::kScales) + 8,
                    _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d + 8))));
  }
}

// The value as it is here: GCC moved each row's chain of adds after the
// block's last vpmaddubsw (so every product was spilled to the stack and
// read back); an empty asm that "may change" the sum keeps each add where
// it is written.
[[gnu::always_inline]] inline void pin(__m256i& v) { asm("" : "+x"(v)); }

// Rows kFirst .. kFirst + 3 of one block of a token group into their
// accumulators acc[i][h] (row kFirst + i, tokens 8h .. 8h + 7).
template <bool kQ4, int kFirst>
[[gnu::always_inline]] inline void tile_block(const uint8_t* act, const uint8_t* pb, __m256 acc[kRowsPerPass][2]) {
  using G = Group<kQ4>;
  using L = PanelLayout<kQ4>;
  __m256i s[kRowsPerPass][2];
  static_for<8>([&](auto w) {
    const __m256i x0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(act + 64 * w));
    const __m256i x1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(act + 64 * w + 32));
    static_for<kRowsPerPass>([&](auto i) {
      const uint8_t* wp = pb + L::kRowBytes * (kFirst + i) + 4 * w;
      const __m256i u = Avx2::bcst32(wp);  // unsigned side: nibbles or |q|
      __m256i p0, p1;
      if constexpr (kQ4) {
        p0 = _mm256_maddubs_epi16(u, x0);
        p1 = _mm256_maddubs_epi16(u, x1);
      } else {
        const __m256i sw = Avx2::bcst32(wp + kBlock);
        p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_sign_epi8(x0, sw)), _mm256_set1_epi16(1));
        p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_sign_epi8(x1, sw)), _mm256_set1_epi16(1));
      }
      if constexpr (w == 0) {
        s[i][0] = p0;
        s[i][1] = p1;
      } else if constexpr (kQ4) {
        s[i][0] = _mm256_add_epi16(s[i][0], p0);
        s[i][1] = _mm256_add_epi16(s[i][1], p1);
      } else {
        s[i][0] = _mm256_add_epi32(s[i][0], p0);
        s[i][1] = _mm256_add_epi32(s[i][1], p1);
      }
      pin(s[i][0]);
      pin(s[i][1]);
    });
  });
  static_for<2>([&](auto h) {
    const __m256 dx = _mm256_load_ps(reinterpret_cast<const float*>(act + G::kScales) + 8 * h);
    __m256i corr = _mm256_setzero_si256();
    if constexpr (kQ4) corr = _mm256_load_si256(reinterpret_cast<const __m256i*>(act + G::kCorr + 32 * h));
    static_for<kRowsPerPass>([&](auto i) {
      const __m256 dw = _mm256_broadcast_ss(reinterpret_cast<const float*>(pb + L::kScales) + kFirst + i);
      if constexpr (kQ4) {
        const __m256i isum = _mm256_add_epi32(corr, _mm256_madd_epi16(s[i][h], _mm256_set1_epi16(1)));
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), dw), dx, acc[i][h]);
      } else {
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx), _mm256_cvtepi32_ps(s[i][h]), acc[i][h]);
      }
    });
  });
}

// Rows kFirst .. kFirst + 3 of a token group over nb blocks; their
// accumulators come from and go back to acc (row r, token t at 16 r + t).
template <bool kQ4, int kFirst>
[[gnu::always_inline]] inline void tile_rows(const uint8_t* group, const uint8_t* panel, int64_t nb, float* acc_rows) {
  __m256 acc[kRowsPerPass][2];
  static_for<kRowsPerPass>([&](auto i) {
    static_for<2>([&](auto h) { acc[i][h] = _mm256_load_ps(acc_rows + kTokens * (kFirst + i) + 8 * h); });
  });
#pragma GCC unroll 1
  for (int64_t b = 0; b < nb; ++b)
    tile_block<kQ4, kFirst>(group + static_cast<size_t>(b) * Group<kQ4>::kBlockBytes,
                            panel + static_cast<size_t>(b) * PanelLayout<kQ4>::kBlockBytes, acc);
  static_for<kRowsPerPass>([&](auto i) {
    static_for<2>([&](auto h) { _mm256_store_ps(acc_rows + kTokens * (kFirst + i) + 8 * h, acc[i][h]); });
  });
}

// The group's results (row r, token t at acc[16 r + t]) into y: token t's
// rows at y + t * ldy, for the first n tokens and n_rows rows; whole lines
// by non-temporal stores with `stream` (the caller fences).
void store_token_rows(const float* acc, float* y, size_t ldy, int64_t n, int n_rows, bool stream) {
  for (int rh = 0; rh < 2; ++rh) {
    for (int th = 0; th < 2; ++th) {
      __m256 r[8];
      static_for<8>([&](auto i) { r[i] = _mm256_load_ps(acc + kTokens * (8 * rh + i) + 8 * th); });
      transpose8(r);  // r[j]: token 8 th + j, rows 8 rh .. 8 rh + 7
      static_for<8>([&](auto j) {
        const int64_t t = 8 * th + j;
        if (t >= n) return;
        float* out = y + static_cast<size_t>(t) * ldy + 8 * rh;
        if (stream) {
          _mm256_stream_ps(out, r[j]);
        } else {
          Avx2::store_first(out, n_rows - 8 * rh, r[j]);
        }
      });
    }
  }
}

// Long rows go in chunks of kChunk blocks: each chunk is unpacked and run
// over every token group, so its panel (9 / 17 KB) and a group's
// activations (10 / 9 KB) share L1; the groups' accumulators wait in a
// buffer between chunks (each (row, token) still sums its blocks in order,
// into the same float).
constexpr int64_t kChunk = 16;

template <bool kQ4>
[[gnu::flatten]] void token_tile_strip(const StripArgs& a) {
  using L = PanelLayout<kQ4>;
  const int64_t nb = a.n_in / kBlock;
  const int64_t chunk = std::min(nb, kChunk);
  const int64_t n_tok = a.x.n_tokens;
  const int64_t n_groups = (n_tok + kTokens - 1) / kTokens;
  // The scratch (scratch_bytes below): the chunk's panel, then every
  // group's accumulators.
  uint8_t* panel = a.scratch;
  float* acc_buf = reinterpret_cast<float*>(a.scratch + static_cast<size_t>(chunk) * L::kBlockBytes);
  const bool stream = a.stream_lines();
  // The next strip's rows (matmul passes them) are fetched into L2 a slice
  // per chunk and token group, as the AVX-512 tile strips do.
  const int64_t n_chunks = (nb + chunk - 1) / chunk;
  const size_t lines_per_part = a.prefetch_lines_per(n_chunks * n_groups);
  const uint8_t* next = a.prefetch;
  for (int64_t c0 = 0; c0 < nb; c0 += chunk) {
    const int64_t c1 = std::min(nb, c0 + chunk);
    pack_panel<kQ4>(a, c0, c1, panel);
    for (int64_t g = 0; g < n_groups; ++g) {
      for (size_t l = 0; l < lines_per_part; ++l) _mm_prefetch(reinterpret_cast<const char*>(next + 64 * l), _MM_HINT_T1);
      next += 64 * lines_per_part;
      const uint8_t* group = a.tiles + static_cast<size_t>(g) * a.tile_group_bytes + static_cast<size_t>(c0) * Group<kQ4>::kBlockBytes;
      float* acc = acc_buf + g * kRows * kTokens;
      if (c0 == 0) std::memset(acc, 0, kRows * kTokens * sizeof(float));
      static_for<kRows / kRowsPerPass>([&](auto p) {
        tile_rows<kQ4, kRowsPerPass * p>(group, panel, c1 - c0, acc);
      });
      if (c1 < nb) continue;
      const int64_t t0 = g * kTokens;
      store_token_rows(acc, a.y + static_cast<size_t>(t0) * a.ldy, a.ldy, std::min<int64_t>(kTokens, n_tok - t0),
                       static_cast<int>(a.n_rows), stream);
    }
  }
  if (stream) _mm_sfence();  // visible to whoever reads y after this returns
}

template <bool kQ4>
size_t scratch_bytes(int64_t n_in, int64_t n_tokens) {
  const int64_t nb = n_in / kBlock;
  const int64_t chunk = std::min(nb, kChunk);
  const size_t accs = static_cast<size_t>((n_tokens + kTokens - 1) / kTokens) * kRows * kTokens;
  return static_cast<size_t>(chunk) * PanelLayout<kQ4>::kBlockBytes + accs * sizeof(float);
}

}  // namespace

void fill_avx2_token_tiles(KernelTable& table) {
  for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0}) {
    WeightKernels& k = table.weights[static_cast<int>(type)];
    const bool q4 = type == TensorType::Q4_0;
    k.tile_strip = q4 ? &token_tile_strip<true> : &token_tile_strip<false>;
    k.tile_group_bytes = q4 ? &Group<true>::bytes : &Group<false>::bytes;
    k.tile_acts = q4 ? &Group<true>::build : &Group<false>::build;
    k.tile_scratch_bytes = q4 ? &scratch_bytes<true> : &scratch_bytes<false>;
    k.tile_isa = "avx2";
    // Where the tiles start to win against the strips (Qwen3-0.6B, 2
    // threads, kazeia bench -p N, KAZEIA_TOKEN_TILES=1 / 0 t/s). Against
    // the row kernels' groups of 4 tokens (Zen 2): Q4_0 13 tokens 165 /
    // 183, 14 179 / 186, 15 190 / 186, 16 200 / 191; Q8_0 16 133 / 124
    // (20: 100 / 126 with a second group of 16 holding 4 tokens, before
    // tile_rest_max below). Earlier,
    // against the runner's panels (Zen 3): Q4_0 10 tokens 101 / 92;
    // Q8_0 16 a tie.
    k.tile_above = q4 ? 14 : 15;
    // A batch's last 1-8 tokens past its groups of 16 take the row
    // kernels in a second pass over the weights; from ~10 the padded group
    // wins (Qwen3-0.6B, 2 threads, Zen 2, kazeia bench -p N t/s, padded /
    // split: Q8_0 17 tokens 86 / 128, 20 100 / 131, 24 119 / 129, 26
    // 128 / 128, 30 146 / 129; Q4_0 21 165 / 194, 24 187 / 187, 28
    // 216 / 200).
    k.tile_rest_max = 8;
  }
}

}  // namespace kazeia::kernels::x86
