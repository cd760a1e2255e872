// Q6_K decode (1 to 4 tokens) for the AVX2 table: rows side by side, a row's
// quants in the lanes of its own vectors - no transposition (see
// rows_legacy_avx2.h for why; Q6_K is the tied output matrix of Qwen3 /
// Qwen3.5 Q4_0 files, a third or more of a token's bytes).
//
// Per row and super-block: ql (128 bytes) and qh (64) in six 32-byte loads;
// 32 consecutive elements 128h + 32m + l (l = 0..31) are one vector,
// (4 low bits from ql, 2 high bits from qh) = 3-4 AND / shift / OR, and
// meet the activations as they lie in vpmaddubsw (pairs at most 2 * 63 *
// 128 < 2^15). Its low 128-bit half holds sub-block 8h + 2m, its high half
// the next one, so one vpmaddwd against those two scales (int16, broadcast
// per half by vpshufb) gives scaled int32 pair sums. The quants' offset 32
// enters as -32 * sum over the sub-blocks of scale * bsums (the Q8_K
// activation's sums of 16, one vpmaddwd). The 8 rows' vectors are reduced
// by six vphaddd and two lane permutes into lane r = row r.
//
// That is the integer I1 of strip_kquants.h exactly (integers, no
// overflow: |I1| < 256 * 63 * 128 * 128 + 32 * 16 * 2048 * 128 < 2^31), and
// the float update is that file's acc = fma(d_w * d_x, float(I1), acc) per
// super-block: the same bits as the strip runner's Q6_K strips.
//
// Included only from the x86 kernel files (through strip_kquants.h); used
// where the policy says so (Isa::kRowKernels: the AVX2 table).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/x86/rows_common_avx2.h"
#include "tensor/blocks.h"
#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

struct Q6KRows {
  static constexpr int kRows = StripRows<false>::kRows;
  static constexpr size_t kBytes = sizeof(BlockQ6_K);  // ql[128], qh[64], scales[16], d
  static constexpr size_t kXBytes = sizeof(BlockQ8_K);  // d (float), qs[256], bsums[16]
  static constexpr size_t kQh = offsetof(BlockQ6_K, qh), kScales = offsetof(BlockQ6_K, scales),
                          kD = offsetof(BlockQ6_K, d);
  static constexpr size_t kXqs = offsetof(BlockQ8_K, qs), kXbsums = offsetof(BlockQ8_K, bsums);

  // Row r's 8 partial sums of I1 (their total is I1) for super-block w,
  // per token c against x[c] into p[c]: the weights are unpacked once for
  // the C tokens.
  template <int C>
  [[gnu::always_inline]] static void row_sums(const uint8_t* w, const uint8_t* const* x, __m256i* p) {
    // Scales as int16: [s0..s7 | s8..s15]; per half h both 128-bit halves
    // hold s8h..s8h+7, and vpshufb picks one per half.
    const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + kScales)));
    // -32 * sum of scale * bsums, as 8 partial sums.
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[c] + kXbsums));
      p[c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(s16, bsums), 5));
    });
    const __m256i m4 = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30);
    static_for<2>([&](auto h) __attribute__((always_inline)) {
      const __m256i sh = _mm256_permute4x64_epi64(s16, h == 0 ? 0x44 : 0xEE);
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * h));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kQh + 32 * h));
      static_for<4>([&](auto m) __attribute__((always_inline)) {
        const __m256i src = m % 2 == 0 ? a : b;
        const __m256i lo = m < 2 ? _mm256_and_si256(src, m4) : _mm256_and_si256(_mm256_srli_epi16(src, 4), m4);
        const __m256i hi = m == 0 ? _mm256_slli_epi16(qh, 4)
                         : m == 1 ? _mm256_slli_epi16(qh, 2)
                         : m == 2 ? qh
                                  : _mm256_srli_epi16(qh, 2);
        const __m256i q = _mm256_or_si256(lo, _mm256_and_si256(hi, top));
        // Scales 2m (low half) and 2m + 1 (high half) of this half's 8.
        const __m256i ctrl = _mm256_setr_epi8(4 * m, 4 * m + 1, 4 * m, 4 * m + 1, 4 * m, 4 * m + 1, 4 * m, 4 * m + 1,
                                              4 * m, 4 * m + 1, 4 * m, 4 * m + 1, 4 * m, 4 * m + 1, 4 * m, 4 * m + 1,
                                              4 * m + 2, 4 * m + 3, 4 * m + 2, 4 * m + 3, 4 * m + 2, 4 * m + 3, 4 * m + 2,
                                              4 * m + 3, 4 * m + 2, 4 * m + 3, 4 * m + 2, 4 * m + 3, 4 * m + 2, 4 * m + 3,
                                              4 * m + 2, 4 * m + 3);
        const __m256i sc = _mm256_shuffle_epi8(sh, ctrl);
        static_for<C>([&](auto c) __attribute__((always_inline)) {
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[c] + kXqs + 128 * h + 32 * m));
          p[c] = _mm256_add_epi32(p[c], _mm256_madd_epi16(_mm256_maddubs_epi16(q, xv), sc));
        });
      });
    });
  }

  template <int C, class R>
  [[gnu::noinline]] static void run(const StripArgs& a) {
    const R rows(a);
    const int64_t nsb = a.n_in / 256;
    const size_t next_lines = a.prefetch_lines_per(nsb);
    __m256 acc[C];
    static_for<C>([&](auto c) { acc[c] = _mm256_setzero_ps(); });
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const size_t off = kBytes * static_cast<size_t>(sb);
      const uint8_t* x[C];
      static_for<C>([&](auto c) { x[c] = a.x.q + static_cast<size_t>(c) * a.x.q_stride + kXBytes * static_cast<size_t>(sb); });
      const UnitPrefetch<kBytes> pf(a, sb, nsb, next_lines, static_cast<size_t>(nsb) * kBytes);
      __m256i p[C][kRows];  // row r's sums for token c, then its lines
      static_for<kRows>([&](auto r) __attribute__((always_inline)) {
        __m256i pr[C];
        row_sums<C>(rows.row(r) + off, x, pr);
        static_for<C>([&](auto c) { p[c][r] = pr[c]; });
        if (pf.spread) pf.row(rows.row(r));
      });
      if (pf.lines != 0 && !pf.spread) pf.all(rows);
      const __m256 dw = rows.template halves<false>(off + kD);
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const __m256i isum = sum_lanes8(p[c]);
        float dx;
        std::memcpy(&dx, x[c], 4);
        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(dx)), _mm256_cvtepi32_ps(isum), acc[c]);
      });
    }
    static_for<C>([&](auto c) { rows.store(a.y + static_cast<size_t>(c) * a.ldy, acc[c]); });
  }

  // 1 to 4 tokens; false: not handled here.
  static bool strip(const StripArgs& a) {
    if (a.x.n_tokens < 1 || a.x.n_tokens > kRowKernelTokens || a.n_rows < 1 || a.n_rows > kRows) return false;
    run_row_kernel<Q6KRows>(a);
    return true;
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
