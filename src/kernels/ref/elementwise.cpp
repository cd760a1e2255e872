// Elementwise ops: the scalar formulas of ggml (ggml_silu_f32,
// ggml_vec_swiglu_f32's tail loop, the unary sigmoid / softplus ops).
// ggml's SIMD builds evaluate silu / exp with their own polynomial
// (ggml_v_expf), which differs from expf by about an ulp; the reference keeps
// libm's expf.
#include <cmath>

#include "kernels/kernels.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::kernels {
namespace {

inline float silu_one(float v) { return v / (1.0f + std::exp(-v)); }

}  // namespace

void silu(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu_one(x[i]);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu_one(gate[i]) * up[i];
}

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
