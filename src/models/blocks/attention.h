// Causal grouped-query attention over a batch of tokens, with the variants
// the supported architectures need: optional per-head RMSNorm of q and k
// (qwen3, qwen35), partial rotary dims, either rotary pairing, and the
// qwen35 output gate (W_q yields query and gate per head; out *= sigmoid(gate)).
#pragma once

#include <cstdint>

#include "kazeia/status.h"
#include "kernels/kernels.h"
#include "models/model_config.h"
#include "models/model_state.h"

namespace kazeia {

class ThreadPool;

struct AttentionWeights {
  kernels::MatrixView wq, wk, wv, wo;
  const float* q_norm = nullptr;  // [head_dim_k], optional
  const float* k_norm = nullptr;  // [head_dim_k], optional
  bool gated = false;             // wq rows per head: [query | gate]
};

// x: n_tokens rows of n_embd (already normed); out: n_tokens rows of n_embd.
// Writes K/V of positions n_past .. n_past + n_tokens - 1 into kv, laid out
// as kv_layout says (model_state.h).
Status attention_forward(const ModelConfig& c, const AttentionWeights& w, KvLayer& kv, KvType kv_type,
                         const KvLayout& kv_layout, int64_t n_past, const float* x, int64_t n_tokens, float* out,
                         ThreadPool* pool);

}  // namespace kazeia
