// The AVX-512 (F BW VL DQ VNNI) kernels: the x86 templates instantiated with the Avx512 policy (isa_unit.h).
#include "kernels/x86/isa_unit.h"
#include "kernels/x86/simd_avx512.h"

namespace kazeia::kernels::x86 {
void fill_avx512_kernels(KernelTable& table) {
  fill_isa<Avx512>(table, "avx512");
  fill_avx512_float_ops(table);
}
}  // namespace kazeia::kernels::x86
