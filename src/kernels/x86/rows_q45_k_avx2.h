// Q4_K and Q5_K decode (1 to 4 tokens) for the AVX2 table: rows side by
// side, a row's quants in the lanes of its own vectors - no transposition
// of the quants (see rows_legacy_avx2.h for why; Q4_K / Q5_K carry most of
// a Q4_K_M / Q5_K_M file's bytes).
//
// Per super-block of the 8 rows:
//  - the 16-byte headers (d, dmin, 12 bytes of 6-bit scales and mins) are
//    transposed into 4 vectors, lane r = row r, and the scales and mins
//    unpacked there for all 8 rows at once;
//  - sub-block u (32 elements: the low (u even) or high nibbles of qs bytes
//    32 (u / 2) .. + 31) is taken 16 elements at a time, rows j and j + 4
//    in one vector, as rows_legacy_avx2.h's Q4_0 blocks: vpmaddubsw against
//    the Q8_K activations (pairs at most 2 * 15 * 128), the two halves added
//    (4 elements an int16), two levels of vphaddw across rows (16 elements,
//    at most 30720 < 2^15), then one vpmaddwd against (sc, sc) of each row:
//    lane r = row r's scaled sub-block sum. One multiply per 8 rows for the
//    scale, not one per row, which made the first version (vpmaddwd per row
//    and sub-block, rows reduced by sum_lanes8) slower than the strip runner
//    (1.11x its time, 1 thread, cache-resident, Zen 2);
//  - Q5_K: each quant's fifth bit (bit u of its qh byte) is shifted to bit
//    4 and or'ed in. Quants reach 31, so a 16-element int16 sum could
//    overflow: one vphaddw level (8 elements, at most 31744), vpmaddwd by
//    the scales of four rows at a time, and the last level in int32. Here
//    the row kernel saves less (0.92x the runner's time for 1 token, 1
//    thread, cache-resident: the fifth bits cost three instructions a
//    vector);
//  - the mins term I2 = sum of m_j * (sum of sub-block j's activations) is
//    four vpmaddwd of the rows' (m_2p, m_2p+1) against the token's aux word
//    p (its sums of 32, pairs32_aux).
//
// Those are the integers I1 and I2 of strip_kquants.h exactly (|I1| < 256 *
// 31 * 128 * 63 < 2^31), and the float update is that file's
//   acc = fma(d_w * d_x, float(I1), acc); acc = fnma(dmin_w * d_x, float(I2), acc)
// per super-block: the same bits as the strip runner's Q4_K / Q5_K strips.
//
// Included only from the x86 kernel files (through strip_kquants.h); used
// where the policy says so (Isa::kRowKernels: the AVX2 table).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/x86/rows_common_avx2.h"
#include "kernels/x86/static_for.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::x86 {
namespace {

// kQ5: Q5_K weights, else Q4_K.
template <bool kQ5>
struct K45Rows {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;
  static constexpr int kRows = StripRows<false>::kRows;
  static constexpr size_t kBytes = sizeof(Block);  // d, dmin, scales[12], (Q5_K: qh[32],) qs[128]
  static constexpr size_t kXBytes = sizeof(BlockQ8_K);  // d (float), qs[256], bsums[16]
  static constexpr size_t kQs = offsetof(Block, qs);
  static constexpr size_t kQh = kQ5 ? offsetof(BlockQ5_K, qh) : 0;
  static constexpr size_t kXqs = offsetof(BlockQ8_K, qs);
  static constexpr size_t kAuxBytes = 16;  // per super-block: 8 int16 sums of 32 (pairs32_aux)

  // The 8 rows' headers, transposed: h[k] lane r = 32-bit word k of row r's
  // header (word 0: d | dmin << 16; 1-3: the 12 scale bytes).
  template <class R>
  [[gnu::always_inline]] static void headers(const R& rows, size_t off, __m256i h[4]) {
    __m256i v[4];
    static_for<4>([&](auto j) __attribute__((always_inline)) { v[j] = rows.pair(j, off); });
    const __m256i t0 = _mm256_unpacklo_epi32(v[0], v[1]), t1 = _mm256_unpackhi_epi32(v[0], v[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(v[2], v[3]), t3 = _mm256_unpackhi_epi32(v[2], v[3]);
    h[0] = _mm256_unpacklo_epi64(t0, t2);
    h[1] = _mm256_unpackhi_epi64(t0, t2);
    h[2] = _mm256_unpacklo_epi64(t1, t3);
    h[3] = _mm256_unpackhi_epi64(t1, t3);
  }

  // Byte pattern {4i + b0, 0x80, 4i + b1, 0x80} in every 32-bit lane i: the
  // lane's bytes b0, b1 as two zero-extended int16.
  template <int b0, int b1>
  [[gnu::always_inline]] static __m256i pair_ctrl() {
    auto w = [](int i) { return (4 * i + b0) | 0x80 << 8 | (4 * i + b1) << 16 | static_cast<int>(0x80000000u); };
    return _mm256_setr_epi32(w(0), w(1), w(2), w(3), w(0), w(1), w(2), w(3));
  }

  // Bytes b and b + 4 of every 128-bit half, each as four zero-extended int16.
  template <int b>
  [[gnu::always_inline]] static __m256i quad_ctrl() {
    constexpr int lo = b | 0x8000 | b << 16 | static_cast<int>(0x80000000u), hi = lo + (4 | 4 << 16);
    return _mm256_setr_epi32(lo, lo, hi, hi, lo, lo, hi, hi);
  }

  template <int C, class R>
  [[gnu::noinline]] static void run(const StripArgs& a) {
    const R rows(a);
    const int64_t nsb = a.n_in / 256;
    const size_t next_lines = a.prefetch_lines_per(nsb);
    const __m256i m4 = _mm256_set1_epi8(0x0F), m6 = _mm256_set1_epi8(0x3F), top = _mm256_set1_epi8(0x30);
    __m256 acc[C];
    static_for<C>([&](auto c) { acc[c] = _mm256_setzero_ps(); });
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const size_t off = kBytes * static_cast<size_t>(sb);
      const uint8_t* x[C];
      static_for<C>([&](auto c) { x[c] = a.x.q + static_cast<size_t>(c) * a.x.q_stride + kXBytes * static_cast<size_t>(sb) + kXqs; });
      const UnitPrefetch<kBytes> pf(a, sb, nsb, next_lines, static_cast<size_t>(nsb) * kBytes);
      __m256i h[4];
      headers(rows, off, h);
      // Lane r: row r's scales / mins as bytes (scale_min_k4's layout: word
      // 1 the low 6 bits of sc0-3, word 2 those of m0-3, word 3 sc4-7 in
      // the low nibbles and m4-7 in the high ones, whose top 2 bits are the
      // top bits of words 1 (scales) and 2 (mins)).
      const __m256i sc_lo = _mm256_and_si256(h[1], m6);
      const __m256i mn_lo = _mm256_and_si256(h[2], m6);
      const __m256i sc_hi = _mm256_or_si256(_mm256_and_si256(h[3], m4), _mm256_and_si256(_mm256_srli_epi32(h[1], 2), top));
      const __m256i mn_hi =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(h[3], 4), m4), _mm256_and_si256(_mm256_srli_epi32(h[2], 2), top));
      // Q5_K: element 16e + l of every sub-block u has its fifth bit in bit
      // u of qh byte 16e + l (rows j | j + 4 as the nibbles below).
      __m256i qh[2][4];
      if constexpr (kQ5) {
        static_for<2>([&](auto e) __attribute__((always_inline)) {
          static_for<4>([&](auto j) __attribute__((always_inline)) { qh[e][j] = rows.pair(j, off + kQh + 16 * e); });
        });
      }
      __m256i ip[C][kQ5 ? 2 : 1];
      static_for<8>([&](auto u) __attribute__((always_inline)) {
        // Sub-block u: the low (u even) or high nibbles of qs bytes
        // 32 (u / 2) .. + 31; chunk e = its elements 16e .. 16e + 15, rows
        // j and j + 4 in one vector.
        auto unpack = [&](auto j, auto e) __attribute__((always_inline)) {
          const __m256i v = rows.pair(j, off + kQs + 32 * (u / 2) + 16 * e);
          __m256i q = u % 2 == 0 ? _mm256_and_si256(v, m4) : _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
          if constexpr (kQ5) {
            const __m256i b = u < 4 ? _mm256_slli_epi16(qh[e][j], 4 - u) : _mm256_srli_epi16(qh[e][j], u - 4);
            q = _mm256_or_si256(q, _mm256_and_si256(b, _mm256_set1_epi8(0x10)));
          }
          return q;
        };
        auto xv = [&](auto c, int half) __attribute__((always_inline)) {
          return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[c] + 32 * u + 16 * half)));
        };
        const __m256i& sc = u < 4 ? sc_lo : sc_hi;
        // Token c's sums s (rows j | j + 4: 4 elements an int16, Q4_K at
        // most 7680, Q5_K 15872) into its partial sums ip[c].
        auto reduce = [&](auto c, const __m256i* s) __attribute__((always_inline)) {
          if constexpr (!kQ5) {
            // Lane r: row r's two sums of 16 elements (rows j | j + 4 per
            // 128-bit half, as in rows_legacy_avx2.h's Q4_0), times (sc, sc)
            // of its sub-block u.
            const __m256i t = _mm256_hadd_epi16(_mm256_hadd_epi16(s[0], s[1]), _mm256_hadd_epi16(s[2], s[3]));
            const __m256i part = _mm256_madd_epi16(t, _mm256_shuffle_epi8(sc, pair_ctrl<u % 4, u % 4>()));
            ip[c][0] = u == 0 ? part : _mm256_add_epi32(ip[c][0], part);
          } else {
            // One level only (8 elements an int16, at most 31744): rows 0, 1 |
            // 4, 5 (k = 0) and 2, 3 | 6, 7 (k = 1), four int16 each, times
            // their scales; the last level is the int32 one below.
            static_for<2>([&](auto k) __attribute__((always_inline)) {
              const __m256i t = _mm256_hadd_epi16(s[2 * k], s[2 * k + 1]);
              const __m256i part = _mm256_madd_epi16(t, _mm256_shuffle_epi8(sc, quad_ctrl<8 * k + u % 4>()));
              ip[c][k] = u == 0 ? part : _mm256_add_epi32(ip[c][k], part);
            });
          }
        };
        if constexpr (kQ5 && C <= 2) {
          // Q5_K: a row pair's two chunks unpacked right where the tokens
          // use them. Held for all rows over the tokens, as below, they and
          // the qh vectors were spilled: 1 token 0.92x the time this way
          // (1 thread, cache-resident; 0.95x cold with 2 threads). 3-4
          // tokens ran 1.15x slower this way and Q4_K 1.01x, so they keep
          // the order below.
          __m256i s[C][4];
          static_for<4>([&](auto j) __attribute__((always_inline)) {
            const __m256i q0 = unpack(j, std::integral_constant<int, 0>{}), q1 = unpack(j, std::integral_constant<int, 1>{});
            static_for<C>([&](auto c) __attribute__((always_inline)) {
              s[c][j] = _mm256_add_epi16(_mm256_maddubs_epi16(q0, xv(c, 0)), _mm256_maddubs_epi16(q1, xv(c, 1)));
            });
          });
          static_for<C>([&](auto c) __attribute__((always_inline)) { reduce(c, s[c]); });
        } else {
          __m256i q[2][4];
          static_for<2>([&](auto e) __attribute__((always_inline)) {
            static_for<4>([&](auto j) __attribute__((always_inline)) { q[e][j] = unpack(j, e); });
          });
          static_for<C>([&](auto c) __attribute__((always_inline)) {
            const __m256i x0 = xv(c, 0), x1 = xv(c, 1);
            __m256i s[4];
            static_for<4>([&](auto j) __attribute__((always_inline)) {
              s[j] = _mm256_add_epi16(_mm256_maddubs_epi16(q[0][j], x0), _mm256_maddubs_epi16(q[1][j], x1));
            });
            reduce(c, s);
          });
        }
      });
      __m256i i1[C];
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        if constexpr (kQ5) {
          i1[c] = _mm256_hadd_epi32(ip[c][0], ip[c][1]);
        } else {
          i1[c] = ip[c][0];
        }
      });
      if (pf.spread) {
        static_for<kRows>([&](auto r) __attribute__((always_inline)) { pf.row(rows.row(r)); });
      } else if (pf.lines != 0) {
        pf.all(rows);
      }
      // d (low halves of word 0) and dmin (high halves), as floats.
      const __m256i dd = _mm256_permute4x64_epi64(
          _mm256_shuffle_epi8(h[0], _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9,
                                                     12, 13, 2, 3, 6, 7, 10, 11, 14, 15)),
          0xD8);
      const __m256 dw = _mm256_cvtph_ps(_mm256_castsi256_si128(dd));
      const __m256 dmin = _mm256_cvtph_ps(_mm256_extracti128_si256(dd, 1));
      // Lane r: row r's mins (m_2p, m_2p+1) as int16, against the token's
      // sums of 32 of sub-blocks 2p, 2p + 1 (its aux word p).
      const __m256i mp[4] = {_mm256_shuffle_epi8(mn_lo, pair_ctrl<0, 1>()), _mm256_shuffle_epi8(mn_lo, pair_ctrl<2, 3>()),
                             _mm256_shuffle_epi8(mn_hi, pair_ctrl<0, 1>()), _mm256_shuffle_epi8(mn_hi, pair_ctrl<2, 3>())};
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const uint8_t* sums = a.x.aux + static_cast<size_t>(c) * a.x.aux_stride + kAuxBytes * static_cast<size_t>(sb);
        __m256i i2 = _mm256_madd_epi16(mp[0], _mm256_set1_epi32(load32(sums)));
        static_for<3>([&](auto p) __attribute__((always_inline)) {
          i2 = _mm256_add_epi32(i2, _mm256_madd_epi16(mp[p + 1], _mm256_set1_epi32(load32(sums + 4 * (p + 1)))));
        });
        float dx;
        std::memcpy(&dx, x[c] - kXqs, 4);
        const __m256 vdx = _mm256_set1_ps(dx);
        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, vdx), _mm256_cvtepi32_ps(i1[c]), acc[c]);
        acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, vdx), _mm256_cvtepi32_ps(i2), acc[c]);
      });
    }
    static_for<C>([&](auto c) { rows.store(a.y + static_cast<size_t>(c) * a.ldy, acc[c]); });
  }

  static int32_t load32(const uint8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

  // 1 to 4 tokens; false: not handled here.
  static bool strip(const StripArgs& a) {
    if (a.x.n_tokens < 1 || a.x.n_tokens > kRowKernelTokens || a.n_rows < 1 || a.n_rows > kRows) return false;
    run_row_kernel<K45Rows>(a);
    return true;
  }
};
using Q4KRows = K45Rows<false>;
using Q5KRows = K45Rows<true>;

}  // namespace
}  // namespace kazeia::kernels::x86
