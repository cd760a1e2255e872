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

namespace {

// C's m x n entries set to 0 (the entries between rows, past n, untouched).
void zero(int64_t m, int64_t n, float* c, size_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] = 0.0f;
}

}  // namespace

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
  zero(m, n, c, ldc);
  gemm_f32_acc(m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc) {
  // B's rows converted a block of columns at a time; the chains still run
  // over k in order for every C element.
  constexpr int64_t kCols = 256;
  float row[kCols];
  for (int64_t j0 = 0; j0 < n; j0 += kCols) {
    const int64_t w = n - j0 < kCols ? n - j0 : kCols;
    for (int64_t kk = 0; kk < k; ++kk) {
      fp16_to_fp32_row(b + static_cast<size_t>(kk) * ldb + static_cast<size_t>(j0), w, row);
      for (int64_t i = 0; i < m; ++i) {
        const float aik = a[static_cast<size_t>(i) * lda + static_cast<size_t>(kk)];
        float* ci = c + static_cast<size_t>(i) * ldc + static_cast<size_t>(j0);
        for (int64_t j = 0; j < w; ++j) ci[j] = std::fma(aik, row[j], ci[j]);
      }
    }
  }
}

void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc) {
  zero(m, n, c, ldc);
  gemm_f32_f16b_acc(m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] *= scale;
  gemm_f32_acc(m, n, k, a, lda, b, ldb, c, ldc);
  // |C| compared as sign-cleared bit patterns, as abs_range does (a NaN
  // ranks above infinity).
  uint32_t lo = 0x7fffffffu, hi = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint32_t v;
      std::memcpy(&v, c + static_cast<size_t>(i) * ldc + static_cast<size_t>(j), 4);
      v &= 0x7fffffffu;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  std::memcpy(abs_min, &lo, 4);
  std::memcpy(abs_max, &hi, 4);
}

}  // namespace kazeia::kernels::ref
