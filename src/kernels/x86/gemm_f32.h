// C += A * B on float matrices (ref::gemm_f32_acc), and C = A * B
// (ref::gemm_f32: the same chains started from 0): register tiles of kMR
// rows x kNV 16-float vectors of C, one broadcast of A and kNV loads of B
// per k. Every C element is the same chain of fused multiply-adds over
// k = 0, 1, ... as the reference, so the results are bit-identical to it
// whatever the tiling. Included only from per-ISA files.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/strip_runner.h"

namespace kazeia::kernels::x86 {
namespace {

template <class Isa>
struct GemmF32 {
  using V16 = typename Isa::V16;
  // Accumulators: 6 x 4 zmm of 32 with AVX-512; 2 x 2 ymm pairs of 16 with AVX2.
  static constexpr int kMR = Isa::kRows == 16 ? 6 : 2;
  static constexpr int kNV = Isa::kRows == 16 ? 4 : 2;

  // R rows x NV vectors; the last vector holds n_last (1..16) columns.
  template <int R, int NV, bool kAcc>
  [[gnu::noinline, gnu::flatten]] static void tile(int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                                                   float* c, size_t ldc, int64_t n_last) {
    auto col = [](const float* p, int v) { return reinterpret_cast<const uint8_t*>(p + 16 * v); };
    V16 acc[R][NV];
    static_for<R>([&](auto r) {
      static_for<NV>([&](auto v) {
        const uint8_t* p = col(c + r * ldc, v);
        if constexpr (kAcc) {
          acc[r][v] = v + 1 < NV || n_last == 16 ? Isa::load_f32(p) : Isa::load_f32_tail(p, n_last);
        } else {
          acc[r][v] = Isa::zero16();
        }
      });
    });
    for (int64_t kk = 0; kk < k; ++kk) {
      V16 bv[NV];
      const float* brow = b + static_cast<size_t>(kk) * ldb;
      static_for<NV>([&](auto v) {
        bv[v] = v + 1 < NV || n_last == 16 ? Isa::load_f32(col(brow, v)) : Isa::load_f32_tail(col(brow, v), n_last);
      });
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
  }

  using TileFn = void (*)(int64_t, const float*, size_t, const float*, size_t, float*, size_t, int64_t);
  template <bool kAcc, int R, int... NVs>
  static constexpr void fill_row(TileFn* out, std::integer_sequence<int, NVs...>) {
    ((out[NVs] = &tile<R, NVs + 1, kAcc>), ...);
  }
  template <bool kAcc, int... Rs>
  static constexpr void fill(TileFn (*out)[kNV], std::integer_sequence<int, Rs...>) {
    (fill_row<kAcc, Rs + 1>(out[Rs], std::make_integer_sequence<int, kNV>{}), ...);
  }

  // kAcc: C += A * B (gemm_f32_acc), else C = A * B (gemm_f32).
  template <bool kAcc>
  static void gemm(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                  float* c, size_t ldc) {
    static const auto tiles = [] {
      struct Table { TileFn f[kMR][kNV]; } t{};
      fill<kAcc>(t.f, std::make_integer_sequence<int, kMR>{});
      return t;
    }();
    for (int64_t n0 = 0; n0 < n; n0 += 16 * kNV) {
      const int64_t width = n - n0 < 16 * kNV ? n - n0 : 16 * kNV;
      const int64_t nv = (width + 15) / 16;
      const int64_t n_last = width - 16 * (nv - 1);
      for (int64_t m0 = 0; m0 < m; m0 += kMR) {
        const int64_t mr = m - m0 < kMR ? m - m0 : kMR;
        tiles.f[mr - 1][nv - 1](k, a + static_cast<size_t>(m0) * lda, lda, b + n0, ldb,
                                c + static_cast<size_t>(m0) * ldc + n0, ldc, n_last);
      }
    }
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
