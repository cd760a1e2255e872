// AVX2 prefill strips for Q4_0 and Q8_0 (x Q8_0 activations), Q4_K and
// Q6_K (x Q8_K, below) with the tokens in the lanes: token_tiles_avx512.cpp's
// design on 8-lane vectors, without VNNI. A strip is 16 weight rows; a
// token group is 16 tokens, each 4-byte activation word of a block stored
// as two 8-token vectors (tile_acts below). A row's weight word, broadcast,
// meets both halves: vpmaddubsw (unsigned weights x signed activations,
// pairs summed to int16), so one broadcast feeds 16 tokens and no row
// pointer is live in the inner loop (the rows-in-lanes strips,
// strip_runner.h, broadcast the activations instead and keep a pointer per
// token: with 16 vector registers AVX2 spilled their accumulators and ran
// at a quarter of the multiplier's rate).
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
#include "kernels/x86/token_tile_walk.h"
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
static_assert(kTokens == kTileGroupTokens && kRows == kTileStripRows);  // token_tile_walk.h

// Row r of the strip; a strip of fewer rows repeats its last (those
// results are never stored).
inline const uint8_t* strip_row(const StripArgs& a, int r) {
  return a.w + static_cast<size_t>(r < a.n_rows ? r : a.n_rows - 1) * a.w_stride;
}

// The 16 rows' fp16 scales as floats into out (32-byte aligned), by
// VCVTPH2PS: the reference's conversion (tensor/quant.h), bit for bit.
inline void store_row_scales(const uint16_t* h, uint8_t* out) {
  for (int i = 0; i < 2; ++i)
    _mm256_store_ps(reinterpret_cast<float*>(out) + 8 * i,
                    _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 8 * i))));
}

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
  for (int r = 0; r < kRows; ++r) rows[r] = strip_row(a, r);
  const __m128i nib = _mm_set1_epi8(0x0F);
  for (int64_t b = b0; b < b1; ++b) {
    const size_t at = static_cast<size_t>(b) * kBytes;
    uint8_t* pb = panel + static_cast<size_t>(b - b0) * L::kBlockBytes;
    uint16_t d[kRows];
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
    store_row_scales(d, pb + L::kScales);
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

// Q4_0 / Q8_0 as a token-tile format (token_tile_walk.h): chunks of 16
// blocks, so a chunk's panel (9 / 17 KB) and a group's activations (10 /
// 9 KB) share L1.
template <bool kQ4>
struct LegacyTiles {
  using Group = x86::Group<kQ4>;
  static constexpr int64_t kElems = kBlock, kChunk = 16;
  static constexpr size_t kActBytes = Group::kBlockBytes, kPanelBytes = PanelLayout<kQ4>::kBlockBytes;
  static void pack(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) { pack_panel<kQ4>(a, b0, b1, panel); }
  // The 16 rows of a token group over nb blocks, 4 rows a pass.
  [[gnu::always_inline]] static void run(const uint8_t* group, const uint8_t* panel, int64_t nb, float* acc) {
    static_for<kRows / kRowsPerPass>([&](auto p) { tile_rows<kQ4, kRowsPerPass * p>(group, panel, nb, acc); });
  }
};

// ------------------------------------------------------- Q4_K and Q6_K
//
// Q4_K (x Q8_K) in the same shape: a strip of 16 rows unpacked into a
// panel of one byte per quant (0..15), a token group's activation words
// two 8-token vectors, one broadcast weight word per row and word. Per
// super-block and (row, token) the integers of strip_kquants.h,
//   I1 = sum over sub-blocks s of sc_s * (sum of q_i x_i over s)
//   I2 = sum over sub-blocks s of m_s * (sum of x over s)
// and its float update, acc = fma(d_w * d_x, I1, acc), then
// acc = fnma(dmin_w * d_x, I2, acc): the same bits as the row kernels and
// the runner's strips. A sub-block's 8 words sum their vpmaddubsw pairs in
// int16 (8 * 2 * 15 * 128 < 2^15) and widen by one vpmaddwd with the
// sub-block's scale as an int16 pair (sc, sc), so the scale costs no more
// than Q4_0's widening; the mins are one vpmaddwd per pair of sub-blocks,
// against the group's pairs of activation sums of 32. 1 thread, 1024 x
// 3072 x 128 tokens, Zen 3, against the runner's panels (kernel_ab, median
// of 300 pair ratios): 0.84-0.89x the time. Q5_K in this form (groups of
// 4 words in int16) ran as fast as its panels (0.98-1.02x): not taken.
// Q6_K (below) widens every 2 words; written as Q4_K's loop it spilled its
// sums and tied with its panels too, in its own order 0.70x their time.

// One super-block of a token group: word w of the 16 tokens at 64 * w,
// then kPairs pair words of int16 activation sums (Q4_K: 4, the sums of
// sub-blocks 2p and 2p + 1 of 32; Q6_K: 8, bsums 2p and 2p + 1 of 16),
// then the 16 scales.
template <int kPairs>
struct KGroup {
  static_assert(kPairs == 4 || kPairs == 8);
  static constexpr size_t kPairsAt = 64 * 64;
  static constexpr size_t kScales = kPairsAt + kPairs * 64;
  static constexpr size_t kBlockBytes = kScales + 64;

  static size_t bytes(int64_t n_in) { return static_cast<size_t>(n_in / kQK_K) * kBlockBytes; }

  static void build(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
    const int64_t nb = n_in / kQK_K;
    if (n < kTokens) std::memset(out, 0, bytes(n_in));
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* dst = out + static_cast<size_t>(b) * kBlockBytes;
      for (int t = 0; t < n; ++t) {
        BlockQ8_K blk;
        std::memcpy(&blk, q + static_cast<size_t>(t) * q_stride + static_cast<size_t>(b) * sizeof(BlockQ8_K), sizeof(blk));
        for (int w = 0; w < 64; ++w) std::memcpy(dst + 64 * w + 4 * t, blk.qs + 4 * w, 4);
        constexpr int kPer = 8 / kPairs;  // bsums per int16 of a pair (|sum| <= 32 * 128)
        for (int p = 0; p < kPairs; ++p) {
          int16_t pair[2] = {0, 0};
          for (int j = 0; j < kPer; ++j) {
            pair[0] = static_cast<int16_t>(pair[0] + blk.bsums[2 * kPer * p + j]);
            pair[1] = static_cast<int16_t>(pair[1] + blk.bsums[2 * kPer * p + kPer + j]);
          }
          std::memcpy(dst + kPairsAt + 64 * p + 4 * t, pair, 4);
        }
        std::memcpy(dst + kScales + 4 * t, &blk.d, 4);
      }
    }
  }
};

// Per super-block of a strip's panel: the 16 rows' 256 quants (one byte
// each, elements in order), then per row kIntWords int16-pair words, then
// d of the 16 rows, then (kDmin) dmin.
template <int kIntWordsT, bool kDminT>
struct KPanel {
  static constexpr int kIntWords = kIntWordsT;
  static constexpr size_t kInts = kRows * kQK_K;
  static constexpr size_t kD = kInts + kRows * 4 * kIntWords;
  static constexpr size_t kDmin = kD + 64;
  static constexpr size_t kBlockBytes = kDmin + (kDminT ? 64 : 0);
  static_assert(kD % 32 == 0);

  static uint8_t* quants(uint8_t* pb, int r) { return pb + r * kQK_K; }
  static const uint8_t* ints(const uint8_t* pb, int r, int word) {
    return pb + kInts + static_cast<size_t>(r) * 4 * kIntWords + 4 * word;
  }
  static void put_ints(uint8_t* pb, int r, const uint32_t (&words)[kIntWords]) {
    std::memcpy(pb + kInts + static_cast<size_t>(r) * sizeof(words), words, sizeof(words));
  }
  // The rows' fp16 d (and dmin) as floats.
  static void put_scales(uint8_t* pb, const uint16_t* d, const uint16_t* dmin) {
    store_row_scales(d, pb + kD);
    if constexpr (kDminT) store_row_scales(dmin, pb + kDmin);
  }

  // One super-block's float update of rows kFirst .. kFirst + 3 (row r,
  // token t at acc_rows[16 r + t]) in strip_kquants.h's order:
  // acc = fma(d_w * d_x, I1, acc), then (with dmin) acc = fnma(dmin_w * d_x, I2, acc).
  // dx: the group's 16 activation scales.
  template <int kFirst>
  [[gnu::always_inline]] static void update(const uint8_t* pb, const float* dx, const __m256i (&i1)[kRowsPerPass][2],
                                            const __m256i (&i2)[kRowsPerPass][2], float* acc_rows) {
    static_for<2>([&](auto h) {
      const __m256 dxh = _mm256_load_ps(dx + 8 * h);
      static_for<kRowsPerPass>([&](auto i) {
        float* out = acc_rows + kTokens * (kFirst + i) + 8 * h;
        const __m256 dw = _mm256_broadcast_ss(reinterpret_cast<const float*>(pb + kD) + kFirst + i);
        __m256 acc = _mm256_fmadd_ps(_mm256_mul_ps(dw, dxh), _mm256_cvtepi32_ps(i1[i][h]), _mm256_load_ps(out));
        if constexpr (kDminT) {
          const __m256 dm = _mm256_broadcast_ss(reinterpret_cast<const float*>(pb + kDmin) + kFirst + i);
          acc = _mm256_fnmadd_ps(_mm256_mul_ps(dm, dxh), _mm256_cvtepi32_ps(i2[i][h]), acc);
        }
        _mm256_store_ps(out, acc);
      });
    });
  }
};

inline uint32_t u16_pair(int a, int b) {
  return static_cast<uint32_t>(static_cast<uint16_t>(a)) | (static_cast<uint32_t>(static_cast<uint16_t>(b)) << 16);
}

// The 16 rows of a token group over nb super-blocks of a K format
// (F::block, 4 rows a pass): the run of Q4KTiles and Q6KTiles.
template <class F>
[[gnu::always_inline]] inline void run_super_blocks(const uint8_t* group, const uint8_t* panel, int64_t nb, float* acc) {
#pragma GCC unroll 1
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* act = group + static_cast<size_t>(b) * F::kActBytes;
    const uint8_t* pb = panel + static_cast<size_t>(b) * F::kPanelBytes;
    static_for<kRows / kRowsPerPass>([&](auto p) { F::template block<kRowsPerPass * p>(act, pb, acc); });
  }
}

struct Q4KTiles {
  using Group = KGroup<4>;
  // Per row: the 8 scales as (sc, sc), then the mins as (m_2p, m_2p+1).
  using Panel = KPanel<12, true>;
  static constexpr int64_t kElems = kQK_K;
  static constexpr int64_t kChunk = 2;  // a chunk's panel (10 KB) and a group's activations (9 KB) in L1
  static constexpr size_t kActBytes = Group::kBlockBytes, kPanelBytes = Panel::kBlockBytes;
  [[gnu::always_inline]] static void run(const uint8_t* group, const uint8_t* panel, int64_t nb, float* acc) {
    run_super_blocks<Q4KTiles>(group, panel, nb, acc);
  }

  static void pack(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) {
    const __m256i nib = _mm256_set1_epi8(0x0F);
    for (int64_t b = b0; b < b1; ++b) {
      uint8_t* pb = panel + static_cast<size_t>(b - b0) * Panel::kBlockBytes;
      uint16_t d[kRows], dmin[kRows];
      for (int r = 0; r < kRows; ++r) {
        const uint8_t* blk = strip_row(a, r) + static_cast<size_t>(b) * sizeof(BlockQ4_K);
        uint8_t* q = Panel::quants(pb, r);
        // Bytes 32c .. 32c + 31 of qs: sub-block 2c in the low nibbles, 2c + 1 in the high.
        for (int c = 0; c < 4; ++c) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * c));
          _mm256_store_si256(reinterpret_cast<__m256i*>(q + 64 * c), _mm256_and_si256(v, nib));
          _mm256_store_si256(reinterpret_cast<__m256i*>(q + 64 * c + 32), _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        }
        uint8_t sc[8], m[8];
        for (int s = 0; s < 8; ++s) scale_min_k4(s, blk + 4, &sc[s], &m[s]);
        uint32_t words[Panel::kIntWords];
        for (int s = 0; s < 8; ++s) words[s] = u16_pair(sc[s], sc[s]);
        for (int p = 0; p < 4; ++p) words[8 + p] = u16_pair(m[2 * p], m[2 * p + 1]);
        Panel::put_ints(pb, r, words);
        std::memcpy(&d[r], blk, 2);
        std::memcpy(&dmin[r], blk + 2, 2);
      }
      Panel::put_scales(pb, d, dmin);
    }
  }

  // Rows kFirst .. kFirst + 3, one super-block of a token group, into the
  // accumulators (row r, token t at acc_rows[16 r + t]).
  template <int kFirst>
  [[gnu::always_inline]] static void block(const uint8_t* act, const uint8_t* pb, float* acc_rows) {
    __m256i isum[kRowsPerPass][2];
    static_for<kRowsPerPass>([&](auto i) { isum[i][0] = isum[i][1] = _mm256_setzero_si256(); });
#pragma GCC unroll 1
    for (int s = 0; s < 8; ++s) {
      const uint8_t* as = act + 64 * 8 * s;
      const uint8_t* ws = pb + 4 * 8 * s;
      __m256i sum[kRowsPerPass][2];
      static_for<8>([&](auto w) {
        const __m256i x0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(as + 64 * w));
        const __m256i x1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(as + 64 * w + 32));
        static_for<kRowsPerPass>([&](auto i) {
          const __m256i q = Avx2::bcst32(ws + kQK_K * (kFirst + i) + 4 * w);
          const __m256i p0 = _mm256_maddubs_epi16(q, x0);
          const __m256i p1 = _mm256_maddubs_epi16(q, x1);
          if constexpr (w == 0) {
            sum[i][0] = p0;
            sum[i][1] = p1;
          } else {
            sum[i][0] = _mm256_add_epi16(sum[i][0], p0);
            sum[i][1] = _mm256_add_epi16(sum[i][1], p1);
          }
          pin(sum[i][0]);
          pin(sum[i][1]);
        });
      });
      static_for<kRowsPerPass>([&](auto i) {
        const __m256i sc = Avx2::bcst32(Panel::ints(pb, kFirst + i, s));
        static_for<2>([&](auto h) { isum[i][h] = _mm256_add_epi32(isum[i][h], _mm256_madd_epi16(sum[i][h], sc)); });
      });
    }
    __m256i mins[kRowsPerPass][2];
    static_for<4>([&](auto p) {
      static_for<2>([&](auto h) {
        const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(act + Group::kPairsAt + 64 * p + 32 * h));
        static_for<kRowsPerPass>([&](auto i) {
          const __m256i part = _mm256_madd_epi16(Avx2::bcst32(Panel::ints(pb, kFirst + i, 8 + p)), x);
          mins[i][h] = p == 0 ? part : _mm256_add_epi32(mins[i][h], part);
        });
      });
    });
    Panel::template update<kFirst>(pb, reinterpret_cast<const float*>(act + Group::kScales), isum, mins, acc_rows);
  }
};

// Q6_K: quants 0..63 (the offset 32 left out of the panel), 16 units of
// 16 elements with signed 8-bit scales. A vpmaddubsw pair reaches
// 2 * 63 * 128, so two words sum in int16 and widen at once by vpmaddwd
// with the unit's (sc, sc): per row and word pair the two broadcasts, two
// products per half, the scale's broadcast and one widening per half, in
// an order that keeps the 8 int32 sums, the 4 activation vectors and the
// row's temporaries within the 16 registers. The offset enters I1 as
// -32 * sum over the units of sc_u * bsum_u: panel words (-32 sc_2p,
// -32 sc_2p+1) against the group's bsum pairs (|-32 sc| <= 4096).
struct Q6KTiles {
  using Group = KGroup<8>;
  // Per row: the 16 scales as (sc, sc), then the offset words.
  using Panel = KPanel<24, false>;
  static constexpr int64_t kElems = kQK_K;
  static constexpr int64_t kChunk = 2;  // a chunk's panel (11 KB) and a group's activations (9.5 KB) in L1
  static constexpr size_t kActBytes = Group::kBlockBytes, kPanelBytes = Panel::kBlockBytes;
  [[gnu::always_inline]] static void run(const uint8_t* group, const uint8_t* panel, int64_t nb, float* acc) {
    run_super_blocks<Q6KTiles>(group, panel, nb, acc);
  }

  static void pack(const StripArgs& a, int64_t b0, int64_t b1, uint8_t* panel) {
    const __m256i nib = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30);
    for (int64_t b = b0; b < b1; ++b) {
      uint8_t* pb = panel + static_cast<size_t>(b - b0) * Panel::kBlockBytes;
      uint16_t d[kRows];
      for (int r = 0; r < kRows; ++r) {
        const uint8_t* blk = strip_row(a, r) + static_cast<size_t>(b) * sizeof(BlockQ6_K);
        uint8_t* q = Panel::quants(pb, r);
        // blocks.h: half h, l = 0..31 - elements 128h + l + 32m take ql
        // byte l (m even) or l + 32 (m odd), low nibble (m < 2) or high,
        // and bits 2m, 2m + 1 of qh byte l as bits 4, 5 (16-bit shifts:
        // the bits taken never cross a byte).
        for (int h = 0; h < 2; ++h) {
          const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * h));
          const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * h + 32));
          const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * h));
          const __m256i v[4] = {
              _mm256_or_si256(_mm256_and_si256(ql0, nib), _mm256_and_si256(_mm256_slli_epi16(qh, 4), top)),
              _mm256_or_si256(_mm256_and_si256(ql1, nib), _mm256_and_si256(_mm256_slli_epi16(qh, 2), top)),
              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), nib), _mm256_and_si256(qh, top)),
              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), nib),
                              _mm256_and_si256(_mm256_srli_epi16(qh, 2), top))};
          for (int m = 0; m < 4; ++m) _mm256_store_si256(reinterpret_cast<__m256i*>(q + 128 * h + 32 * m), v[m]);
        }
        int8_t sc[16];
        std::memcpy(sc, blk + offsetof(BlockQ6_K, scales), 16);
        uint32_t words[Panel::kIntWords];
        for (int u = 0; u < 16; ++u) words[u] = u16_pair(sc[u], sc[u]);
        for (int p = 0; p < 8; ++p) words[16 + p] = u16_pair(-32 * sc[2 * p], -32 * sc[2 * p + 1]);
        Panel::put_ints(pb, r, words);
        std::memcpy(&d[r], blk + offsetof(BlockQ6_K, d), 2);
      }
      Panel::put_scales(pb, d, nullptr);
    }
  }

  template <int kFirst>
  [[gnu::always_inline]] static void block(const uint8_t* act, const uint8_t* pb, float* acc_rows) {
    __m256i isum[kRowsPerPass][2];
    static_for<kRowsPerPass>([&](auto i) { isum[i][0] = isum[i][1] = _mm256_setzero_si256(); });
#pragma GCC unroll 1
    for (int u = 0; u < 16; ++u) {
      const uint8_t* au = act + 64 * 4 * u;
      const uint8_t* wu = pb + 4 * 4 * u;
      static_for<2>([&](auto g) {
        const uint8_t* ag = au + 128 * g;
        const __m256i x00 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ag));
        const __m256i x01 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ag + 32));
        const __m256i x10 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ag + 64));
        const __m256i x11 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ag + 96));
        static_for<kRowsPerPass>([&](auto i) {
          const uint8_t* wq = wu + kQK_K * (kFirst + i) + 8 * g;
          const __m256i q0 = Avx2::bcst32(wq);
          __m256i s0 = _mm256_maddubs_epi16(q0, x00);
          __m256i s1 = _mm256_maddubs_epi16(q0, x01);
          const __m256i q1 = Avx2::bcst32(wq + 4);
          s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(q1, x10));
          s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(q1, x11));
          const __m256i sc = Avx2::bcst32(Panel::ints(pb, kFirst + i, u));
          isum[i][0] = _mm256_add_epi32(isum[i][0], _mm256_madd_epi16(s0, sc));
          isum[i][1] = _mm256_add_epi32(isum[i][1], _mm256_madd_epi16(s1, sc));
        });
      });
    }
    static_for<8>([&](auto p) {
      static_for<2>([&](auto h) {
        const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(act + Group::kPairsAt + 64 * p + 32 * h));
        static_for<kRowsPerPass>([&](auto i) {
          isum[i][h] = _mm256_add_epi32(isum[i][h], _mm256_madd_epi16(Avx2::bcst32(Panel::ints(pb, kFirst + i, 16 + p)), x));
        });
      });
    });
    Panel::template update<kFirst>(pb, reinterpret_cast<const float*>(act + Group::kScales), isum, isum, acc_rows);
  }
};

// A token-tile strip of format F (LegacyTiles, Q4KTiles, Q6KTiles): the
// walk of token_tile_walk.h, each group's accumulators (row r, token t at
// acc[16 r + t]) in the scratch after the panel, from its first chunk to
// its last.
template <class F>
[[gnu::flatten]] void token_tile_strip(const StripArgs& a) {
  float* const acc_buf = token_tile_accumulators<F>(a);
  const bool stream = a.stream_lines();
  const int64_t n_tok = a.x.n_tokens;
  walk_token_tiles<F>(a, [&](const uint8_t* group, const uint8_t* panel, int64_t n, int64_t g, bool first, bool last) {
    float* acc = acc_buf + g * kRows * kTokens;
    if (first) std::memset(acc, 0, kRows * kTokens * sizeof(float));
    F::run(group, panel, n, acc);
    if (!last) return;
    const int64_t t0 = g * kTokens;
    store_token_rows(acc, a.y + static_cast<size_t>(t0) * a.ldy, a.ldy, std::min<int64_t>(kTokens, n_tok - t0),
                     static_cast<int>(a.n_rows), stream);
  });
  if (stream) _mm_sfence();  // visible to whoever reads y after this returns
}


}  // namespace

void fill_avx2_token_tiles(KernelTable& table) {
  for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0}) {
    WeightKernels& k = table.weights[static_cast<int>(type)];
    const bool q4 = type == TensorType::Q4_0;
    if (q4) {
      set_token_tiles<LegacyTiles<true>, true>(k, &token_tile_strip<LegacyTiles<true>>, "avx2");
    } else {
      set_token_tiles<LegacyTiles<false>, true>(k, &token_tile_strip<LegacyTiles<false>>, "avx2");
    }
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
  WeightKernels& k = table.weights[static_cast<int>(TensorType::Q4_K)];
  set_token_tiles<Q4KTiles, true>(k, &token_tile_strip<Q4KTiles>, "avx2");
  // Against the runner's panels (1 thread, 1024 x 3072, Zen 3, kernel_ab
  // per-pair medians, tiles / panels): 16 tokens 1.02, 24 (a padded group)
  // 1.19, 32 0.95, 64 0.84, 128 0.84-0.89, 512 0.82 - the panels run
  // faster while a batch's activations fit L1. A rest of up to 8 tokens
  // takes the strip (row kernels or panels) in a second pass, as Q4_0's.
  k.tile_above = 24;
  k.tile_rest_max = 8;
  WeightKernels& k6 = table.weights[static_cast<int>(TensorType::Q6_K)];
  set_token_tiles<Q6KTiles, true>(k6, &token_tile_strip<Q6KTiles>, "avx2");
  // Against the row kernels' groups of 4 (up to 12 tokens) and the
  // runner's panels (1 thread, 1024 x 3072, Zen 3, kernel_ab per-pair
  // medians, tiles / strips): 8 tokens (a padded group) 1.57, 12 0.93, 16
  // 0.81, 32 0.74, 128 0.70.
  k6.tile_above = 12;
  k6.tile_rest_max = 8;
}

}  // namespace kazeia::kernels::x86
