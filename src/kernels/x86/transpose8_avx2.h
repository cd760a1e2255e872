// An 8 x 8 float transpose in AVX registers (transpose_f32 and the AVX2
// token tiles' output). Included only from files compiled with AVX2.
#pragma once

#include <immintrin.h>

#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

// In: lane j of r[i] is M[i][j]. Out: lane i of r[j] is M[i][j].
[[gnu::always_inline]] inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  static_for<4>([&](auto i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  });
  static_for<2>([&](auto i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  });
  static_for<4>([&](auto i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  });
}

}  // namespace
}  // namespace kazeia::kernels::x86
