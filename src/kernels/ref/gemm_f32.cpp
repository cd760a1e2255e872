// The reference float matrix product the attention tiles use: every C
// element is one chain of fused multiply-adds over k in increasing order,
// started from C's value. SIMD variants (x86/gemm_f32.h) vectorise across
// columns of C and reproduce the chain exactly, so they are bit-identical;
// std::fma rounds once, as the hardware instruction does.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels::ref {

void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                  float* c, size_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + static_cast<size_t>(i) * ldc;
    const float* ai = a + static_cast<size_t>(i) * lda;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = ai[kk];
      const float* bk = b + static_cast<size_t>(kk) * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] = std::fma(aik, bk[j], ci[j]);
    }
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] = 0.0f;
  gemm_f32_acc(m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] *= scale;
  gemm_f32_acc(m, n, k, a, lda, b, ldb, c, ldc);
  uint32_t lo_bits = 0x7fffffffu;  // abs_range's starting point
  float lo, hi = 0.0f;
  std::memcpy(&lo, &lo_bits, 4);
  for (int64_t i = 0; i < m; ++i) {
    float row_lo, row_hi;
    abs_range(c + static_cast<size_t>(i) * ldc, n, &row_lo, &row_hi);
    // As bit patterns (a NaN ranks above infinity), like abs_range itself.
    uint32_t l, h, rl, rh;
    std::memcpy(&l, &lo, 4), std::memcpy(&h, &hi, 4), std::memcpy(&rl, &row_lo, 4), std::memcpy(&rh, &row_hi, 4);
    l = rl < l ? rl : l;
    h = rh > h ? rh : h;
    std::memcpy(&lo, &l, 4), std::memcpy(&hi, &h, 4);
  }
  *abs_min = lo;
  *abs_max = hi;
}

}  // namespace kazeia::kernels::ref
