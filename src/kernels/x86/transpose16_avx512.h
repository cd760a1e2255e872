// A 16 x 16 float transpose in AVX-512 registers (the AMX strip's output
// and the transpose_f32 kernel). Included only from files compiled with
// AVX-512.
#pragma once

#include <immintrin.h>

#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

// In: lane j of r[i] is M[i][j]. Out: lane i of r[j] is M[i][j]. Indexed
// through static_for only, so the strip's accumulators can be passed in place.
[[gnu::always_inline]] inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  static_for<8>([&](auto i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  });
  static_for<4>([&](auto i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  });
  static_for<4>([&](auto i) {
    t[i] = _mm512_shuffle_f32x4(u[i], u[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(u[i], u[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(u[i + 8], u[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(u[i + 8], u[i + 12], 0xDD);
  });
  static_for<4>([&](auto i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
  });
}

}  // namespace
}  // namespace kazeia::kernels::x86
