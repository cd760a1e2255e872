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

namespace kazeia::kernels::x86 {
// The base revision's token tiles (token_tiles_<isa>.cpp, its fill renamed
// by kernel_ab.sh).
void kernel_ab_base_token_tiles(KernelTable& table);
#if defined(KERNEL_AB_AVX2)
const char* base_isa() { return "avx2"; }
void fill_base(KernelTable& table) {
  fill_isa<Avx2>(table, "avx2");
  kernel_ab_base_token_tiles(table);
}
#else
const char* base_isa() { return "avx512"; }
void fill_base(KernelTable& table) {
  fill_isa<Avx512>(table, "avx512");
  kernel_ab_base_token_tiles(table);
}
#endif
}  // namespace kazeia::kernels::x86
