// SwiGLU feed-forward: down( silu(gate·x) * (up·x) ).
#pragma once

#include "kazeia/status.h"
#include "kernels/kernels.h"

namespace kazeia {

class ThreadPool;

struct FfnWeights {
  kernels::MatrixView gate, up, down;
};

// x, out: n_tokens rows of n_embd.
Status ffn_forward(const FfnWeights& w, const float* x, int64_t n_tokens, float* out, ThreadPool* pool);

}  // namespace kazeia
