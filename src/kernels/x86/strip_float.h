// F32, F16 and BF16 weights: dots of float rows, bit-identical to the
// reference (ref::vec_dot_f32 / _f16 / _bf16).
//
// The reference sums element i into lane i % 16 and combines the 16 lanes
// pairwise at the end (LaneSum); a 16-float vector (one zmm, or two ymm)
// per (row, token) does exactly that. F32 multiplies and adds separately
// (the reference rounds each product); for F16 / BF16 the product of two
// values is exact in float, so a fused multiply-add gives the same bits.
// The last n % 16 elements are added with a lane mask, leaving the other
// lanes untouched as the reference does.
//
// Tiles of kR rows x kC tokens share each loaded vector across the tile
// (decode: kC = 1). Included only from per-ISA files.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/strip_runner.h"

namespace kazeia::kernels::x86 {
namespace {

enum class FloatKind { kF32, kF16, kBF16 };

template <class Isa, FloatKind K>
struct FloatStrip {
  using V16 = typename Isa::V16;
  static constexpr size_t kElem = K == FloatKind::kF32 ? 4 : 2;  // bytes per value
  // kR x kC accumulators of 16 lanes: 16 zmm with AVX-512, 8 ymm pairs
  // would be all 16 ymm with AVX2, so 2 x 2 there.
  static constexpr int kR = Isa::kRows == 16 ? 4 : 2;
  static constexpr int kC = Isa::kRows == 16 ? 4 : 2;

  [[gnu::always_inline]] static V16 load(const uint8_t* p) {
    if constexpr (K == FloatKind::kF32) return Isa::load_f32(p);
    else if constexpr (K == FloatKind::kF16) return Isa::load_f16(p);
    else return Isa::load_bf16(p);
  }
  [[gnu::always_inline]] static V16 load_tail(const uint8_t* p, int64_t n) {
    if constexpr (K == FloatKind::kF32) return Isa::load_f32_tail(p, n);
    else if constexpr (K == FloatKind::kF16) return Isa::load_f16_tail(p, n);
    else return Isa::load_bf16_tail(p, n);
  }
  [[gnu::always_inline]] static V16 madd(V16 w, V16 x, V16 acc) {
    if constexpr (K == FloatKind::kF32) return Isa::add(acc, Isa::mul(w, x));  // rounded product
    else return Isa::fmadd(w, x, acc);  // exact product: same bits
  }

  // out[r * kC + c] = w[r] . x[c] for R <= kR rows and C <= kC tokens.
  template <int R, int C>
  [[gnu::noinline, gnu::flatten]] static void tile(int64_t n, const uint8_t* const* w, const uint8_t* const* x,
                                                   float* out) {
    V16 acc[R][C];
    static_for<R>([&](auto r) __attribute__((always_inline)) { static_for<C>([&](auto c) __attribute__((always_inline)) { acc[r][c] = Isa::zero16(); }); });
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      V16 xv[C];
      static_for<C>([&](auto c) __attribute__((always_inline)) { xv[c] = load(x[c] + i * kElem); });
      static_for<R>([&](auto r) __attribute__((always_inline)) {
        const V16 wv = load(w[r] + i * kElem);
        static_for<C>([&](auto c) __attribute__((always_inline)) { acc[r][c] = madd(wv, xv[c], acc[r][c]); });
      });
    }
    if (i < n) {
      const int64_t rest = n - i;
      V16 xv[C];
      static_for<C>([&](auto c) __attribute__((always_inline)) { xv[c] = load_tail(x[c] + i * kElem, rest); });
      static_for<R>([&](auto r) __attribute__((always_inline)) {
        const V16 wv = load_tail(w[r] + i * kElem, rest);
        static_for<C>([&](auto c) __attribute__((always_inline)) { acc[r][c] = Isa::add_tail(acc[r][c], Isa::mul(wv, xv[c]), rest); });
      });
    }
    static_for<R>([&](auto r) __attribute__((always_inline)) { static_for<C>([&](auto c) __attribute__((always_inline)) { out[r * C + c] = Isa::pairwise_sum(acc[r][c]); }); });
  }

  static void strip(const StripArgs& a) {
    const int64_t n_tok = a.x.n_tokens;
    for (int64_t r0 = 0; r0 < a.n_rows; r0 += kR) {
      const uint8_t* w[kR];
      for (int r = 0; r < kR; ++r) {
        const int64_t rr = r0 + r < a.n_rows ? r0 + r : a.n_rows - 1;  // repeat the last row
        w[r] = a.w + static_cast<size_t>(rr) * a.w_stride;
      }
      for (int64_t t0 = 0; t0 < n_tok; t0 += kC) {
        const uint8_t* x[kC];
        for (int c = 0; c < kC; ++c) {
          const int64_t t = t0 + c < n_tok ? t0 + c : n_tok - 1;
          x[c] = a.x.q + static_cast<size_t>(t) * a.x.q_stride;
        }
        float out[kR * kC];
        if (n_tok - t0 >= kC) {
          tile<kR, kC>(a.n_in, w, x, out);
        } else {
          // Decode and the last tokens: one at a time.
          for (int64_t t = t0; t < n_tok; ++t) {
            const uint8_t* xt[1] = {a.x.q + static_cast<size_t>(t) * a.x.q_stride};
            float o[kR];
            tile<kR, 1>(a.n_in, w, xt, o);
            for (int r = 0; r < kR && r0 + r < a.n_rows; ++r) a.y[static_cast<size_t>(t) * a.ldy + static_cast<size_t>(r0 + r)] = o[r];
          }
          continue;
        }
        for (int r = 0; r < kR && r0 + r < a.n_rows; ++r) {
          for (int c = 0; c < kC; ++c) {
            a.y[static_cast<size_t>(t0 + c) * a.ldy + static_cast<size_t>(r0 + r)] = out[r * kC + c];
          }
        }
      }
    }
  }

  static float dot(int64_t n, const uint8_t* w_row, const void* x_row) {
    const uint8_t* w[1] = {w_row};
    const uint8_t* x[1] = {static_cast<const uint8_t*>(x_row)};
    float out[1];
    tile<1, 1>(n, w, x, out);
    return out[0];
  }
};

template <class Isa, FloatKind K>
void set_float(KernelTable& table, TensorType type, const char* isa) {
  using S = FloatStrip<Isa, K>;
  WeightKernels& k = table.weights[static_cast<int>(type)];
  k.dot = &S::dot;
  k.strip = &S::strip;
  k.strip_rows = 16;
  k.aux_bytes = nullptr;
  k.aux = nullptr;
  k.scratch_bytes = nullptr;
  k.isa = isa;
}

template <class Isa>
void fill_float(KernelTable& table, const char* isa) {
  set_float<Isa, FloatKind::kF32>(table, TensorType::F32, isa);
  set_float<Isa, FloatKind::kF16>(table, TensorType::F16, isa);
  set_float<Isa, FloatKind::kBF16>(table, TensorType::BF16, isa);
}

}  // namespace
}  // namespace kazeia::kernels::x86
