#include "models/blocks/ffn.h"

#include "base/scratch.h"

namespace kazeia {

using namespace kernels;

Status ffn_forward(const FfnWeights& w, const float* x, int64_t n_tokens, float* out, ThreadPool* pool) {
  const size_t n = static_cast<size_t>(n_tokens * w.gate.n_out);
  ScratchFloats g(n), u(n);
  const MatmulJob gate_up[] = {{&w.gate, g.data()}, {&w.up, u.data()}};
  KZ_RETURN_IF_ERROR(matmul_many(gate_up, x, n_tokens, pool));
  swiglu(g.data(), u.data(), static_cast<int64_t>(n), g.data());
  return matmul(w.down, g.data(), n_tokens, out, pool);
}

}  // namespace kazeia
