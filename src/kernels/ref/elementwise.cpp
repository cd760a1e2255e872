// Elementwise ops: the scalar formulas of ggml's unary sigmoid / softplus
// ops with libm's expf. silu and swiglu (ref/softmax_online.cpp) use the
// kernels' exp_approx instead, as ggml's SIMD builds use their own
// polynomial (ggml_v_expf): about an ulp from expf either way, and
// vectorisable with the same bits.
#include <cmath>

#include "kernels/kernels.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::kernels {
namespace {

}  // namespace

void sigmoid(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void softplus(const float* x, int64_t n, float* out) {
  // Above 20, log(1 + e^x) equals x to float precision (and e^x would
  // overflow far above): ggml returns x as is.
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] > 20.0f ? x[i] : std::log(1.0f + std::exp(x[i]));
}

void add(const float* a, const float* b, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void mul(const float* a, const float* b, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

void scale(const float* x, float s, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s;
}

}  // namespace kazeia::kernels
