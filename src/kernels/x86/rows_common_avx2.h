// What the AVX2 row kernels (rows_legacy_avx2.h, rows_q6_k_avx2.h) share:
// the 8 rows of a strip, their fp16 scales and the prefetches of a unit of
// work. Per-row int32 vectors become lane r = row r by stream_aux_avx2.h's
// sum_lanes8.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/static_for.h"
#include "kernels/x86/stream_aux_avx2.h"

namespace kazeia::kernels::x86 {
namespace {

// Row r at r0 + r * stride for r < 4, at r4 + (r - 4) * stride above: the
// compiler addresses all 8 rows from two bases and the multiples of the
// stride (eight pointers of their own crowd out the kernels' registers).
// kClamped: a strip of fewer rows (1 <= n_rows < 8: a matrix's last, and
// the last strips of a lane segment, whose last lanes run out of rows
// first - ~6 % of a decode's strips): rows past n_rows repeat the last
// (read again from L1; their results are not stored), and each row has its
// own pointer (few strips take this form).
template <bool kClamped>
struct StripRows {
  static constexpr int kRows = 8;
  const uint8_t* r0;
  const uint8_t* r4;
  size_t stride;
  const uint8_t* clamped[kClamped ? kRows : 1] = {};
  int n_rows = kRows;
  explicit StripRows(const StripArgs& a) : r0(a.w), r4(a.w + 4 * a.w_stride), stride(a.w_stride) {
    if constexpr (kClamped) {
      n_rows = static_cast<int>(a.n_rows);
      for (int r = 0; r < kRows; ++r) clamped[r] = a.w + static_cast<size_t>(r < n_rows ? r : n_rows - 1) * stride;
    }
  }
  const uint8_t* row(int r) const {
    if constexpr (kClamped) return clamped[r];
    return r < 4 ? r0 + r * stride : r4 + (r - 4) * stride;
  }

  // 16 bytes at `at` of rows j (low half) and j + 4 (high half), j < 4: two
  // rows' blocks in one vector (the Q4_0 / Q4_K / Q5_K row kernels).
  [[gnu::always_inline]] __m256i pair(int j, size_t at) const {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row(j) + at));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row(j + 4) + at));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  }

  // The fp16 at byte `off` of every row, as floats (a gather costs more
  // than the rest of a Q4_0 block on these cores).
  //  - kViaGpr: packed four to a 64-bit word in general registers
  //    (zero-extending loads, shifts and ors on the integer ALUs), then two
  //    moves to a vector;
  //  - else one 16-bit insert per row.
  // Q8_0 runs faster with the first (1 thread, cache-resident, Zen 2:
  // 0.94x the time), Q4_0 slower (1.07x; 1.04x with two chains of four
  // inserts).
  template <bool kViaGpr>
  [[gnu::always_inline]] __m256 halves(size_t off) const {
    if constexpr (kViaGpr) {
      auto four = [&](int r) __attribute__((always_inline)) {
        uint64_t w = load16(row(r) + off);
        w |= static_cast<uint64_t>(load16(row(r + 1) + off)) << 16;
        w |= static_cast<uint64_t>(load16(row(r + 2) + off)) << 32;
        w |= static_cast<uint64_t>(load16(row(r + 3) + off)) << 48;
        asm("" : "+r"(w));  // GCC otherwise moves the shifts and ors to vectors
        return static_cast<long long>(w);
      };
      return _mm256_cvtph_ps(_mm_set_epi64x(four(4), four(0)));
    } else {
      __m128i h = _mm_cvtsi32_si128(load16(row(0) + off));
      static_for<kRows - 1>([&](auto r) __attribute__((always_inline)) {
        h = _mm_insert_epi16(h, load16(row(r + 1) + off), r + 1);
      });
      return _mm256_cvtph_ps(h);
    }
  }

  // The 8 results into y: the first n_rows of them when clamped.
  void store(float* y, __m256 v) const {
    Avx2::store_first(y, kClamped ? n_rows : kRows, v);
  }

  static uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
};

// fn(g) for a's tokens in groups of at most 4 (a row kernel's batch; one
// call for 1 to 4 tokens, with g = a). Larger batches (a speculative batch
// to verify) thus cost a read of the strip from memory, by the first group,
// which alone prefetches what a asks for, and reads from L1 / L2 by the
// others.
// Tokens a row kernel call takes (run_row_kernel below).
constexpr int64_t kRowKernelTokens = 4;

template <class Fn>
void for_token_groups(const StripArgs& a, Fn&& fn) {
  constexpr int64_t kGroup = kRowKernelTokens;
  StripArgs g = a;
  for (int64_t t0 = 0; t0 < a.x.n_tokens; t0 += kGroup) {
    g.x.n_tokens = a.x.n_tokens - t0 < kGroup ? a.x.n_tokens - t0 : kGroup;
    g.x.q = a.x.q + static_cast<size_t>(t0) * a.x.q_stride;
    g.x.aux = a.x.aux == nullptr ? nullptr : a.x.aux + static_cast<size_t>(t0) * a.x.aux_stride;
    g.y = a.y + static_cast<size_t>(t0) * a.ldy;
    fn(g);
    g.prefetch = nullptr;
    g.prefetch_bytes = 0;
    g.lane_prefetch = 0;
  }
}

// Kernel::run<C, R> for a group of 1 to 4 tokens (C = the count), with R
// = StripRows<false> for a whole strip of 8 rows, StripRows<true> for
// fewer.
template <class Kernel>
void run_row_kernel(const StripArgs& g) {
  static_assert(kRowKernelTokens == 4, "the switch below takes 1 to 4 tokens");
  auto with_rows = [&]<class R>() {
    switch (g.x.n_tokens) {
      case 1: Kernel::template run<1, R>(g); break;
      case 2: Kernel::template run<2, R>(g); break;
      case 3: Kernel::template run<3, R>(g); break;
      default: Kernel::template run<4, R>(g); break;
    }
  };
  if (g.n_rows == StripRows<false>::kRows) {
    with_rows.template operator()<StripRows<false>>();
  } else {
    with_rows.template operator()<StripRows<true>>();
  }
}

// The prefetches of one unit of a strip's work: unit u of `units`, each
// kUnitBytes of every row (the last up to row_bytes).
//  - next: what the caller reads next (StripArgs::prefetch, strip walks),
//    next_lines lines a unit.
//  - lane streams (StripArgs::lane_prefetch): line j of a row is asked for
//    in the unit holding its byte 64 j (the last unit rounds its end up):
//    each line once, as the strip runner's LaneSink does. A unit other than
//    the last holds kLines or kLines + 1 line starts (kLines = unit_bytes /
//    64); row(r) asks for lines j0 .. j0 + kLines - 1 and j0 + n - 1 (at
//    worst one twice): no loop, no branch, so a kernel spreads them over
//    its unit, a row at a time. The last unit asks for its lines in a loop.
template <size_t kUnitBytes>
struct UnitPrefetch {
  static constexpr int kLines = static_cast<int>(kUnitBytes / 64);
  size_t first = 0;  // lane_prefetch + 64 j0
  size_t final_line = 0;  // lane_prefetch + 64 (j1 - 1)
  size_t lines = 0;  // j1 - j0
  bool spread = false;  // lane streams, not the last unit

  UnitPrefetch(const StripArgs& a, int64_t u, int64_t units, size_t next_lines, size_t row_bytes) {
    if (next_lines != 0) prefetch_to_l2(a.prefetch + static_cast<size_t>(u) * next_lines * 64, next_lines * 64);
    if (a.lane_prefetch == 0) return;
    const bool last = u + 1 == units;
    const size_t begin = static_cast<size_t>(u) * kUnitBytes;
    const size_t end = last ? row_bytes + 63 : begin + kUnitBytes;
    const size_t j0 = begin / 64, j1 = end / 64;
    first = a.lane_prefetch + 64 * j0;
    final_line = a.lane_prefetch + 64 * (j1 - 1);
    lines = j1 - j0;
    spread = !last;
  }
  // Row r's lines (a unit other than the last).
  [[gnu::always_inline]] void row(const uint8_t* p) const {
    static_for<kLines>([&](auto j) __attribute__((always_inline)) {
      _mm_prefetch(reinterpret_cast<const char*>(p + first + 64 * j), _MM_HINT_T1);
    });
    _mm_prefetch(reinterpret_cast<const char*>(p + final_line), _MM_HINT_T1);
  }
  // Every row's lines (the last unit).
  template <class R>
  void all(const R& rows) const {
    for (int r = 0; r < R::kRows; ++r) prefetch_to_l2(rows.row(r) + first, 64 * lines);
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
