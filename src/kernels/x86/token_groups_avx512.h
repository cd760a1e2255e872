// What the AVX-512 tile strips (kernels_amx.cpp, token_tiles_avx512.cpp)
// share: Q8_0 activations interleaved into groups of 16 tokens, and the
// tile's results transposed back into y. Include only from files compiled
// with AVX-512 (unnamed namespace, as simd_avx512.h).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/static_for.h"
#include "kernels/x86/transpose16_avx512.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::x86 {
namespace {

// One block of a group of 16 Q8_0 tokens: 8 vectors (vector w = word w of
// the 16 tokens' quants, as stored), with kCorrBias != 0 the 16 tokens'
// corr = -kCorrBias * (sum of the block's quants) as int32, then the 16
// scales as float.
template <int kCorrBias>
struct Q8Group {
  static constexpr size_t kCorr = 8 * 64;
  static constexpr size_t kScales = kCorr + (kCorrBias != 0 ? 64 : 0);
  static constexpr size_t kBlockBytes = kScales + 64;

  static size_t bytes(int64_t n_in) { return static_cast<size_t>(n_in / 32) * kBlockBytes; }

  // Up to 16 Q8_0 rows, q_stride apart, into one group; missing tokens are
  // zeros (their results are never stored). Word w of the 16 tokens is one
  // gather (32-bit offsets: matmul's row limit for tile strips), so is the
  // word holding d (its low half; the upper half, two quants, is cut).
  static void build(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
    const int64_t nb = n_in / 32;
    const __mmask16 live = static_cast<__mmask16>((1u << n) - 1u);
    const __m512i rows = Avx512::row_offsets(q_stride, 16);
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = q + static_cast<size_t>(b) * sizeof(BlockQ8_0);
      uint8_t* dst = out + static_cast<size_t>(b) * kBlockBytes;
      __m512i sum = zero;  // lane t: the sum of token t's 32 quants
      for (int w = 0; w < 8; ++w) {
        const __m512i words = _mm512_mask_i32gather_epi32(zero, live, rows, blk + 2 + 4 * w, 1);
        _mm512_storeu_si512(dst + 64 * w, words);
        if constexpr (kCorrBias != 0) sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), words);
      }
      if constexpr (kCorrBias != 0) _mm512_storeu_si512(dst + kCorr, _mm512_mullo_epi32(sum, _mm512_set1_epi32(-kCorrBias)));
      const __m512i dword = _mm512_mask_i32gather_epi32(zero, live, rows, blk, 1);
      _mm512_storeu_ps(dst + kScales, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dword)));
    }
  }
};

// The output of a tile strip (16 rows x 16 tokens): acc[r] holds row r,
// lane t token t. Transposed in registers, token t's 16 results go to
// y + t * ldy for the first n tokens: whole lines by non-temporal stores
// (stream; the caller fences) or the first n_rows of them. (Element by
// element through memory took a tenth of the AMX strip's time.)
[[gnu::always_inline]] inline void store_token_rows(__m512 acc[16], float* y, size_t ldy, int64_t n, int n_rows,
                                                    bool stream) {
  transpose16(acc);
  const __mmask16 rows = static_cast<__mmask16>((1u << n_rows) - 1u);
  if (stream) {
    static_for<16>([&](auto t) {
      if (t < n) _mm512_stream_ps(y + static_cast<size_t>(t) * ldy, acc[t]);
    });
  } else {
    static_for<16>([&](auto t) {
      if (t < n) _mm512_mask_storeu_ps(y + static_cast<size_t>(t) * ldy, rows, acc[t]);
    });
  }
}

}  // namespace
}  // namespace kazeia::kernels::x86
