// The gated delta rule (the recurrent core of Gated DeltaNet), separated from
// the projections, conv and norms around it so that its two forms can be
// tested against each other on arbitrary inputs.
//
// Per value head h (reading key/query head h mod n_k_heads), per token t,
// with S in R^{DK x DV} (row i = key dim, column j = value dim):
//   S <- e^{g_t} S;  delta = beta_t (v_t - S^T k_t);  S <- S + k_t delta^T;
//   o_t = S^T q_t / sqrt(DK)
//
// delta_rule_recurrent runs exactly that, token by token (the reference).
// delta_rule_chunked computes the same thing chunk by chunk in the WY/UT
// form (Yang, Kautz, Hatamizadeh, "Gated Delta Networks", ICLR 2025): with
// G_t = g_1 + .. + g_t (cumulative log decay inside a chunk of C tokens,
// 1-based) and S_0 the state before the chunk,
//   A[t][s] = beta_t e^{G_t - G_s} k_t.k_s        (s < t, strictly lower)
//   T       = (I + A)^{-1}                        (forward substitution)
//   W       = T diag(beta e^G) K,  U = T diag(beta) V
//   D       = U - W S_0                           (the C deltas)
//   O       = (diag(e^{G}) Q S_0 + (Q K^T o e^{G_t - G_s})_{s<=t} D) / sqrt(DK)
//   S_C     = e^{G_C} S_0 + (e^{G_C - G_s} k_s)^T D
// so a chunk costs a few C x C and C x D matrix products plus one state
// update instead of C rank-1 updates of S. Both forms run value heads in
// parallel on the pool.
//
// Every row t of those products depends only on rows <= t (T is lower
// triangular, the masks are causal) and each entry is one fixed chain of
// operations (kernels::gemm_f32_acc's per-element FMA chain; zero entries
// past the diagonal add exact zeros). So the rows of a chunk can be computed
// a few at a time, given the earlier rows' K, W/U inputs, deltas and T rows:
// with a DeltaRuleTail, chunks sit at fixed positions of the sequence
// (multiples of C from its start), the state holds S at the last chunk
// boundary and the tail the rows since. A sequence fed in one batch, in
// pieces of any length, or token by token (decode: one row, ~ the cost of a
// recurrent step) then gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

class ThreadPool;

// 16, not the usual 64. Against 64, the 512-token prefill of one layer ran
// 20-35 % faster with 32 (bench_delta_rule). Against 32, 16 keeps prefill
// equal within the noise (Qwen3.5-0.8B pp512, 8 alternating runs: 634 vs
// 626 t/s) and makes decode ~3 % faster (a decoded token multiplies
// against the unfinished chunk's rows, half as many on average); the tail
// (the state's unfinished chunk) takes half the memory.
inline constexpr int64_t kDeltaRuleDefaultChunk = 16;
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
  float* out = nullptr;         // o = S^T q / sqrt(d_k), written for every token;
  int64_t out_stride = 0;       // null out (and q): update the state only
};

// The rows of the current, unfinished chunk (module comment), per value
// head: G (as doubles), beta, K^T (d_k x C), beta e^G K (C x d_k),
// beta V (C x d_v), the deltas D (C x d_v) and the rows of T (C x C).
// ~ (2 d_k + 2 d_v + C) C floats per head, allocated on first use.
struct DeltaRuleTail {
  int64_t chunk = 0;  // the chunk size of the rows held (0: never used)
  int64_t rows = 0;   // tokens since the last chunk boundary, < chunk
  int64_t n_v_heads = 0, d_k = 0, d_v = 0;
  bool packed = false;  // data holds only the rows (delta_rule_pack_tail)
  std::vector<float> data;

  static size_t head_floats(int64_t chunk, int64_t d_k, int64_t d_v);
  uint64_t memory_bytes() const { return data.capacity() * sizeof(float); }
};

// state: n_v_heads matrices of d_k x d_v floats (row-major, key dim first),
// updated in place. InvalidArgument on inconsistent shapes or null pointers.
Status delta_rule_recurrent(const DeltaRuleBatch& b, float* state, ThreadPool* pool);

// OK when a call with this chunk size and these head shapes may continue
// `tail`; InvalidArgument naming both otherwise (or for a packed tail).
Status check_delta_rule_tail(const DeltaRuleTail& tail, int64_t chunk_size, int64_t n_v_heads, int64_t d_k,
                             int64_t d_v);

// Without a tail: chunks from the batch start, a last partial chunk folded
// into `state` (the state after the batch). With one: `state` is S at the
// last chunk boundary and `tail` the rows since, both carried from call to
// call (module comment). InvalidArgument, with state and tail untouched,
// when the tail holds rows of another chunk size or head shape.
Status delta_rule_chunked(const DeltaRuleBatch& b, int64_t chunk_size, float* state, ThreadPool* pool,
                          DeltaRuleTail* tail = nullptr);

// A copy of `from` as small as its rows (checkpoints: a chunk's worth of
// rows is ~0.54 MB per Qwen3.5-0.8B layer at C = 16, a fresh tail nothing),
// and back.
// unpack restores a live tail equal to the one packed.
void delta_rule_pack_tail(const DeltaRuleTail& from, DeltaRuleTail& to);
void delta_rule_unpack_tail(const DeltaRuleTail& from, DeltaRuleTail& to);

// Folds the tail's rows into `state` (S at the boundary -> S after the
// last row) and empties the tail: state and tail then describe the same
// sequence as a plain state. Not needed to continue; for a state's value.
void delta_rule_fold_tail(float* state, DeltaRuleTail& tail, ThreadPool* pool);

}  // namespace kazeia
