// Q4_0 and Q8_0 decode (1 to 4 tokens) for the AVX2 table: rows side by
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
// bits as ref::vec_dot_q4_0 / q8_0. d_w of the 8 rows: one 16-bit insert
// per row (a gather costs more than the rest of the block on these cores).
//
// Included only from the x86 kernel files (through strip_legacy.h); used
// where the policy says so (Isa::kRowKernels: the AVX2 table).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

// kQ8: Q8_0 weights, else Q4_0. kAuxGroup: the aux row's layout (x86_kernels.h): 0 for LegacyAux (8 bytes
// a block), else StreamAux with groups of 8 blocks kAuxGroup bytes apart
// (its first 64 bytes the blocks' LegacyAux).
template <bool kQ8, int kAuxGroup>
struct LegacyRows {
  static constexpr int kRows = 8;
  static constexpr int kUnit = 8;  // blocks per prefetch round (one StreamAux group)
  static constexpr int kBlockBytes = kQ8 ? 34 : 18;
  // Whole lines of a row in a unit: 2 (Q4_0) or 4 (Q8_0); a unit other
  // than the last holds kLines or kLines + 1 line starts.
  static constexpr int kLines = kUnit * kBlockBytes / 64;

  // Byte offset of block b's LegacyAux in an aux row.
  static size_t aux_offset(int64_t b) {
    if constexpr (kAuxGroup == 0) {
      return 8 * static_cast<size_t>(b);
    } else {
      return kAuxGroup * static_cast<size_t>(b / 8) + 8 * static_cast<size_t>(b % 8);
    }
  }

  static uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }

  // Row r at r0 + r * stride for r < 4, at r4 + (r - 4) * stride above: the
  // compiler addresses all 8 rows from two bases and the multiples of the
  // stride (eight pointers of their own crowd out the kernel's registers).
  template <int C>
  struct State {
    const uint8_t* r0;
    const uint8_t* r4;
    size_t stride;
    const uint8_t* xq[C];
    const uint8_t* aux[C];
    __m256 acc[C];
    const uint8_t* row(int r) const { return r < 4 ? r0 + r * stride : r4 + (r - 4) * stride; }
  };

  // One block of the 8 rows for C tokens; its LegacyAux at aux_off.
  template <int C>
  [[gnu::always_inline]] static void block(State<C>& s, int64_t b, size_t aux_off) {
    if constexpr (kQ8) {
      block_q8<C>(s, b, aux_off);
    } else {
      block_q4<C>(s, b, aux_off);
    }
  }

  // d_w of the 8 rows' block at `off`.
  template <int C>
  [[gnu::always_inline]] static __m256 row_scales(const State<C>& s, size_t off) {
    __m128i dh = _mm_cvtsi32_si128(load16(s.row(0) + off));
    static_for<7>([&](auto r) __attribute__((always_inline)) {
      dh = _mm_insert_epi16(dh, load16(s.row(r + 1) + off), r + 1);
    });
    return _mm256_cvtph_ps(dh);
  }

  template <int C>
  [[gnu::always_inline]] static void block_q8(State<C>& s, int64_t b, size_t aux_off) {
    const size_t off = kBlockBytes * static_cast<size_t>(b);
    const __m256 dw = row_scales(s, off);
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.xq[c] + 34 * b + 2));
      __m256i p[kRows];
      static_for<kRows>([&](auto r) __attribute__((always_inline)) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.row(r) + off + 2));
        p[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(x, q)),
                                 _mm256_set1_epi16(1));
      });
      // Per 128-bit half: lane r (mod 4) of h0 = row r's partial sum, of
      // h1 = row 4 + r's; the halves' partials then add up.
      const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
      const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
      const __m256i isum = _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                                            _mm256_permute2x128_si256(h0, h1, 0x31));
      float dx;
      std::memcpy(&dx, s.aux[c] + aux_off, 4);
      s.acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(dx)), _mm256_cvtepi32_ps(isum), s.acc[c]);
    });
  }

  template <int C>
  [[gnu::always_inline]] static void block_q4(State<C>& s, int64_t b, size_t aux_off) {
    const size_t off = kBlockBytes * static_cast<size_t>(b);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i lo[4], hi[4];
    static_for<4>([&](auto j) __attribute__((always_inline)) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.row(j) + off + 2));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.row(j + 4) + off + 2));
      const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(a), c, 1);
      lo[j] = _mm256_and_si256(q, m4);
      hi[j] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    });
    const __m256 dw = row_scales(s, off);
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
      const uint8_t* ax = s.aux[c] + aux_off;
      int32_t corr;
      std::memcpy(&corr, ax + 4, 4);
      float dx;
      std::memcpy(&dx, ax, 4);
      const __m256i isum = _mm256_add_epi32(_mm256_madd_epi16(h, _mm256_set1_epi16(1)), _mm256_set1_epi32(corr));
      s.acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), dw), _mm256_set1_ps(dx), s.acc[c]);
    });
  }

  // The lines j0 .. j1 - 1 of every row (lane streams; first = the lane's
  // distance ahead + 64 j0), as a loop: a strip's last, partial unit.
  template <int C>
  static void lane_prefetch_all(const State<C>& s, size_t first, size_t lines) {
    for (int r = 0; r < kRows; ++r) {
      for (size_t j = 0; j < lines; ++j) _mm_prefetch(reinterpret_cast<const char*>(s.row(r) + first + 64 * j), _MM_HINT_T1);
    }
  }

  template <int C>
  [[gnu::noinline]] static void run(const StripArgs& a) {
    State<C> s;
    s.r0 = a.w;
    s.r4 = a.w + 4 * a.w_stride;
    s.stride = a.w_stride;
    for (int c = 0; c < C; ++c) {
      s.xq[c] = a.x.q + static_cast<size_t>(c) * a.x.q_stride;
      s.aux[c] = a.x.aux + static_cast<size_t>(c) * a.x.aux_stride;
      s.acc[c] = _mm256_setzero_ps();
    }
    const int64_t nb = a.n_in / 32;
    const int64_t units = (nb + kUnit - 1) / kUnit;
    const size_t next_lines = a.prefetch_lines_per(units);
    for (int64_t u = 0; u < units; ++u) {
      const int64_t b0 = u * kUnit;
      const int64_t n = nb - b0 < kUnit ? nb - b0 : kUnit;
      if (next_lines != 0) {
        const uint8_t* p = a.prefetch + static_cast<size_t>(u) * next_lines * 64;
        for (size_t i = 0; i < next_lines; ++i) _mm_prefetch(reinterpret_cast<const char*>(p + 64 * i), _MM_HINT_T1);
      }
      // Lane streams: line j of a row is asked for in the unit holding its
      // byte 64 j (the last unit rounds its end up): each line once, as the
      // strip runner's LaneSink does. A whole unit other than the last asks
      // for lines j0 .. j0 + kLines - 1 and j0 + n - 1 (n = kLines or
      // kLines + 1: at worst one twice) of row k after its block k - no
      // loop, no branch.
      const bool last = u + 1 == units;
      const size_t j0 = static_cast<size_t>(b0) * kBlockBytes / 64;
      const size_t j1 = (static_cast<size_t>(b0 + n) * kBlockBytes + (last ? 63 : 0)) / 64;
      const size_t first = a.lane_prefetch + 64 * j0;
      if (n == kUnit && !last && a.lane_prefetch != 0) {
        const size_t third = first + 64 * (j1 - j0 - 1);
        const size_t aux0 = aux_offset(b0);  // a unit's blocks are in one group
        static_for<kUnit>([&](auto k) __attribute__((always_inline)) {
          block<C>(s, b0 + k, aux0 + 8 * k);
          const uint8_t* row = s.row(k);
          static_for<kLines>([&](auto j) __attribute__((always_inline)) {
            _mm_prefetch(reinterpret_cast<const char*>(row + first + 64 * j), _MM_HINT_T1);
          });
          _mm_prefetch(reinterpret_cast<const char*>(row + third), _MM_HINT_T1);
        });
      } else if (n == kUnit) {
        const size_t aux0 = aux_offset(b0);
        static_for<kUnit>([&](auto k) __attribute__((always_inline)) { block<C>(s, b0 + k, aux0 + 8 * k); });
        if (a.lane_prefetch != 0) lane_prefetch_all(s, first, j1 - j0);
      } else {
        for (int64_t b = b0; b < b0 + n; ++b) block<C>(s, b, aux_offset(b));
        if (a.lane_prefetch != 0) lane_prefetch_all(s, first, j1 - j0);
      }
    }
    for (int c = 0; c < C; ++c) {
      float* y = a.y + static_cast<size_t>(c) * a.ldy;
      _mm256_storeu_ps(y, s.acc[c]);
    }
  }

  // Decode batches (1 to 4 tokens) of whole strips; false: not handled
  // here (a strip of fewer rows - a matrix's or a lane segment's last -
  // takes the strip runner, whose rows repeat the last one).
  static bool strip(const StripArgs& a) {
    if (a.n_rows != kRows) return false;
    switch (a.x.n_tokens) {
      case 1: run<1>(a); return true;
      case 2: run<2>(a); return true;
      case 3: run<3>(a); return true;
      case 4: run<4>(a); return true;
      default: return false;
    }
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
