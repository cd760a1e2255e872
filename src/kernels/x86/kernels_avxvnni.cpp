// The AVX2 + AVX-VNNI kernels: the x86 templates instantiated with the AvxVnni policy (isa_unit.h).
#include "kernels/x86/isa_unit.h"
#include "kernels/x86/simd_avxvnni.h"

namespace kazeia::kernels::x86 {
void fill_avxvnni_kernels(KernelTable& table) { fill_isa<AvxVnni>(table, "avx2+vnni"); }
}  // namespace kazeia::kernels::x86
