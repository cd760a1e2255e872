// A strided matrix transpose of any element type, in 16 x 16 blocks: the
// reference of kernels::transpose_f32 and the f16 KV cache's K tiles.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kazeia::kernels {

// dst[x * ld_dst + j] = src[j * ld_src + x] for j < rows, x < cols. Each
// block reads 16 source rows and writes 16 runs of 16 consecutive values.
// (Element by element over a source row, every store went to a line of
// its own: the delta rule's K^T copy was ~6 % of its prefill time.)
template <class T>
void transpose_blocked(const T* src, size_t ld_src, int64_t rows, int64_t cols, T* dst, size_t ld_dst) {
  constexpr int64_t kB = 16;
  for (int64_t j0 = 0; j0 < rows; j0 += kB) {
    const int64_t j1 = std::min(rows, j0 + kB);
    for (int64_t x0 = 0; x0 < cols; x0 += kB) {
      const int64_t x1 = std::min(cols, x0 + kB);
      for (int64_t x = x0; x < x1; ++x)
        for (int64_t j = j0; j < j1; ++j)
          dst[static_cast<size_t>(x) * ld_dst + static_cast<size_t>(j)] = src[static_cast<size_t>(j) * ld_src + static_cast<size_t>(x)];
    }
  }
}

}  // namespace kazeia::kernels
