// F32, F16 and BF16 row dots with NEON.
//
// The reference's float arithmetic, vectorised: element i goes to partial
// sum i % 16 (four float32x4 accumulators, a product rounded, then added),
// and the 16 sums are combined pairwise (lanes l and l + 8, then + 4, + 2,
// + 1), exactly as ref::dot_f32_lanes. The results are therefore identical
// to ref::vec_dot_f32 / _f16 / _bf16, bit for bit, as long as the compiler
// fuses neither (the build passes -ffp-contract=off, see
// cmake/ArmCrossBuild.cmake). A fused multiply-add would save one
// instruction per four elements; these dots are memory-bound, and equal
// results at every dispatch level are worth more.
#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels::arm::neon {
namespace {

constexpr int kLanes = 16;  // = ref::kFloatLanes

struct Acc16 {
  float32x4_t v[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};

  // v[k] += w[k] * x[k]: product rounded, then sum rounded (not fused).
  void add(const float32x4_t w[4], const float32x4_t x[4]) {
    for (int k = 0; k < 4; ++k) v[k] = vaddq_f32(v[k], vmulq_f32(w[k], x[k]));
  }

  // Pairwise as the reference: t[l] += t[l + 8] is v0 + v2 and v1 + v3,
  // t[l] += t[l + 4] adds those two, then lanes l + 2 and finally l + 1.
  float total() const {
    const float32x4_t s4 = vaddq_f32(vaddq_f32(v[0], v[2]), vaddq_f32(v[1], v[3]));
    const float32x2_t s2 = vadd_f32(vget_low_f32(s4), vget_high_f32(s4));
    return vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);
  }
};

// Loads 16 values of a row type as four float32x4 (elements 0-3, 4-7, ...).
struct F32Loader {
  static constexpr size_t kBytes = 4;
  static void load16(const uint8_t* p, float32x4_t out[4]) {
    for (int k = 0; k < 4; ++k) out[k] = load_f32x4(p + 16 * k);
  }
};

struct F16Loader {
  static constexpr size_t kBytes = 2;
  static void load16(const uint8_t* p, float32x4_t out[4]) {
    const float16x8_t a = vreinterpretq_f16_u8(vld1q_u8(p));
    const float16x8_t b = vreinterpretq_f16_u8(vld1q_u8(p + 16));
    out[0] = vcvt_f32_f16(vget_low_f16(a));
    out[1] = vcvt_high_f32_f16(a);
    out[2] = vcvt_f32_f16(vget_low_f16(b));
    out[3] = vcvt_high_f32_f16(b);
  }
};

// bfloat16 is the top half of a float: widen with a 16-bit left shift.
struct BF16Loader {
  static constexpr size_t kBytes = 2;
  static void load16(const uint8_t* p, float32x4_t out[4]) {
    const uint16x8_t a = vreinterpretq_u16_u8(vld1q_u8(p));
    const uint16x8_t b = vreinterpretq_u16_u8(vld1q_u8(p + 16));
    out[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(a), 16));
    out[1] = vreinterpretq_f32_u32(vshll_high_n_u16(a, 16));
    out[2] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(b), 16));
    out[3] = vreinterpretq_f32_u32(vshll_high_n_u16(b, 16));
  }
};

template <typename Loader>
float dot_rows(int64_t n, const uint8_t* w, const uint8_t* x) {
  constexpr size_t kStep = kLanes * Loader::kBytes;
  Acc16 acc;
  float32x4_t wv[4];
  float32x4_t xv[4];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Loader::load16(w + i * Loader::kBytes, wv);
    Loader::load16(x + i * Loader::kBytes, xv);
    acc.add(wv, xv);
  }
  if (i < n) {
    // The last n % 16 values, zero-padded to a full step: a zero product
    // leaves its lane's sum unchanged (up to the sign of a zero sum), and
    // each real value still goes to lane i % 16.
    uint8_t wpad[kStep] = {};
    uint8_t xpad[kStep] = {};
    const size_t bytes = static_cast<size_t>(n - i) * Loader::kBytes;
    std::memcpy(wpad, w + i * Loader::kBytes, bytes);
    std::memcpy(xpad, x + i * Loader::kBytes, bytes);
    Loader::load16(wpad, wv);
    Loader::load16(xpad, xv);
    acc.add(wv, xv);
  }
  return acc.total();
}

}  // namespace

float vec_dot_f32(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_rows<F32Loader>(n, w_row, static_cast<const uint8_t*>(x_row));
}

float vec_dot_f16(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_rows<F16Loader>(n, w_row, static_cast<const uint8_t*>(x_row));
}

float vec_dot_bf16(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_rows<BF16Loader>(n, w_row, static_cast<const uint8_t*>(x_row));
}

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
