// A strided matrix transpose for the blocks' layout changes (K^T tiles of
// the KV cache and of the delta rule, the conv taps at load).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace kazeia {

// dst[x * ld_dst + j] = src[j * ld_src + x] for j < rows, x < cols, in
// 16 x 16 blocks: each block reads 16 source rows and writes 16 runs of 16
// consecutive values. (Element by element over a source row, every store
// went to a line of its own: the delta rule's K^T copy was ~6 % of its
// prefill time.)
template <class T>
void transpose(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst) {
  constexpr int64_t kB = 16;
  for (int64_t j0 = 0; j0 < rows; j0 += kB) {
    const int64_t j1 = std::min(rows, j0 + kB);
    for (int64_t x0 = 0; x0 < cols; x0 += kB) {
      const int64_t x1 = std::min(cols, x0 + kB);
      for (int64_t x = x0; x < x1; ++x)
        for (int64_t j = j0; j < j1; ++j) dst[x * ld_dst + j] = src[j * ld_src + x];
    }
  }
}

// Floats take the dispatched kernel (16 x 16 blocks through registers).
inline void transpose(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst) {
  kernels::transpose_f32(src, static_cast<size_t>(ld_src), rows, cols, dst, static_cast<size_t>(ld_dst));
}

}  // namespace kazeia
