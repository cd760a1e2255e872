// Q4_0 and Q8_0 decode (1 to 4 tokens a call, more in groups of 4:
// rows_common_avx2.h's for_token_groups) for the AVX2 table: rows side by
// side, each block's 32 quants in the lanes of one vector - no
// transposition.
//
// The strip runner's rows-in-lanes decoders (strip_legacy.h) transpose the
// weights so that one broadcast activation word meets 8 rows at once. On
// AVX2 that costs, per 16 bytes of 8 rows, 8 loads and 8 unpacks, plus a
// broadcast load per 4 quants: Q4_0 decode ran at ~1.5 weight bytes per
// instruction and was compute bound on 2-core Zen 2 / Zen 3 hosts (the
// kernel's cache-resident speed per core about half the memory's read
// bandwidth of two).
//
// Q4_0: a row's block is one 16-byte load; two rows share a vector (row j
// in the low half, row j + 4 in the high one), split into low / high
// nibbles by one shift and two ANDs, and meet the block's activations as
// they lie (x0..15 | x0..15, x16..31 | x16..31: one broadcast load each) in
// vpmaddubsw. The int16 sums of the 8 rows are reduced by three vphaddw
// into one vector, lane r = row r, and widened by one vpmaddwd: ~2.3 weight
// bytes per instruction. Exact: a vpmaddubsw pair is at most 2 * 15 * 128 =
// 3840 in magnitude and the tree sums 8 pairs (30720 < 2^15) before
// widening; the nibbles' bias is the aux word corr = -8 * sum(x).
//
// Q8_0: a row's block is one 32-byte load, |q| against x with q's sign
// (vpmaddubsw pairs at most 2 * 128 * 127 < 2^15, as the strip runner's
// kSigned path), widened per row by vpmaddwd and reduced by six vphaddd
// and two lane permutes.
//
// The float update is the reference's, block after block (Q4_0:
// fma(sumi * d_w, d_x, acc); Q8_0: fma(d_w * d_x, sumi, acc)): the same
// bits as ref::vec_dot_q4_0 / q8_0 (Q4_0's runs one block behind its
// integer part: State). d_w of the 8 rows: StripRows::halves (Q4_0 one
// 16-bit insert per row, Q8_0 through general registers).
//
// Where Q4_0's time goes (Zen 3 EPYC, 3.1 GHz, 1 thread, 1024 x 256 from
// L2, tools/kernel_ab.sh against variants with a part cut out, results
// wrong): ~21 cycles per block of 8 rows (~21 GB/s, about the one-core
// read bandwidth: one thread reads cold weights at ~95 % of it, two at
// ~65 % - two cores' compute is then the limit). Without the float update
// and the scale gather 0.79x the time, the scale gather alone 0.94x, the
// high nibbles' half (shift, ANDs, vpmaddubsw) 0.83x, the vphaddw tree
// (as vpaddw) 0.96-1.0x, the corr add 0.97-0.99x, d_x 1.0x; the scales
// through general registers (halves<true>) no faster. The time follows
// the instruction count, not one port (llvm-mca's znver3 model puts the
// vpinsrw loads on the critical ports: not so on the hardware).
//
// Included only from the x86 kernel files (through strip_legacy.h); used
// where the policy says so (Isa::kRowKernels: the AVX2 table).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/x86/rows_common_avx2.h"
#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

// kQ8: Q8_0 weights, else Q4_0. kAuxGroup: the aux row's layout (x86_kernels.h): 0 for LegacyAux (8 bytes
// a block), else StreamAux with groups of 8 blocks kAuxGroup bytes apart
// (its first 64 bytes the blocks' LegacyAux).
template <bool kQ8, int kAuxGroup>
struct LegacyRows {
  static constexpr int kRows = StripRows<false>::kRows;
  static constexpr int kUnit = 8;  // blocks per prefetch round (one StreamAux group)
  static constexpr int kBlockBytes = kQ8 ? 34 : 18;

  // Byte offset of block b's LegacyAux in an aux row.
  static size_t aux_offset(int64_t b) {
    if constexpr (kAuxGroup == 0) {
      return 8 * static_cast<size_t>(b);
    } else {
      return kAuxGroup * static_cast<size_t>(b / 8) + 8 * static_cast<size_t>(b % 8);
    }
  }

  template <int C, class R>
  struct State {
    R rows;
    const uint8_t* xq[C];
    const uint8_t* aux[C];
    __m256 acc[C];
    // Q4_0: the previous block's integer sums, scales and aux word, whose
    // float update runs after the next block's integer part (below);
    // zeros before the first block (adding +0 to the +0 start).
    __m256i ph[C];
    __m256 pdw;
    const uint8_t* pax[C];
  };

  // One block of the 8 rows for C tokens; its LegacyAux at aux_off.
  template <int C, class R>
  [[gnu::always_inline]] static void block(State<C, R>& s, int64_t b, size_t aux_off) {
    if constexpr (kQ8) {
      block_q8(s, b, aux_off);
    } else {
      block_q4(s, b, aux_off);
    }
  }

  template <int C, class R>
  [[gnu::always_inline]] static void block_q8(State<C, R>& s, int64_t b, size_t aux_off) {
    const size_t off = kBlockBytes * static_cast<size_t>(b);
    const __m256 dw = s.rows.template halves<true>(off);
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.xq[c] + 34 * b + 2));
      __m256i p[kRows];
      static_for<kRows>([&](auto r) __attribute__((always_inline)) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.rows.row(r) + off + 2));
        p[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(x, q)),
                                 _mm256_set1_epi16(1));
      });
      const __m256i isum = sum_lanes8(p);
      float dx;
      std::memcpy(&dx, s.aux[c] + aux_off, 4);
      s.acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(dx)), _mm256_cvtepi32_ps(isum), s.acc[c]);
    });
  }

  template <int C, class R>
  [[gnu::always_inline]] static void block_q4(State<C, R>& s, int64_t b, size_t aux_off) {
    const size_t off = kBlockBytes * static_cast<size_t>(b);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i lo[4], hi[4];
    static_for<4>([&](auto j) __attribute__((always_inline)) {
      const __m256i q = s.rows.pair(j, off + 2);
      lo[j] = _mm256_and_si256(q, m4);
      hi[j] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    });
    const __m256 dw = s.rows.template halves<false>(off);
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const uint8_t* x = s.xq[c] + 34 * b + 2;
      const __m256i xlo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
      const __m256i xhi = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 16)));
      __m256i sum[4];
      static_for<4>([&](auto j) __attribute__((always_inline)) {
        sum[j] = _mm256_add_epi16(_mm256_maddubs_epi16(lo[j], xlo), _mm256_maddubs_epi16(hi[j], xhi));
      });
      // Lane r of h: row r's 8 pair sums of one half (rows j | j + 4 per
      // 128-bit half), so the widening vpmaddwd gives lane r = row r.
      const __m256i h = _mm256_hadd_epi16(_mm256_hadd_epi16(sum[0], sum[1]), _mm256_hadd_epi16(sum[2], sum[3]));
      // The previous block's float update, then this block's becomes the
      // pending one: each block's chain from its loads to its fma is ~40
      // cycles, and the out-of-order window held about two blocks.
      finish_q4(s, c);
      s.ph[c] = h;
      s.pax[c] = s.aux[c] + aux_off;
    });
    s.pdw = dw;
  }

  // The pending block's float update (the reference's, in block order).
  template <int C, class R>
  [[gnu::always_inline]] static void finish_q4(State<C, R>& s, int c) {
    int32_t corr;
    std::memcpy(&corr, s.pax[c] + 4, 4);
    float dx;
    std::memcpy(&dx, s.pax[c], 4);
    const __m256i isum = _mm256_add_epi32(_mm256_madd_epi16(s.ph[c], _mm256_set1_epi16(1)), _mm256_set1_epi32(corr));
    s.acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), s.pdw), _mm256_set1_ps(dx), s.acc[c]);
  }

  template <int C, class R>
  [[gnu::noinline]] static void run(const StripArgs& a) {
    alignas(8) static constexpr uint8_t kZeroAux[8] = {};
    State<C, R> s{R(a), {}, {}, {}, {}, _mm256_setzero_ps(), {}};
    for (int c = 0; c < C; ++c) {
      s.xq[c] = a.x.q + static_cast<size_t>(c) * a.x.q_stride;
      s.aux[c] = a.x.aux + static_cast<size_t>(c) * a.x.aux_stride;
      s.acc[c] = _mm256_setzero_ps();
      s.ph[c] = _mm256_setzero_si256();
      s.pax[c] = kZeroAux;
    }
    const int64_t nb = a.n_in / 32;
    const int64_t units = (nb + kUnit - 1) / kUnit;
    const size_t next_lines = a.prefetch_lines_per(units);
    for (int64_t u = 0; u < units; ++u) {
      const int64_t b0 = u * kUnit;
      const int64_t n = nb - b0 < kUnit ? nb - b0 : kUnit;
      const UnitPrefetch<kUnit * kBlockBytes> pf(a, u, units, next_lines, static_cast<size_t>(nb) * kBlockBytes);
      const size_t aux0 = aux_offset(b0);  // a unit's blocks are in one group
      if (n == kUnit && pf.spread) {
        // Two copies of the unit, with and without prefetches: a test per
        // block kept GCC from scheduling across blocks (Q8_0 1.3x slower).
        static_for<kUnit>([&](auto k) __attribute__((always_inline)) {
          block(s, b0 + k, aux0 + 8 * k);
          pf.row(s.rows.row(k));  // row k's lines after block k
        });
      } else if (n == kUnit) {
        static_for<kUnit>([&](auto k) __attribute__((always_inline)) { block(s, b0 + k, aux0 + 8 * k); });
      } else {
        for (int64_t b = b0; b < b0 + n; ++b) block(s, b, aux_offset(b));
      }
      if (pf.lines != 0 && !pf.spread) pf.all(s.rows);
    }
    if constexpr (!kQ8) {
      for (int c = 0; c < C; ++c) finish_q4(s, c);
    }
    for (int c = 0; c < C; ++c) {
      s.rows.store(a.y + static_cast<size_t>(c) * a.ldy, s.acc[c]);
    }
  }

  // Any number of tokens, in groups of 4: more than 4 went to the strip
  // runner's panels, which took 2.5x the time of 4 tokens for 5 (Q4_0,
  // 2 threads, Zen 2). false: not handled here.
  static bool strip(const StripArgs& a) {
    if (a.n_rows < 1 || a.n_rows > kRows || a.x.n_tokens < 1) return false;
    for_token_groups(a, run_row_kernel<LegacyRows>);
    return true;
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
