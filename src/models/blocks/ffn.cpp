#include "models/blocks/ffn.h"

#include "base/scratch.h"
#include "base/thread_pool.h"

namespace kazeia {

using namespace kernels;

Status ffn_forward(const FfnWeights& w, const float* x, int64_t n_tokens, float* out, ThreadPool* pool) {
  ScratchFloats g(static_cast<size_t>(n_tokens * w.gate.n_out));
  KZ_RETURN_IF_ERROR(matmul_swiglu(w.gate, w.up, x, n_tokens, g.data(), pool));
  return matmul(w.down, g.data(), n_tokens, out, pool);
}

}  // namespace kazeia
