// The base revision's x86 kernel templates for tools/kernel_ab.sh (compiled
// against that revision's src/kernels, with the flags of the library's file
// for the same ISA). KERNEL_AB_AVX2 selects the AVX2 policy, else AVX-512.
// Everything the templates define is in an unnamed namespace, so this copy
// never meets the library's at link time.
#include "kernels/x86/isa_unit.h"
#if defined(KERNEL_AB_AVX2)
#include "kernels/x86/simd_avx2.h"
#else
#include "kernels/x86/simd_avx512.h"
#endif

#include <cstring>
#include <iterator>

namespace kazeia::kernels::x86 {
// The base revision's token tiles (token_tiles_<isa>.cpp, its fill renamed
// by kernel_ab.sh).
void kernel_ab_base_token_tiles(KernelTable& table);

namespace {
#if defined(KERNEL_AB_AVX2)
using BaseIsa = Avx2;
constexpr const char* kBaseIsa = "avx2";
#else
using BaseIsa = Avx512;
constexpr const char* kBaseIsa = "avx512";
#endif
}  // namespace

const char* base_isa() { return kBaseIsa; }

// table: a copy of the active one. Its strips become the base revision's;
// its token tiles too where they are this ISA's (not AMX's, nor none under
// KAZEIA_TOKEN_TILES=0), so both sides tile the same batches - and a type
// the revision does not tile runs the revision's strips (its slot cleared
// first: the copy holds the active tiles).
void fill_base(KernelTable& table) {
  fill_isa<BaseIsa>(table, kBaseIsa);
  KernelTable tiled = table;
  const WeightKernels untiled;
  for (WeightKernels& k : tiled.weights) {
    k.tile_strip = untiled.tile_strip;
    k.tile_group_bytes = untiled.tile_group_bytes;
    k.tile_acts = untiled.tile_acts;
    k.tile_scratch_bytes = untiled.tile_scratch_bytes;
    k.tile_isa = untiled.tile_isa;
    k.tile_above = untiled.tile_above;
    k.tile_rest_max = untiled.tile_rest_max;
  }
  kernel_ab_base_token_tiles(tiled);
  for (size_t i = 0; i < std::size(table.weights); ++i) {
    const char* active = table.weights[i].tile_isa;
    if (active != nullptr && std::strcmp(active, kBaseIsa) == 0) table.weights[i] = tiled.weights[i];
  }
}
}  // namespace kazeia::kernels::x86
