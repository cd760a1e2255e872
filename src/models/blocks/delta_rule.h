// The gated delta rule (the recurrent core of Gated DeltaNet), separated from
// the projections, conv and norms around it so that its two forms can be
// tested against each other on arbitrary inputs.
//
// Per value head h (reading key/query head h mod n_k_heads), per token t,
// with S in R^{DK x DV} (row i = key dim, column j = value dim):
//   S <- e^{g_t} S;  delta = beta_t (v_t - S^T k_t);  S <- S + k_t delta^T;
//   o_t = S^T q_t / sqrt(DK)
//
// delta_rule_recurrent runs exactly that, token by token (decode, and the
// reference). delta_rule_chunked computes the same thing chunk by chunk in
// the WY/UT form (Yang, Kautz, Hatamizadeh, "Gated Delta Networks", ICLR
// 2025): with G_t = g_1 + .. + g_t (cumulative log decay inside a chunk of
// C tokens, 1-based) and S_0 the state before the chunk,
//   A[t][s] = beta_t e^{G_t - G_s} k_t.k_s        (s < t, strictly lower)
//   T       = (I + A)^{-1}                        (forward substitution)
//   W       = T diag(beta e^{G}) K,  U = T diag(beta) V
//   D       = U - W S_0                           (the C deltas)
//   O       = (diag(e^{G}) Q S_0 + (Q K^T o e^{G_t - G_s})_{s<=t} D) / sqrt(DK)
//   S_C     = e^{G_C} S_0 + (e^{G_C - G_s} k_s)^T D
// so a chunk costs a few C x C and C x D matrix products plus one state
// update instead of C rank-1 updates of S. Both forms run value heads in
// parallel on the pool.
#pragma once

#include <cstdint>

#include "kazeia/status.h"

namespace kazeia {

class ThreadPool;

inline constexpr int64_t kDeltaRuleDefaultChunk = 64;
inline constexpr int64_t kDeltaRuleMaxChunk = 4096;  // scratch grows with its square

// One batch of tokens for every value head. Row t of q / k holds all key
// heads (head h at offset h * d_k), row t of v / out all value heads (head h
// at offset h * d_v); rows are `*_stride` floats apart, so q, k and v can be
// views into one conv output buffer.
struct DeltaRuleBatch {
  int64_t n_tokens = 0;
  int64_t n_k_heads = 0, n_v_heads = 0;  // n_v_heads a multiple of n_k_heads
  int64_t d_k = 0, d_v = 0;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;
  const float* beta = nullptr;  // [t * n_v_heads + h], the write strength
  const float* g = nullptr;     // [t * n_v_heads + h], log decay (<= 0 in practice)
  float* out = nullptr;         // o = S^T q / sqrt(d_k), written for every token
  int64_t out_stride = 0;
};

// state: n_v_heads matrices of d_k x d_v floats (row-major, key dim first),
// updated in place. InvalidArgument on inconsistent shapes or null pointers.
Status delta_rule_recurrent(const DeltaRuleBatch& b, float* state, ThreadPool* pool);
Status delta_rule_chunked(const DeltaRuleBatch& b, int64_t chunk_size, float* state, ThreadPool* pool);

}  // namespace kazeia
