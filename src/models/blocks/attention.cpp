#include "models/blocks/attention.h"

#include <cmath>
#include <mutex>
#include <vector>

#include "base/thread_pool.h"
#include "tensor/quant.h"

namespace kazeia {

using namespace kernels;

namespace {

Status apply_rope(const ModelConfig& c, float* heads, int64_t n_heads, int64_t pos) {
  if (c.rope_pairing == RopePairing::kNeox) return rope_neox(heads, n_heads, c.head_dim_k, c.n_rot, pos, c.rope_freq_base);
  return rope_norm(heads, n_heads, c.head_dim_k, c.n_rot, pos, c.rope_freq_base);
}

}  // namespace

Status attention_forward(const ModelConfig& c, const AttentionWeights& w, KvLayer& kv, KvType kv_type,
                         int64_t kv_row, int64_t n_past, const float* x, int64_t n_tokens, float* out,
                         ThreadPool* pool) {
  const int64_t dk = c.head_dim_k, dv = c.head_dim_v;
  const int64_t n_head = c.n_head, n_kv = c.n_head_kv;
  const int64_t q_width = n_head * dk * (w.gated ? 2 : 1);
  std::vector<float> qg(static_cast<size_t>(n_tokens * q_width));
  std::vector<float> k(static_cast<size_t>(n_tokens * n_kv * dk));
  std::vector<float> v(static_cast<size_t>(n_tokens * n_kv * dv));
  KZ_RETURN_IF_ERROR(matmul(w.wq, x, n_tokens, qg.data(), pool));
  KZ_RETURN_IF_ERROR(matmul(w.wk, x, n_tokens, k.data(), pool));
  KZ_RETURN_IF_ERROR(matmul(w.wv, x, n_tokens, v.data(), pool));

  // Per-head norm and rotary on q and k; K/V rows go to the cache.
  std::vector<float> q(static_cast<size_t>(n_tokens * n_head * dk));
  std::vector<float> gate(w.gated ? static_cast<size_t>(n_tokens * n_head * dk) : 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t pos = n_past + t;
    for (int64_t h = 0; h < n_head; ++h) {
      const float* src = qg.data() + t * q_width + h * dk * (w.gated ? 2 : 1);
      float* dst = q.data() + (t * n_head + h) * dk;
      if (w.q_norm)
        rms_norm(src, w.q_norm, dk, c.rms_eps, dst);
      else
        std::copy(src, src + dk, dst);
      if (w.gated) std::copy(src + dk, src + 2 * dk, gate.data() + (t * n_head + h) * dk);
    }
    KZ_RETURN_IF_ERROR(apply_rope(c, q.data() + t * n_head * dk, n_head, pos));
    float* kt = k.data() + t * n_kv * dk;
    if (w.k_norm) rms_norm_heads(kt, w.k_norm, n_kv, dk, c.rms_eps, kt);
    KZ_RETURN_IF_ERROR(apply_rope(c, kt, n_kv, pos));
    const size_t row = static_cast<size_t>(pos * kv_row);
    if (kv_type == KvType::kF32) {
      std::copy(k.data() + t * n_kv * dk, k.data() + (t + 1) * n_kv * dk, kv.k.get() + row);
      std::copy(v.data() + t * n_kv * dv, v.data() + (t + 1) * n_kv * dv, kv.v.get() + row);
    } else {
      for (int64_t i = 0; i < n_kv * dk; ++i) kv.k16[row + static_cast<size_t>(i)] = fp32_to_fp16(k[static_cast<size_t>(t * n_kv * dk + i)]);
      for (int64_t i = 0; i < n_kv * dv; ++i) kv.v16[row + static_cast<size_t>(i)] = fp32_to_fp16(v[static_cast<size_t>(t * n_kv * dv + i)]);
    }
  }

  // Scores, softmax and the weighted sum of V, one (token, head) pair per
  // task. Cost is linear in the context per token: no quadratic surprise.
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const int64_t group = n_head / n_kv;
  std::vector<float> attn(static_cast<size_t>(n_tokens * n_head * dv));
  // q.k for every cached position: the cached K rows of head g seen as a
  // [dk, n_ctx] matrix (row stride kv_row), multiplied by the matmul kernels
  // (SIMD; an F16 cache converts q to F16 first, as ggml does). A scalar
  // float loop here would be a serial dependency chain, 10x slower.
  const bool f16 = kv_type == KvType::kF16;
  const size_t elem = f16 ? sizeof(uint16_t) : sizeof(float);
  const auto* k_base = f16 ? reinterpret_cast<const uint8_t*>(kv.k16.get()) : reinterpret_cast<const uint8_t*>(kv.k.get());
  Status pair_status;  // first failure of any task (none expected: shapes were checked)
  std::mutex status_mu;
  auto one_pair = [&](int64_t begin, int64_t end, int) {
    std::vector<float> scores(static_cast<size_t>(n_past + n_tokens));
    std::vector<float> vbuf(static_cast<size_t>(dv));
    for (int64_t job = begin; job < end; ++job) {
      const int64_t t = job / n_head, h = job % n_head, g = h / group;
      const int64_t n_ctx = n_past + t + 1;
      const float* qh = q.data() + (t * n_head + h) * dk;
      const MatrixView keys{f16 ? TensorType::F16 : TensorType::F32, k_base + static_cast<size_t>(g * dk) * elem, dk,
                            n_ctx, static_cast<size_t>(kv_row) * elem};
      if (Status st = matmul(keys, qh, 1, scores.data(), nullptr); !st.ok()) {
        std::lock_guard<std::mutex> lock(status_mu);
        if (pair_status.ok()) pair_status = st;
        return;
      }
      for (int64_t j = 0; j < n_ctx; ++j) scores[static_cast<size_t>(j)] *= scale;
      softmax(scores.data(), n_ctx, scores.data());
      float* o = attn.data() + (t * n_head + h) * dv;
      std::fill(o, o + dv, 0.0f);
      int64_t j = 0;
      if (!f16) {
        // Four positions per pass over o: the same additions in the same
        // order as one at a time, with a quarter of the loads/stores of o.
        const float* v_base = kv.v.get() + g * dv;
        for (; j + 4 <= n_ctx; j += 4) {
          const float* v0 = v_base + j * kv_row;
          const float* v1 = v0 + kv_row;
          const float* v2 = v1 + kv_row;
          const float* v3 = v2 + kv_row;
          const float* p = scores.data() + j;
          for (int64_t i = 0; i < dv; ++i) o[i] = (((o[i] + p[0] * v0[i]) + p[1] * v1[i]) + p[2] * v2[i]) + p[3] * v3[i];
        }
      }
      for (; j < n_ctx; ++j) {
        const size_t off = static_cast<size_t>(j * kv_row + g * dv);
        const float* vj = kv_type == KvType::kF32 ? kv.v.get() + off : vbuf.data();
        if (kv_type == KvType::kF16)
          for (int64_t i = 0; i < dv; ++i) vbuf[static_cast<size_t>(i)] = fp16_to_fp32(kv.v16[off + static_cast<size_t>(i)]);
        const float p = scores[static_cast<size_t>(j)];
        for (int64_t i = 0; i < dv; ++i) o[i] += p * vj[i];
      }
      if (w.gated) {
        const float* gh = gate.data() + (t * n_head + h) * dk;
        for (int64_t i = 0; i < dv; ++i) o[i] *= 1.0f / (1.0f + std::exp(-gh[i]));
      }
    }
  };
  // Causal prefill: later tokens attend to more positions, so contiguous
  // halves would leave one thread idle most of the time; many small chunks,
  // claimed dynamically, balance the work.
  if (pool)
    pool->parallel_for(0, n_tokens * n_head, one_pair, 1, n_tokens > 1 ? 16 * pool->size() : 0);
  else
    one_pair(0, n_tokens * n_head, 0);
  KZ_RETURN_IF_ERROR(pair_status);
  return matmul(w.wo, attn.data(), n_tokens, out, pool);
}

}  // namespace kazeia
