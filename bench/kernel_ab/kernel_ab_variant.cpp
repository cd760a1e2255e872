// The base revision's AVX-512 kernel templates for tools/kernel_ab.sh
// (compiled against that revision's src/kernels). Everything the templates
// define is in an unnamed namespace, so this copy never meets the library's
// at link time.
#include "kernels/x86/isa_unit.h"
#include "kernels/x86/simd_avx512.h"

namespace kazeia::kernels::x86 {
void fill_base(KernelTable& table) { fill_isa<Avx512>(table, "avx512"); }
}  // namespace kazeia::kernels::x86
