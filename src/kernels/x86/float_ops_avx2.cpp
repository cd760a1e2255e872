// AVX2-level float ops (F16C): half <-> float rows with VCVTPH2PS /
// VCVTPS2PH (imm 0: round to nearest even), bit-identical to
// ref::fp16_to_fp32_row / fp32_to_fp16_row. Tails go through the reference.
#include <immintrin.h>

#include <cstdint>

#include "kernels/ref/vec_dot.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

void fp16_to_fp32_row_avx2(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  ref::fp16_to_fp32_row(x + i, n - i, out + i);
}

void fp32_to_fp16_row_avx2(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  ref::fp32_to_fp16_row(x + i, n - i, out + i);
}

}  // namespace

void fill_avx2_float_ops(KernelTable& table) {
  table.fp16_to_fp32_row = &fp16_to_fp32_row_avx2;
  table.fp32_to_fp16_row = &fp32_to_fp16_row_avx2;
}

}  // namespace kazeia::kernels::x86
