// The residual stream between blocks: x += y, then the next block's input
// rms_norm(x) * w, one pass per token row, rows split over the pool.
#pragma once

#include <cstdint>

namespace kazeia {

class ThreadPool;

// For each of n_rows rows of dim floats: x += y (when y is given), then
// out = rms_norm(x) * w (when out is given). Per row exactly the
// operations of kernels::rms_norm, so the bits do not depend on the batch.
void add_and_norm_rows(float* x, const float* y, const float* w, int64_t n_rows, int64_t dim, float eps, float* out,
                       ThreadPool* pool);

}  // namespace kazeia
