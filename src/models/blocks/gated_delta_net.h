// Gated DeltaNet (Yang, Kautz, Hatamizadeh, ICLR 2025) as Qwen3.5 uses it.
// The delta rule runs in the chunkwise WY/UT form (delta_rule.h, tested
// against the recurrence) on chunks at fixed positions: decode computes one
// row of the current chunk, a batch many; the results do not depend on how
// the tokens were split.
//
// Per token: qkv = W_qkv x; z = W_gate x; beta = sigmoid(W_beta x);
// g = ssm_a * softplus(W_alpha x + dt_bias); causal depthwise conv over the
// q|k|v channels (state = the last K-1 inputs) then SiLU; L2-normalised q, k
// per head; per value head h (key head h mod NK), S in R^{DK x DV}:
//   S <- e^g S;  delta = beta (v - S^T k);  S <- S + k delta^T;  o = S^T q / sqrt(DK)
// then RMSNorm(o) * ssm_norm * SiLU(z), and W_out.
#pragma once

#include "kazeia/status.h"
#include "kernels/kernels.h"
#include "models/blocks/delta_rule.h"
#include "models/model_config.h"
#include "models/model_state.h"

namespace kazeia {

class ThreadPool;

struct DeltaNetWeights {
  kernels::MatrixView qkv, gate, beta, alpha, out;
  // The causal conv's taps, tap-major: row k holds tap k (oldest input
  // first) of every channel. The file stores them channel-major
  // (ssm_conv1d, GGUF shape {K, channels}); the model transposes them once.
  const float* conv_taps = nullptr;  // [K][channels]
  const float* dt_bias = nullptr;  // [n_v_heads]
  const float* a = nullptr;        // [n_v_heads], negative
  const float* norm = nullptr;     // [head_dim]
};

// conv as stored (K taps per channel, channel after channel) -> out
// (conv_taps' layout: K rows of `channels`).
void transpose_conv_taps(const float* conv, int64_t kernel, int64_t channels, float* out);

// x, out: n_tokens rows of n_embd (x already normed). Updates `state`.
// chunk_size: tokens per chunk of the chunkwise form; the same for every
// call on one state while its tail holds rows.
// log (may be null): receives the batch's per-token inputs (rollback).
Status gated_delta_net_forward(const ModelConfig& c, const DeltaNetWeights& w, RecurrentLayer& state,
                               const float* x, int64_t n_tokens, float* out, ThreadPool* pool,
                               int64_t chunk_size = kDeltaRuleDefaultChunk, RecurrentLog* log = nullptr);

}  // namespace kazeia
