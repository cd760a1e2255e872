// Normalisations, rotary embedding and softmax, matching ggml's CPU ops
// (ggml-cpu/ops.cpp): where ggml sums in `ggml_float` (double) so do we, and
// values are rounded to float at the same points.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::kernels {
namespace {

// Largest n_rot whose angles rope() keeps on the stack.
constexpr int64_t kMaxStackRot = 512;

Status check_rope(const float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const char* op) {
  if (n_heads < 0 || head_dim <= 0 || n_rot <= 0 || n_rot > head_dim || n_rot % 2 != 0) {
    return InvalidArgument(std::string(op) + ": need n_rot even and 0 < n_rot <= head_dim, got n_heads " +
                           std::to_string(n_heads) + ", head_dim " + std::to_string(head_dim) +
                           ", n_rot " + std::to_string(n_rot));
  }
  if (x == nullptr && n_heads > 0) return InvalidArgument(std::string(op) + ": null input");
  return OkStatus();
}

// Rotates the pairs (x[i * stride], x[i * stride + offset]) for i < n_rot/2:
// NEOX uses stride 1, offset n_rot/2; NORM stride 2, offset 1.
Status rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cs, const float* sn,
              bool neox, const char* op) {
  KZ_RETURN_IF_ERROR(check_rope(x, n_heads, head_dim, n_rot, op));
  if (n_heads > 0 && (cs == nullptr || sn == nullptr)) return InvalidArgument(std::string(op) + ": null angles");
  const int64_t half = n_rot / 2;
  const int64_t stride = neox ? 1 : 2;
  const int64_t offset = neox ? half : 1;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      float* p0 = v + i * stride;
      float* p1 = p0 + offset;
      const float x0 = *p0;
      const float x1 = *p1;
      *p0 = x0 * cs[i] - x1 * sn[i];
      *p1 = x0 * sn[i] + x1 * cs[i];
    }
  }
  return OkStatus();
}

Status rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
            float freq_base, bool neox, const char* op) {
  KZ_RETURN_IF_ERROR(check_rope(x, n_heads, head_dim, n_rot, op));
  const int64_t half = n_rot / 2;
  float cos_stack[kMaxStackRot / 2];
  float sin_stack[kMaxStackRot / 2];
  std::vector<float> heap;
  float* cs = cos_stack;
  float* sn = sin_stack;
  if (n_rot > kMaxStackRot) {
    heap.resize(static_cast<size_t>(n_rot));
    cs = heap.data();
    sn = heap.data() + half;
  }
  rope_angles(pos, n_rot, freq_base, cs, sn);
  return rotate(x, n_heads, head_dim, n_rot, cs, sn, neox, op);
}

}  // namespace

void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out) {
  if (n <= 0) return;
  const float mean = static_cast<float>(active_kernels().sum_squares(x, n) / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (w == nullptr) {
    active_kernels().scale(x, scale, n, out);
  } else {
    // ggml: rms_norm then mul, two roundings: (x * scale) * w.
    active_kernels().scale_mul(x, scale, w, n, out);
  }
}

void rms_norm_heads(const float* x, const float* w, int64_t n_heads, int64_t head_dim, float eps,
                    float* out) {
  for (int64_t h = 0; h < n_heads; ++h) {
    rms_norm(x + h * head_dim, w, head_dim, eps, out + h * head_dim);
  }
}

void l2_norm(const float* x, int64_t n, float eps, float* out) {
  if (n <= 0) return;
  // ggml: sqrtf(sum) with the double sum converted to float first.
  const float norm = std::sqrt(static_cast<float>(active_kernels().sum_squares(x, n)));
  const float scale = 1.0f / std::fmax(norm, eps);
  active_kernels().scale(x, scale, n, out);
}

// Angles as ggml_rope_cache_init with freq_scale 1, ext_factor 0,
// attn_factor 1 (plain RoPE): the angle is advanced by repeated float
// multiplication, not recomputed with pow.
void rope_angles(int64_t pos, int64_t n_rot, float freq_base, float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_rot));
  float theta = static_cast<float>(pos);
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    cos_out[i] = std::cos(theta);
    sin_out[i] = std::sin(theta);
    theta *= theta_scale;
  }
}

Status rope_neox_angles(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_theta,
                        const float* sin_theta) {
  return rotate(x, n_heads, head_dim, n_rot, cos_theta, sin_theta, /*neox=*/true, "rope_neox_angles");
}

Status rope_norm_angles(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_theta,
                        const float* sin_theta) {
  return rotate(x, n_heads, head_dim, n_rot, cos_theta, sin_theta, /*neox=*/false, "rope_norm_angles");
}

Status rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
                 float freq_base) {
  return rope(x, n_heads, head_dim, n_rot, pos, freq_base, /*neox=*/true, "rope_neox");
}

Status rope_norm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
                 float freq_base) {
  return rope(x, n_heads, head_dim, n_rot, pos, freq_base, /*neox=*/false, "rope_norm");
}

void softmax(const float* x, int64_t n, float* out) { softmax_ext(x, nullptr, n, 1.0f, out); }

void softmax_ext(const float* x, const float* mask, int64_t n, float scale, float* out) {
  if (n <= 0) return;
  // w = x * scale (+ mask), written to out first (out may alias x).
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
  if (mask != nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] += mask[i];
  }
  float max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = std::fmax(max, out[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(out[i] - max);
    sum += static_cast<double>(e);
    out[i] = e;
  }
  // ggml: sum = 1.0/sum in double, then ggml_vec_scale_f32 takes it as float.
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) out[i] *= inv;
}

namespace ref {

// sum of x[i]*x[i], each square rounded to float, accumulated in double as
// ggml does (`sum += (ggml_float)(x[i00] * x[i00])`), but over eight partial
// sums (element i into sum i % 8, added pairwise at the end) instead of one:
// a single chain of dependent double adds costs ~4 cycles per element, a
// visible share of prefill once per row and per q/k head. Any fixed order
// keeps chunked and one-batch evaluation identical; the result differs from
// ggml's sequential sum only in the double's last bits.
double sum_squares(const float* x, int64_t n) {
  double s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += static_cast<double>(x[i + j] * x[i + j]);
  for (int j = 0; i < n; ++i, ++j) s[j] += static_cast<double>(x[i] * x[i]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace ref

}  // namespace kazeia::kernels
