// IEEE half <-> float rows with NEON (the f16 KV cache), the references'
// bits.
#include <arm_neon.h>

#include "kernels/arm/level_kernels.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels::arm::neon {

// Half <-> float with FCVTL / FCVTN (round to nearest even under the
// default FPCR, NaNs kept and quietened), the rules of the reference. Tails
// go through the reference.
void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(x + i))));
  ref::fp16_to_fp32_row(x + i, n - i, out + i);
}

void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  ref::fp32_to_fp16_row(x + i, n - i, out + i);
}

}  // namespace kazeia::kernels::arm::neon
