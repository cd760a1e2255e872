// One row of a tiled attention's online softmax (ref::softmax_online_row),
// silu / swiglu, and the exp they use. The exp is a fixed sequence of float operations
// (no fused multiply-adds, round-to-nearest by the 1.5 * 2^23 trick), so a
// SIMD variant that performs the same operations lane by lane gives the
// same bits; the sum of the weights is kept in 16 lanes (element j in lane
// j % 16) combined pairwise at the end, as the float dots do.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels::ref {

float exp_approx(float x) {
  // exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 (ln 2 in two
  // parts, so r is nearly exact), exp(r) by its degree-6 Taylor polynomial
  // on |r| <= ln 2 / 2 (error < 2e-7 relative).
  if (!(x > -87.0f)) return 0.0f;  // also -inf and NaN: a masked position
  if (x > 88.0f) x = 88.0f;
  const float t = x * 1.44269504f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

void silu_approx(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] / (1.0f + exp_approx(0.0f - x[i]));
}

void swiglu_approx(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + exp_approx(0.0f - gate[i])) * up[i];
}

void sigmoid_mul_approx(const float* gate, const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] / (1.0f + exp_approx(0.0f - gate[i]));
}

void swiglu_rows(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                 size_t ld_out, bool) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const size_t i = static_cast<size_t>(r) * ld_in;
    swiglu_approx(gate + i, up + i, width, out + static_cast<size_t>(r) * ld_out);
  }
}

void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out) {
  for (int64_t c = 0; c < n; ++c) {
    float acc = 0.0f;
    for (int64_t k = 0; k < n_taps; ++k) acc += taps[static_cast<size_t>(k) * taps_stride + static_cast<size_t>(c)] * rows[k][c];
    out[c] = acc;
  }
  silu_approx(out, n, out);
}

float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p) {
  float m_new = *m;
  for (int64_t j = 0; j < valid; ++j) {
    p[j] = s[j] * scale;
    m_new = std::fmax(m_new, p[j]);
  }
  float lanes[16] = {};
  for (int64_t j = 0; j < valid; ++j) {
    p[j] = exp_approx(p[j] - m_new);
    lanes[j % 16] += p[j];
  }
  for (int64_t j = valid; j < n; ++j) p[j] = 0.0f;
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  *alpha = exp_approx(*m - m_new);
  *m = m_new;
  return lanes[0];
}

}  // namespace kazeia::kernels::ref
