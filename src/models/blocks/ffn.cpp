#include "models/blocks/ffn.h"

#include "base/scratch.h"
#include "base/thread_pool.h"

namespace kazeia {

using namespace kernels;

namespace {
// Below this many elements (a few tokens) one thread is quicker than a
// dispatch.
constexpr int64_t kParallelSwigluMin = int64_t{1} << 15;
}  // namespace

Status ffn_forward(const FfnWeights& w, const float* x, int64_t n_tokens, float* out, ThreadPool* pool) {
  const size_t n = static_cast<size_t>(n_tokens * w.gate.n_out);
  ScratchFloats g(n), u(n);
  const MatmulJob gate_up[] = {{&w.gate, g.data()}, {&w.up, u.data()}};
  KZ_RETURN_IF_ERROR(matmul_many(gate_up, x, n_tokens, pool));
  // Elementwise: a batch's worth is split over the threads (same bits).
  const int64_t total = static_cast<int64_t>(n);
  if (pool != nullptr && total >= kParallelSwigluMin) {
    pool->parallel_for(0, total, [&](int64_t b, int64_t e, int) { swiglu(g.data() + b, u.data() + b, e - b, g.data() + b); },
                       4096);
  } else {
    swiglu(g.data(), u.data(), total, g.data());
  }
  return matmul(w.down, g.data(), n_tokens, out, pool);
}

}  // namespace kazeia
