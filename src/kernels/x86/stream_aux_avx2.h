// The StreamAux rows of the Q4_0 / Q8_0 stream decoders (layout in
// x86_kernels.h), built with AVX2 + F16C. The matmul tests check them
// through the decoders' results, bit for bit against the reference.
//
// Decode builds one aux row per matmul call on the calling thread while the
// others wait, so its speed is on the critical path: the portable builder it
// replaces (a scalar sum per block) took 2.7 us per call on average in a
// Qwen3-0.6B Q4_0 decode (~2 % of the token), this one 0.3 us.
//
// Included only from per-ISA files (all have AVX2 and F16C); unnamed
// namespace (see simd_avx512.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "tensor/blocks.h"

namespace kazeia::kernels::x86 {
namespace {

// The sums of 8 vectors' eight int32 lanes: lane b = sum of v[b].
[[gnu::always_inline]] inline __m256i sum_lanes8(const __m256i v[8]) {
  const __m256i t0 = _mm256_hadd_epi32(v[0], v[1]), t1 = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i t2 = _mm256_hadd_epi32(v[4], v[5]), t3 = _mm256_hadd_epi32(v[6], v[7]);
  // u0: blocks 0-3 from the low 128-bit halves, then from the high ones.
  const __m256i u0 = _mm256_hadd_epi32(t0, t1), u1 = _mm256_hadd_epi32(t2, t3);
  return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

template <bool kNibbles, int kOffset>
void stream_aux_avx2(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row) {
  constexpr int kBlockBytes = sizeof(BlockQ8_0);  // fp16 d, 32 int8 quants
  constexpr int kShift = kNibbles ? 40 : 36;
  constexpr int kGroup = 64 + 4 * kShift;
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < n_in / 256; ++g) {
    const uint8_t* blocks = q_row + g * 8 * kBlockBytes;
    uint8_t* out = aux_row + g * kGroup;
    __m256i qs[8];
    for (int b = 0; b < 8; ++b) qs[b] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blocks + b * kBlockBytes + 2));
    // The 8 blocks' fp16 scales, exactly widened.
    uint16_t d16[8];
    for (int b = 0; b < 8; ++b) __builtin_memcpy(&d16[b], blocks + b * kBlockBytes, 2);
    const __m256i d = _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d16))));
    // corr = -offset * (sum of the block's quants): 1 * q in int16 pairs,
    // then int32 quads, then one total per block.
    __m256i corr = _mm256_setzero_si256();
    if constexpr (kOffset != 0) {
      __m256i part[8];
      for (int b = 0; b < 8; ++b) part[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, qs[b]), ones16);
      corr = _mm256_mullo_epi32(sum_lanes8(part), _mm256_set1_epi32(-kOffset));
    }
    // {d, corr} per block, in block order.
    const __m256i lo = _mm256_unpacklo_epi32(d, corr), hi = _mm256_unpackhi_epi32(d, corr);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
    // Blocks 0, 2, 4, 6 two bytes late in zeroed slots (Q4_0: each half of
    // the block in a 20-byte half slot).
    uint8_t* slots = out + 64;
    const __m256i zero = _mm256_setzero_si256();
    for (int i = 0; i + 32 <= 4 * kShift; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(slots + i), zero);
    if constexpr ((4 * kShift) % 32 != 0)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(slots + 4 * kShift - 16), _mm256_castsi256_si128(zero));
    for (int p = 0; p < 4; ++p) {
      uint8_t* s = slots + p * kShift;
      if constexpr (kNibbles) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(s + 2), _mm256_castsi256_si128(qs[2 * p]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(s + 22), _mm256_extracti128_si256(qs[2 * p], 1));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + 2), qs[2 * p]);
      }
    }
  }
}

}  // namespace
}  // namespace kazeia::kernels::x86
