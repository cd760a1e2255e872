// The walk of a token-tile strip, shared by the AVX2 and AVX-512 token
// tiles (token_tiles_avx2.cpp, token_tiles_avx512.cpp): a strip of 16
// weight rows times the token groups matmul interleaved (StripArgs::tiles).
//
// Long rows go in chunks of F::kChunk blocks: each chunk is unpacked by
// F::pack into the panel at the scratch's start and run over every token
// group, so the panel stays in L1 while the groups stream past it; each
// (row, token) still sums its blocks in order (the caller keeps the
// accumulators between chunks). The next strip's rows (StripArgs::prefetch)
// are fetched into L2 a slice per chunk and token group: unpacked at the
// start of the next call, they would otherwise come from memory while
// nothing else runs.
//
// F: the format - kElems (elements per block), kChunk (blocks per chunk),
// kActBytes (a group's bytes per block), kPanelBytes (the panel's bytes per
// block), pack(a, b0, b1, panel), Group::bytes and Group::build (the
// activation groups: WeightKernels::tile_group_bytes, tile_acts).
// run(group, panel, n_blocks, g, first, last): token group g over the
// chunk's n_blocks blocks (group and panel at the chunk's first block);
// first / last: the row's first / last chunk.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"

namespace kazeia::kernels::x86 {
namespace {

constexpr int64_t kTileGroupTokens = 16;  // matmul's kTileGroup
constexpr int64_t kTileStripRows = 16;    // weight rows per tile strip

template <class F, class Run>
[[gnu::always_inline]] inline void walk_token_tiles(const StripArgs& a, Run&& run) {
  const int64_t nb = a.n_in / F::kElems;
  const int64_t chunk = std::min<int64_t>(nb, F::kChunk);
  const int64_t n_groups = (a.x.n_tokens + kTileGroupTokens - 1) / kTileGroupTokens;
  uint8_t* const panel = a.scratch;
  const int64_t n_chunks = (nb + chunk - 1) / chunk;
  const size_t lines_per_part = a.prefetch_lines_per(n_chunks * n_groups);
  const uint8_t* next = a.prefetch;
  for (int64_t c0 = 0; c0 < nb; c0 += chunk) {
    const int64_t c1 = std::min(nb, c0 + chunk);
    F::pack(a, c0, c1, panel);
    for (int64_t g = 0; g < n_groups; ++g) {
      for (size_t l = 0; l < lines_per_part; ++l) _mm_prefetch(reinterpret_cast<const char*>(next + 64 * l), _MM_HINT_T1);
      next += 64 * lines_per_part;
      const uint8_t* group = a.tiles + static_cast<size_t>(g) * a.tile_group_bytes + static_cast<size_t>(c0) * F::kActBytes;
      run(group, static_cast<const uint8_t*>(panel), c1 - c0, g, c0 == 0, c1 == nb);
    }
  }
}

// The groups' accumulators in the scratch, after the chunk's panel
// (token_tile_scratch_bytes).
template <class F>
float* token_tile_accumulators(const StripArgs& a) {
  const int64_t chunk = std::min<int64_t>(a.n_in / F::kElems, F::kChunk);
  return reinterpret_cast<float*>(a.scratch + static_cast<size_t>(chunk) * F::kPanelBytes);
}

// The panel of one chunk, then (kAccsAlways, or rows of several chunks)
// every group's 16 x 16 float accumulators.
template <class F, bool kAccsAlways>
size_t token_tile_scratch_bytes(int64_t n_in, int64_t n_tokens) {
  const int64_t nb = n_in / F::kElems;
  const int64_t chunk = std::min<int64_t>(nb, F::kChunk);
  const size_t accs = kAccsAlways || chunk < nb
                          ? static_cast<size_t>((n_tokens + kTileGroupTokens - 1) / kTileGroupTokens) * kTileStripRows * kTileGroupTokens
                          : 0;
  return static_cast<size_t>(chunk) * F::kPanelBytes + accs * sizeof(float);
}

// A format's slots in a kernel table: its strip, activation groups and
// scratch (kAccsAlways as token_tile_scratch_bytes); tile_above and
// tile_rest_max stay the caller's.
template <class F, bool kAccsAlways>
void set_token_tiles(WeightKernels& k, StripFn strip, const char* isa) {
  k.tile_strip = strip;
  k.tile_group_bytes = &F::Group::bytes;
  k.tile_acts = &F::Group::build;
  k.tile_scratch_bytes = &token_tile_scratch_bytes<F, kAccsAlways>;
  k.tile_isa = isa;
}

}  // namespace
}  // namespace kazeia::kernels::x86
