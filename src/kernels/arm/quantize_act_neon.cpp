// Activation quantizers (Q8_0, Q8_1, Q8_K) with NEON, writing exactly the
// bytes of ref::quantize_row_*_act (src/kernels/ref/quantize_act.cpp and
// ref::quantize_block_q8_K in src/tensor/quant_kquants.cpp).
//
// Byte identity follows from doing the same IEEE operations on the same
// values, lane by lane: the same multiplier computed the same way (one scalar
// division per block), one rounding multiply per element, and a rounding /
// saturation step that reproduces the reference's integer conversion,
// including NaN and infinity inputs. Sums are integers, exact in any order.
// Only the block maxima are reduced in a different order, and max does not
// depend on order (see the note on NaNs at each).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels::arm::neon {
namespace {

// ---------------------------------------------------------------- Q8_0, Q8_1
//
// The reference (ggml's x86 rule): amax = fmax over |x| (NaN skipped),
// d = amax / 127, id = amax != 0 ? 127 / amax : 0,
// q = round-half-even(x * id) saturated to int8, NaN -> -128.

constexpr int kVecs32 = kQK / 4;  // float32x4 vectors per 32-block

// max |x| of 32 values. std::fmax compiles to FMAXNM on aarch64, so this is
// the same instruction the reference runs: a quiet NaN operand is skipped.
float amax_32(const float32x4_t v[kVecs32]) {
  float32x4_t m = vdupq_n_f32(0.0f);
  for (int k = 0; k < kVecs32; ++k) m = vmaxnmq_f32(m, vabsq_f32(v[k]));
  return vmaxnmvq_f32(m);
}

// round-half-even(v) as int8 the way the reference's round_even_saturate
// does it: FCVTNS rounds ties to even and saturates to int32, the two
// saturating narrows clamp to [-128, 127]; FCVTNS maps NaN to 0, where the
// reference (mirroring x86's cvtps_epi32) gives -128, hence the select.
int8x8_t round_even_to_s8(float32x4_t a, float32x4_t b) {
  const int32x4_t nan_value = vdupq_n_s32(-128);
  const int32x4_t ia = vbslq_s32(vceqq_f32(a, a), vcvtnq_s32_f32(a), nan_value);
  const int32x4_t ib = vbslq_s32(vceqq_f32(b, b), vcvtnq_s32_f32(b), nan_value);
  return vqmovn_s16(vcombine_s16(vqmovn_s32(ia), vqmovn_s32(ib)));
}

// Quantizes one 32-block into qs; returns the fp32 d and the sum of the quants.
float quantize_block32(const float* x, int8_t* qs, int32_t* sum) {
  float32x4_t v[kVecs32];
  for (int k = 0; k < kVecs32; ++k) v[k] = vld1q_f32(x + 4 * k);
  const float amax = amax_32(v);
  const float d = amax / 127.f;
  const float id = amax != 0.0f ? 127.f / amax : 0.0f;
  int16x8_t sums = vdupq_n_s16(0);
  for (int k = 0; k < kVecs32; k += 2) {
    const int8x8_t q = round_even_to_s8(vmulq_n_f32(v[k], id), vmulq_n_f32(v[k + 1], id));
    vst1_s8(qs + 4 * k, q);
    sums = vaddw_s8(sums, q);
  }
  *sum = vaddlvq_s16(sums);
  return d;
}

// ---------------------------------------------------------------------- Q8_K
//
// The reference (ggml's quantize_row_q8_K_ref): max = the element of largest
// magnitude (the first one on ties; NaN never compares greater), all zeros
// when that magnitude is 0; iscale = -127 / max,
// q = min(nearest_int(iscale * x), 127) with nearest_int the "add 1.5 * 2^23
// and take the low mantissa bits" trick, d = 1 / iscale, bsums = sums of 16.

constexpr int kVecsK = kQK_K / 4;

// max |x| over the block, NaN lanes counted as 0 (so a NaN, quiet or
// signalling, is skipped exactly as by the reference's `>` comparison).
float amax_K(const float* x) {
  float32x4_t m = vdupq_n_f32(0.0f);
  for (int k = 0; k < kVecsK; ++k) {
    const float32x4_t v = vld1q_f32(x + 4 * k);
    const uint32x4_t not_nan = vceqq_f32(v, v);
    const uint32x4_t abs_bits = vreinterpretq_u32_f32(vabsq_f32(v));
    const float32x4_t a = vreinterpretq_f32_u32(vandq_u32(abs_bits, not_nan));
    m = vmaxq_f32(m, a);
  }
  return vmaxvq_f32(m);
}

// The first element whose magnitude is amax (> 0, so it exists and is not NaN).
float first_with_magnitude(const float* x, float amax) {
  const float32x4_t target = vdupq_n_f32(amax);
  int k = 0;
  while (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(x + 4 * k)), target)) == 0) ++k;
  for (int j = 4 * k;; ++j) {
    if (std::fabs(x[j]) == amax) return x[j];
  }
}

// nearest_int(v) from tensor/quant_ref.h, lane-wise: the bits of
// v + 1.5 * 2^23, low 23 bits, minus 2^22.
int32x4_t nearest_int(float32x4_t v) {
  const float32x4_t biased = vaddq_f32(v, vdupq_n_f32(12582912.f));
  const uint32x4_t mantissa = vandq_u32(vreinterpretq_u32_f32(biased), vdupq_n_u32(0x007fffff));
  const int32x4_t bits = vreinterpretq_s32_u32(mantissa);
  return vsubq_s32(bits, vdupq_n_s32(0x00400000));
}

void quantize_block_q8_K(const float* x, uint8_t* out) {
  BlockQ8_K b;
  const float amax = amax_K(x);
  if (amax == 0.0f) {
    std::memset(&b, 0, sizeof(b));
    std::memcpy(out, &b, sizeof(b));
    return;
  }
  const float max = first_with_magnitude(x, amax);
  const float iscale = -127.f / max;
  const int32x4_t top = vdupq_n_s32(127);
  for (int g = 0; g < kQK_K / 16; ++g) {
    int8x8_t q[2];
    for (int half = 0; half < 2; ++half) {
      const float* p = x + 16 * g + 8 * half;
      const int32x4_t a = vminq_s32(nearest_int(vmulq_n_f32(vld1q_f32(p), iscale)), top);
      const int32x4_t c = vminq_s32(nearest_int(vmulq_n_f32(vld1q_f32(p + 4), iscale)), top);
      // The reference stores static_cast<int8_t>(v): truncating narrows.
      q[half] = vmovn_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(c)));
    }
    const int8x16_t q16 = vcombine_s8(q[0], q[1]);
    vst1q_s8(b.qs + 16 * g, q16);
    b.bsums[g] = vaddlvq_s8(q16);
  }
  b.d = 1 / iscale;
  std::memcpy(out, &b, sizeof(b));
}

}  // namespace

void quantize_row_q8_0_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    BlockQ8_0 b;
    int32_t sum = 0;
    b.d = fp32_to_fp16(quantize_block32(x + ib * kQK, b.qs, &sum));
    std::memcpy(out + ib * static_cast<int64_t>(sizeof(BlockQ8_0)), &b, sizeof(b));
  }
}

void quantize_row_q8_1_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    ref::BlockQ8_1 b;
    int32_t sum = 0;
    const float d = quantize_block32(x + ib * kQK, b.qs, &sum);
    b.d = fp32_to_fp16(d);
    b.s = fp32_to_fp16(d * static_cast<float>(sum));  // the fp32 d, as the reference
    std::memcpy(out + ib * static_cast<int64_t>(sizeof(ref::BlockQ8_1)), &b, sizeof(b));
  }
}

void quantize_row_q8_K_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    quantize_block_q8_K(x + ib * kQK_K, out + ib * static_cast<int64_t>(sizeof(BlockQ8_K)));
  }
}

}  // namespace kazeia::kernels::arm::neon
