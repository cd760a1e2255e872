// The AVX2 + FMA + F16C kernels: the x86 templates instantiated with the Avx2 policy (isa_unit.h).
#include "kernels/x86/isa_unit.h"
#include "kernels/x86/simd_avx2.h"

namespace kazeia::kernels::x86 {
void fill_avx2_kernels(KernelTable& table, bool row_kernels) { fill_isa<Avx2>(table, "avx2", row_kernels); }
}  // namespace kazeia::kernels::x86
