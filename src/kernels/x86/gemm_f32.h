// C += A * B on float matrices (ref::gemm_f32_acc), C = A * B
// (ref::gemm_f32: the same chains started from 0), and C = s * C + A * B
// with the range of |C| (ref::gemm_f32_scaled_acc: the chains started from
// the rounded s * C, the range taken from the registers as they are
// stored, where a separate pass would read C again); each also with B in
// IEEE half (BT = uint16_t: ref::gemm_f32_f16b(_acc), B converted exactly
// as it is loaded): register tiles of kMR
// rows x kNV 16-float vectors of C, one broadcast of A and kNV loads of B
// per k. Every C element is the same chain of fused multiply-adds over
// k = 0, 1, ... as the reference, so the results are bit-identical to it
// whatever the tiling. Included only from per-ISA files.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/x86/strip_runner.h"

namespace kazeia::kernels::x86 {
namespace {

// What a tile does with C before the products, and after.
enum class GemmMode { kZero, kAcc, kScaledAcc };

template <class Isa>
struct GemmF32 {
  using V16 = typename Isa::V16;
  // Accumulators: 6 x 4 zmm of 32 with AVX-512; 6 x 1 ymm pairs of 16 with
  // AVX2 (12 chains, 2 ymm of B and a broadcast: 15 registers). AVX2 had
  // 2 x 2 (8 chains, 4 ymm of B): 128 x 64 x 128, one thread, Zen 2 at
  // ~3.3 GHz, 49.7 GFLOP/s against 91.4 for 6 x 1 (the FMA peak is 2 x 8
  // lanes a cycle: 107).
  static constexpr int kMR = 6;
  static constexpr int kNV = Isa::kRows == 16 ? 4 : 1;

  // min / max of |C| as sign-cleared bit patterns (ref::abs_range's order),
  // lane by lane: `range` holds 16 lanes of minima, then 16 of maxima,
  // carried across tiles and combined at the end. Lanes past n_valid are
  // left out.
  struct Range {
    V16 lo, hi;  // bit patterns in float registers
  };
  static Range load_range(const uint32_t* range) {
    return {Isa::load_f32(reinterpret_cast<const uint8_t*>(range)),
            Isa::load_f32(reinterpret_cast<const uint8_t*>(range + 16))};
  }
  static void store_range(const Range& r, uint32_t* range) {
    Isa::store_f32(reinterpret_cast<uint8_t*>(range), r.lo);
    Isa::store_f32(reinterpret_cast<uint8_t*>(range + 16), r.hi);
  }
  static void track(Range& r, V16 v, int64_t n_valid) {
    if constexpr (Isa::kRows == 16) {
      const __m512i m = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
      const __mmask16 k = static_cast<__mmask16>(n_valid >= 16 ? 0xFFFFu : (1u << n_valid) - 1u);
      r.lo = _mm512_castsi512_ps(_mm512_mask_min_epu32(_mm512_castps_si512(r.lo), k, _mm512_castps_si512(r.lo), m));
      r.hi = _mm512_castsi512_ps(_mm512_mask_max_epu32(_mm512_castps_si512(r.hi), k, _mm512_castps_si512(r.hi), m));
    } else {
      auto half = [](__m256& lo, __m256& hi, __m256 x, int64_t valid) {
        const __m256i m = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
        const __m256i live = Isa::tail_mask8(valid);
        const __m256i l = _mm256_castps_si256(lo), h = _mm256_castps_si256(hi);
        lo = _mm256_castsi256_ps(_mm256_blendv_epi8(l, _mm256_min_epu32(l, m), live));
        hi = _mm256_castsi256_ps(_mm256_blendv_epi8(h, _mm256_max_epu32(h, m), live));
      };
      half(r.lo.lo, r.hi.lo, v.lo, n_valid);
      half(r.lo.hi, r.hi.hi, v.hi, n_valid - 8);
    }
  }

  // 16 columns of B from p (n of them when n < 16), as floats.
  template <class BT>
  static V16 load_b(const BT* p, int64_t n) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(p);
    if constexpr (std::is_same_v<BT, float>) {
      return n >= 16 ? Isa::load_f32(bytes) : Isa::load_f32_tail(bytes, n);
    } else {
      static_assert(std::is_same_v<BT, uint16_t>);
      return n >= 16 ? Isa::load_f16(bytes) : Isa::load_f16_tail(bytes, n);
    }
  }

  // Products with few rows of A (decode: one query's heads against the
  // K / V panels of the cache, the delta rule's W and q rows against the
  // state) use each B vector a few times: they wait on B's rows, which
  // arrive cold from memory (the weights streamed through the caches
  // since). Up to kPrefetchUpToRows rows, a tile prefetches B's row
  // kPrefetchBytes ahead into L1, also past the product's last row: the
  // attention's K / V panels (model_state.h) are laid out so that what
  // follows a panel is the next panel or tile a decoded token reads, and a
  // prefetch cannot fault, wherever it points. Qwen3-0.6B Q4_0, Zen 2,
  // 2 threads, tg32 after 2048 tokens, with the panels: 1.064x the speed of
  // whole-tile rows read into the cache first (median of 11 interleaved
  // pairs, 51.2 against 48.1 t/s); 2 KiB ahead 0.95x and 8 KiB 0.99x of
  // 4 KiB; Qwen3.5-0.8B tg128 and every pp512 unchanged.
  // kFewRows rows (a GQA group of two) take one tile across up to
  // 16 * kNVFew columns (below).
  static constexpr int64_t kFewRows = 2;
  static constexpr int64_t kPrefetchBytes = 4096;
  static constexpr int64_t kPrefetchUpToRows = 8;

  // R rows x NV vectors; the last vector holds n_last (1..16) columns.
  template <int R, int NV, GemmMode kMode, class BT>
  [[gnu::noinline, gnu::flatten]] static void tile(int64_t k, const float* a, size_t lda, const BT* b, size_t ldb,
                                                   float* c, size_t ldc, int64_t n_last, float scale,
                                                   uint32_t* range, bool prefetch_b) {
    auto col = [](const float* p, int v) { return reinterpret_cast<const uint8_t*>(p + 16 * v); };
    V16 acc[R][NV];
    static_for<R>([&](auto r) {
      static_for<NV>([&](auto v) {
        const uint8_t* p = col(c + r * ldc, v);
        if constexpr (kMode == GemmMode::kZero) {
          acc[r][v] = Isa::zero16();
        } else {
          acc[r][v] = v + 1 < NV || n_last == 16 ? Isa::load_f32(p) : Isa::load_f32_tail(p, n_last);
          if constexpr (kMode == GemmMode::kScaledAcc) acc[r][v] = Isa::mul(acc[r][v], Isa::splat16(scale));
        }
      });
    });
    // The lines of a tile's B row (64-byte aligned or not: one more).
    constexpr int kLines = (NV * 16 * static_cast<int>(sizeof(BT)) + 63) / 64 + 1;
    const int64_t row_bytes = static_cast<int64_t>(ldb * sizeof(BT));
    const int64_t prefetch_rows = std::max<int64_t>(1, kPrefetchBytes / std::max<int64_t>(row_bytes, 1));
    for (int64_t kk = 0; kk < k; ++kk) {
      V16 bv[NV];
      const BT* brow = b + static_cast<size_t>(kk) * ldb;
      if (prefetch_b) {
        const uintptr_t ahead =
            (reinterpret_cast<uintptr_t>(brow) + static_cast<uintptr_t>(prefetch_rows) * ldb * sizeof(BT)) &
            ~uintptr_t{63};
        static_for<kLines>([&](auto l) {
          _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 * l), _MM_HINT_T0);
          asm volatile("");
        });
      }
      static_for<NV>([&](auto v) { bv[v] = load_b(brow + 16 * v, v + 1 < NV ? 16 : n_last); });
      static_for<R>([&](auto r) {
        const V16 av = Isa::splat16(a[r * lda + static_cast<size_t>(kk)]);
        static_for<NV>([&](auto v) { acc[r][v] = Isa::fmadd(av, bv[v], acc[r][v]); });
      });
    }
    static_for<R>([&](auto r) {
      static_for<NV>([&](auto v) {
        auto* p = reinterpret_cast<uint8_t*>(c + r * ldc + 16 * v);
        if (v + 1 < NV || n_last == 16) Isa::store_f32(p, acc[r][v]);
        else Isa::store_f32_tail(p, acc[r][v], n_last);
      });
    });
    if constexpr (kMode == GemmMode::kScaledAcc) {
      Range rg = load_range(range);
      static_for<R>([&](auto r) {
        static_for<NV>([&](auto v) { track(rg, acc[r][v], v + 1 < NV ? 16 : n_last); });
      });
      store_range(rg, range);
    }
  }

  template <class BT>
  using TileFn = void (*)(int64_t, const float*, size_t, const BT*, size_t, float*, size_t, int64_t, float,
                          uint32_t*, bool);
  template <GemmMode kMode, class BT, int R, int... NVs>
  static constexpr void fill_row(TileFn<BT>* out, std::integer_sequence<int, NVs...>) {
    ((out[NVs] = &tile<R, NVs + 1, kMode, BT>), ...);
  }
  template <GemmMode kMode, class BT, int W, int... Rs>
  static constexpr void fill(TileFn<BT> (*out)[W], std::integer_sequence<int, Rs...>) {
    (fill_row<kMode, BT, Rs + 1>(out[Rs], std::make_integer_sequence<int, W>{}), ...);
  }

  // Few-row products walk B once, a whole row of up to 16 * kNVFew columns
  // per k (2 x 8 accumulators with AVX-512): with kNV's 64 columns, a
  // 128-wide B (the delta rule's state, a V tile) was read in two passes,
  // each taking half of every row - two strided streams where one
  // sequential one will do. Same chains per element: same bits. Decode,
  // per-token interleaved A/B (Zen 4, 2 threads), two passes against one:
  // 1.003-1.006x the token time (Qwen3-0.6B and Qwen3.5-0.8B Q4_0).
  // AVX2: 32 columns (8 chains for two rows).
  static constexpr int kNVFew = Isa::kRows == 16 ? 8 : 2;

  template <GemmMode kMode, class BT = float>
  static void run(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const BT* b, size_t ldb, float* c,
                  size_t ldc, float scale, uint32_t* range) {
    static const auto tiles = [] {
      struct Table { TileFn<BT> f[kMR][kNV]; } t{};
      fill<kMode, BT, kNV>(t.f, std::make_integer_sequence<int, kMR>{});
      return t;
    }();
    static const auto few = [] {
      struct Table { TileFn<BT> f[kFewRows][kNVFew]; } t{};
      fill<kMode, BT, kNVFew>(t.f, std::make_integer_sequence<int, kFewRows>{});
      return t;
    }();
    if (m <= 0) return;  // (the few-row table is indexed by m - 1)
    // Few rows take one tile across up to 16 * kNVFew columns, and prefetch B.
    const bool few_rows = m <= kFewRows;
    const int64_t step = few_rows ? 16 * kNVFew : 16 * kNV;
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t width = n - n0 < step ? n - n0 : step;
      const int64_t nv = (width + 15) / 16;
      const int64_t n_last = width - 16 * (nv - 1);
      if (few_rows) {
        few.f[m - 1][nv - 1](k, a, lda, b + n0, ldb, c + n0, ldc, n_last, scale, range, true);
        continue;
      }
      for (int64_t m0 = 0; m0 < m; m0 += kMR) {
        const int64_t mr = m - m0 < kMR ? m - m0 : kMR;
        tiles.f[mr - 1][nv - 1](k, a + static_cast<size_t>(m0) * lda, lda, b + n0, ldb,
                                c + static_cast<size_t>(m0) * ldc + n0, ldc, n_last, scale, range,
                                m <= kPrefetchUpToRows);
      }
    }
  }

  // kAcc: C += A * B, else C = A * B; BT float: gemm_f32(_acc), BT
  // uint16_t (half): gemm_f32_f16b(_acc).
  template <bool kAcc, class BT = float>
  static void gemm(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const BT* b, size_t ldb, float* c,
                   size_t ldc) {
    run<kAcc ? GemmMode::kAcc : GemmMode::kZero, BT>(m, n, k, a, lda, b, ldb, c, ldc, 1.0f, nullptr);
  }
  // ref::gemm_f32_scaled_acc.
  static void scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max) {
    alignas(64) uint32_t range[32];
    for (int i = 0; i < 16; ++i) range[i] = 0x7fffffffu, range[16 + i] = 0u;
    run<GemmMode::kScaledAcc>(m, n, k, a, lda, b, ldb, c, ldc, scale, range);
    uint32_t lo = range[0], hi = range[16];
    for (int i = 1; i < 16; ++i) lo = std::min(lo, range[i]), hi = std::max(hi, range[16 + i]);
    std::memcpy(abs_min, &lo, sizeof(float));
    std::memcpy(abs_max, &hi, sizeof(float));
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
