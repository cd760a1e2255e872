#include "models/blocks/gated_delta_net.h"

#include <cmath>
#include <vector>

namespace kazeia {

using namespace kernels;

Status gated_delta_net_forward(const ModelConfig& c, const DeltaNetWeights& w, RecurrentLayer& state,
                               const float* x, int64_t n_tokens, float* out, ThreadPool* pool) {
  const int64_t nk = c.ssm_n_k_heads, nv = c.ssm_n_v_heads, d = c.ssm_head_dim;
  const int64_t kernel = c.ssm_conv_kernel;
  const int64_t channels = 2 * nk * d + nv * d;
  const int64_t inner = nv * d;
  std::vector<float> qkv(static_cast<size_t>(n_tokens * channels)), z(static_cast<size_t>(n_tokens * inner));
  std::vector<float> beta(static_cast<size_t>(n_tokens * nv)), alpha(static_cast<size_t>(n_tokens * nv));
  KZ_RETURN_IF_ERROR(matmul(w.qkv, x, n_tokens, qkv.data(), pool));
  KZ_RETURN_IF_ERROR(matmul(w.gate, x, n_tokens, z.data(), pool));
  KZ_RETURN_IF_ERROR(matmul(w.beta, x, n_tokens, beta.data(), pool));
  KZ_RETURN_IF_ERROR(matmul(w.alpha, x, n_tokens, alpha.data(), pool));
  // beta = sigmoid(.), g = a * softplus(. + dt_bias): per token and value head.
  sigmoid(beta.data(), n_tokens * nv, beta.data());
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* g = alpha.data() + t * nv;
    add(g, w.dt_bias, nv, g);
    softplus(g, nv, g);
    mul(g, w.a, nv, g);
  }

  std::vector<float> conv_out(static_cast<size_t>(channels)), delta(static_cast<size_t>(d));
  std::vector<float> o(static_cast<size_t>(n_tokens * inner));
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* in = qkv.data() + t * channels;
    // Causal conv: taps 0..K-2 read the window (oldest first), tap K-1 this token.
    for (int64_t ch = 0; ch < channels; ++ch) {
      const float* taps = w.conv + ch * kernel;
      float s = 0.0f;
      for (int64_t k = 0; k < kernel - 1; ++k) s += taps[k] * state.conv[static_cast<size_t>(k * channels + ch)];
      s += taps[kernel - 1] * in[ch];
      conv_out[static_cast<size_t>(ch)] = s;
    }
    silu(conv_out.data(), channels, conv_out.data());
    // Slide the window by one input.
    for (int64_t k = 0; k + 1 < kernel - 1; ++k)
      std::copy(state.conv.begin() + (k + 1) * channels, state.conv.begin() + (k + 2) * channels,
                state.conv.begin() + k * channels);
    if (kernel > 1) std::copy(in, in + channels, state.conv.begin() + (kernel - 2) * channels);

    float* q = conv_out.data();
    float* k = q + nk * d;
    const float* v = k + nk * d;
    for (int64_t h = 0; h < nk; ++h) {
      l2_norm(q + h * d, d, c.rms_eps, q + h * d);
      l2_norm(k + h * d, d, c.rms_eps, k + h * d);
    }
    for (int64_t h = 0; h < nv; ++h) {
      const int64_t hk = h % nk;
      const float* qh = q + hk * d;
      const float* kh = k + hk * d;
      const float* vh = v + h * d;
      const float b = beta[static_cast<size_t>(t * nv + h)];
      const float decay = std::exp(alpha[static_cast<size_t>(t * nv + h)]);
      float* s = state.s.data() + h * d * d;  // s[i * d + j]: i over keys, j over values
      for (int64_t i = 0; i < d * d; ++i) s[i] *= decay;
      std::fill(delta.begin(), delta.end(), 0.0f);
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) delta[static_cast<size_t>(j)] += s[i * d + j] * kh[i];
      for (int64_t j = 0; j < d; ++j) delta[static_cast<size_t>(j)] = b * (vh[j] - delta[static_cast<size_t>(j)]);
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) s[i * d + j] += kh[i] * delta[static_cast<size_t>(j)];
      float* oh = o.data() + t * inner + h * d;
      for (int64_t j = 0; j < d; ++j) oh[j] = 0.0f;
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) oh[j] += s[i * d + j] * qh[i];
      for (int64_t j = 0; j < d; ++j) oh[j] *= q_scale;
      // Gated RMSNorm: rms(o) * ssm_norm * silu(z).
      rms_norm(oh, w.norm, d, c.rms_eps, oh);
    }
    // Output gate: o *= silu(z) over all value heads of this token.
    float* zt = z.data() + t * inner;
    silu(zt, inner, zt);
    mul(o.data() + t * inner, zt, inner, o.data() + t * inner);
  }
  return matmul(w.out, o.data(), n_tokens, out, pool);
}

}  // namespace kazeia
