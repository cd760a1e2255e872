#include "models/blocks/residual.h"

#include "base/thread_pool.h"
#include "kernels/kernels.h"

namespace kazeia {

void add_and_norm_rows(float* x, const float* y, const float* w, int64_t n_rows, int64_t dim, float eps, float* out,
                       ThreadPool* pool) {
  auto rows = [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      float* xr = x + t * dim;
      if (y != nullptr) {
        const float* yr = y + t * dim;
        for (int64_t i = 0; i < dim; ++i) xr[i] += yr[i];
      }
      if (out != nullptr) kernels::rms_norm(xr, w, dim, eps, out + t * dim);
    }
  };
  // A decode step's single row is not worth waking the pool.
  if (pool != nullptr && n_rows >= 4) {
    pool->parallel_for(0, n_rows, rows);
  } else {
    rows(0, n_rows, 0);
  }
}

}  // namespace kazeia
