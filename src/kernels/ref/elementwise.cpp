// Elementwise ops: the scalar formulas of ggml's unary sigmoid / softplus
// ops with libm's expf. silu and swiglu (ref/softmax_online.cpp) use the
// kernels' exp_approx instead, as ggml's SIMD builds use their own
// polynomial (ggml_v_expf): about an ulp from expf either way, and
// vectorisable with the same bits.
#include <cmath>

#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "kernels/transpose.h"
#include "tensor/quant.h"

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
  if (n > 0) active_kernels().scale(x, s, n, out);
}

void scale_add(const float* x, float s, const float* y, int64_t n, float* out) {
  if (n > 0) active_kernels().scale_add(x, s, y, n, out);
}

void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst) {
  if (rows > 0 && cols > 0) active_kernels().transpose_f32(src, ld_src, rows, cols, dst, ld_dst);
}

namespace ref {

void scale(const float* x, float s, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s;
}

void scale_mul(const float* x, float s, const float* w, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] * s) * w[i];
}

void scale_add(const float* x, float s, const float* y, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s + y[i];
}

void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst) {
  transpose_blocked(src, ld_src, rows, cols, dst, ld_dst);
}

void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp16_to_fp32(x[i]);
}

void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp16(x[i]);
}

uint64_t read_stream(const uint8_t* p, size_t bytes) {
  // Four independent sums, so the loop is bound by loads, not adds.
  uint64_t a[4] = {0, 0, 0, 0};
  const size_t words = bytes / 8;
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    for (int j = 0; j < 4; ++j) {
      uint64_t w;
      std::memcpy(&w, p + 8 * (i + static_cast<size_t>(j)), 8);
      a[j] += w;
    }
  }
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    a[0] += w;
  }
  return a[0] + a[1] + a[2] + a[3];
}

void abs_range(const float* x, int64_t n, float* min, float* max) {
  // 8 lanes of integer min / max (vectorisable, unlike float ones).
  int32_t lo[8], hi[8];
  for (int l = 0; l < 8; ++l) lo[l] = 0x7fffffff, hi[l] = 0;
  auto bits = [](const float* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v & 0x7fffffff;
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const int32_t v = bits(x + i + l);
      lo[l] = v < lo[l] ? v : lo[l];
      hi[l] = v > hi[l] ? v : hi[l];
    }
  for (; i < n; ++i) {
    const int32_t v = bits(x + i);
    lo[0] = v < lo[0] ? v : lo[0];
    hi[0] = v > hi[0] ? v : hi[0];
  }
  int32_t mn = 0x7fffffff, mx = 0;
  for (int l = 0; l < 8; ++l) mn = lo[l] < mn ? lo[l] : mn, mx = hi[l] > mx ? hi[l] : mx;
  std::memcpy(min, &mn, sizeof mn);
  std::memcpy(max, &mx, sizeof mx);
}

}  // namespace ref

}  // namespace kazeia::kernels
