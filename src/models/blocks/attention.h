// Causal grouped-query attention over a batch of tokens, with the variants
// the supported architectures need: optional per-head RMSNorm of q and k
// (qwen3, qwen35), partial rotary dims, either rotary pairing, and the
// qwen35 output gate (W_q yields query and gate per head; out *= sigmoid(gate)).
#pragma once

#include <cstdint>

#include "base/scratch.h"
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

// The rotary angles (kernels::rope_angles) of a batch's positions
// first_pos .. first_pos + n_tokens - 1, computed once per forward and
// shared by its attention layers: per layer, the angles of a decoded token
// cost more than rotating its few heads.
class RopeTable {
 public:
  RopeTable(const ModelConfig& c, int64_t first_pos, int64_t n_tokens);
  RopeTable(const RopeTable&) = delete;
  RopeTable& operator=(const RopeTable&) = delete;
  int64_t first_pos() const { return first_pos_; }
  int64_t n_tokens() const { return n_tokens_; }
  // Token t's (position first_pos + t) n_rot / 2 cosines and sines.
  const float* cos_at(int64_t t) const { return values_.data() + t * 2 * half_; }
  const float* sin_at(int64_t t) const { return cos_at(t) + half_; }

 private:
  int64_t first_pos_, n_tokens_, half_;
  ScratchFloats values_;  // per token: half_ cosines, then half_ sines
};

// x: n_tokens rows of n_embd (already normed); out: n_tokens rows of n_embd.
// Writes K/V of positions n_past .. n_past + n_tokens - 1 into kv, laid out
// as kv_layout says (model_state.h). rope holds those positions' angles.
Status attention_forward(const ModelConfig& c, const AttentionWeights& w, KvLayer& kv, KvType kv_type,
                         const KvLayout& kv_layout, int64_t n_past, const RopeTable& rope, const float* x,
                         int64_t n_tokens, float* out, ThreadPool* pool);

}  // namespace kazeia
