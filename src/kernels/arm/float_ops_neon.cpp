// The float ops of the kernel table with NEON, four lanes at a time: the
// online-softmax row of the attention tiles, silu / swiglu / sigmoid_mul
// (on the reference's exp_approx, evaluated lane by lane with the same
// operations in the same order, no fused multiply-adds), the depthwise
// conv + silu, RMSNorm's sum of squares and scalings, abs_range,
// transpose_f32 in 4 x 4 blocks and the bandwidth probe's read_stream.
// Every result is bit-identical to its reference (the build passes
// -ffp-contract=off; see cmake/ArmCrossBuild.cmake). A row's last partial
// vector runs the reference's scalar code for those elements (NEON has no
// masked loads, and a full-vector load could cross into an unmapped page).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/arm/level_kernels.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels::arm::neon {
namespace {

// ref::exp_approx on 4 lanes (0 where !(x > -87), NaN included).
inline float32x4_t exp4(float32x4_t x) {
  const uint32x4_t live = vcgtq_f32(x, vdupq_n_f32(-87.0f));
  x = vminq_f32(x, vdupq_n_f32(88.0f));
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  const float32x4_t t = vaddq_f32(vmulq_n_f32(x, 1.44269504f), magic);
  const float32x4_t n = vsubq_f32(t, magic);
  const float32x4_t r = vsubq_f32(vsubq_f32(x, vmulq_n_f32(n, 0.693145752f)), vmulq_n_f32(n, 1.42860677e-06f));
  float32x4_t p = vdupq_n_f32(1.0f / 720.0f);
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.0f / 120.0f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.0f / 24.0f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.0f / 6.0f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(0.5f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.0f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.0f));
  const int32x4_t bits = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  const float32x4_t e = vmulq_f32(p, vreinterpretq_f32_s32(bits));
  return vreinterpretq_f32_u32(vandq_u32(live, vreinterpretq_u32_f32(e)));
}

// x / (1 + exp(0 - x)), as ref::silu_approx.
inline float32x4_t silu4(float32x4_t x) {
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), exp4(vsubq_f32(vdupq_n_f32(0.0f), x))));
}

}  // namespace

float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p) {
  const int64_t whole = valid / 4 * 4;
  float32x4_t vmax = vdupq_n_f32(*m);
  for (int64_t j = 0; j < whole; j += 4) {
    const float32x4_t w = vmulq_n_f32(vld1q_f32(s + j), scale);
    vst1q_f32(p + j, w);
    vmax = vmaxnmq_f32(vmax, w);  // IEEE maxNum, as std::fmax
  }
  float m_new = vmaxnmvq_f32(vmax);
  for (int64_t j = whole; j < valid; ++j) {
    p[j] = s[j] * scale;
    m_new = std::fmax(m_new, p[j]);
  }
  // Element j is summed in lane j % 16: lanes 4q .. 4q + 3 in sum[q].
  const float32x4_t vm = vdupq_n_f32(m_new);
  float32x4_t sum[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (int64_t j = 0; j < whole; j += 4) {
    const float32x4_t e = exp4(vsubq_f32(vld1q_f32(p + j), vm));
    vst1q_f32(p + j, e);
    sum[(j / 4) & 3] = vaddq_f32(sum[(j / 4) & 3], e);
  }
  float lanes[16];
  for (int q = 0; q < 4; ++q) vst1q_f32(lanes + 4 * q, sum[q]);
  for (int64_t j = whole; j < valid; ++j) {
    p[j] = ref::exp_approx(p[j] - m_new);
    lanes[j % 16] += p[j];
  }
  for (int64_t j = valid; j < n; ++j) p[j] = 0.0f;
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  *alpha = ref::exp_approx(*m - m_new);
  *m = m_new;
  return lanes[0];
}

void silu(const float* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, silu4(vld1q_f32(x + i)));
  ref::silu_approx(x + i, n - i, out + i);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, vmulq_f32(silu4(vld1q_f32(gate + i)), vld1q_f32(up + i)));
  ref::swiglu_approx(gate + i, up + i, n - i, out + i);
}

void sigmoid_mul(const float* gate, const float* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t e = exp4(vsubq_f32(vdupq_n_f32(0.0f), vld1q_f32(gate + i)));
    vst1q_f32(out + i, vdivq_f32(vld1q_f32(x + i), vaddq_f32(vdupq_n_f32(1.0f), e)));
  }
  ref::sigmoid_mul_approx(gate + i, x + i, n - i, out + i);
}

void swiglu_rows(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                 size_t ld_out, bool /*stream: a hint the x86 kernels take*/) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const size_t i = static_cast<size_t>(r) * ld_in;
    swiglu(gate + i, up + i, width, out + static_cast<size_t>(r) * ld_out);
  }
}

// ref::conv_silu: the same sum, four channels at a time.
void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out) {
  int64_t c = 0;
  for (; c + 4 <= n; c += 4) {
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t t = 0; t < n_taps; ++t)
      acc = vaddq_f32(acc, vmulq_f32(vld1q_f32(taps + static_cast<size_t>(t) * taps_stride + static_cast<size_t>(c)),
                                     vld1q_f32(rows[t] + c)));
    vst1q_f32(out + c, silu4(acc));
  }
  for (; c < n; ++c) {
    float acc = 0.0f;
    for (int64_t t = 0; t < n_taps; ++t) acc += taps[static_cast<size_t>(t) * taps_stride + static_cast<size_t>(c)] * rows[t][c];
    ref::silu_approx(&acc, 1, out + c);
  }
}

// ref::sum_squares: the eight double partial sums (element i in sum
// i % 8) are the lanes of four vectors; the tail adds to sums 0, 1, ...
double sum_squares(const float* x, int64_t n) {
  float64x2_t s[4] = {vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0)};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4);
    const float32x4_t sa = vmulq_f32(a, a), sb = vmulq_f32(b, b);
    s[0] = vaddq_f64(s[0], vcvt_f64_f32(vget_low_f32(sa)));
    s[1] = vaddq_f64(s[1], vcvt_high_f64_f32(sa));
    s[2] = vaddq_f64(s[2], vcvt_f64_f32(vget_low_f32(sb)));
    s[3] = vaddq_f64(s[3], vcvt_high_f64_f32(sb));
  }
  double l[8];
  for (int q = 0; q < 4; ++q) vst1q_f64(l + 2 * q, s[q]);
  for (int j = 0; i < n; ++i, ++j) l[j] += static_cast<double>(x[i] * x[i]);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// ref::abs_range: unsigned min / max of the sign-cleared patterns.
void abs_range(const float* x, int64_t n, float* min, float* max) {
  const uint32x4_t magnitude = vdupq_n_u32(0x7fffffffu);
  uint32x4_t lo = magnitude, hi = vdupq_n_u32(0u);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32x4_t v = vandq_u32(vreinterpretq_u32_f32(vld1q_f32(x + i)), magnitude);
    lo = vminq_u32(lo, v);
    hi = vmaxq_u32(hi, v);
  }
  uint32_t mn = vminvq_u32(lo), mx = vmaxvq_u32(hi);
  for (; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, x + i, sizeof v);
    v &= 0x7fffffffu;
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  std::memcpy(min, &mn, sizeof mn);
  std::memcpy(max, &mx, sizeof mx);
}

void scale(const float* x, float s, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, vmulq_n_f32(vld1q_f32(x + i), s));
  ref::scale(x + i, s, n - i, out + i);
}

void scale_mul(const float* x, float s, const float* w, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), s), vld1q_f32(w + i)));
  ref::scale_mul(x + i, s, w + i, n - i, out + i);
}

void scale_add(const float* x, float s, const float* y, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, vaddq_f32(vmulq_n_f32(vld1q_f32(x + i), s), vld1q_f32(y + i)));
  ref::scale_add(x + i, s, y + i, n - i, out + i);
}

// ref::transpose_f32 in 4 x 4 blocks through registers (two levels of
// TRN); the edges (rows or columns past the last whole block) copied one
// value at a time.
void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst) {
  const int64_t rows4 = rows / 4 * 4, cols4 = cols / 4 * 4;
  auto at = []<class T>(T* p, size_t ld, int64_t r, int64_t c) { return p + static_cast<size_t>(r) * ld + static_cast<size_t>(c); };
  for (int64_t j = 0; j < rows4; j += 4) {
    for (int64_t x = 0; x < cols4; x += 4) {
      const float32x4_t r0 = vld1q_f32(at(src, ld_src, j, x)), r1 = vld1q_f32(at(src, ld_src, j + 1, x));
      const float32x4_t r2 = vld1q_f32(at(src, ld_src, j + 2, x)), r3 = vld1q_f32(at(src, ld_src, j + 3, x));
      const float32x4x2_t t01 = vtrnq_f32(r0, r1), t23 = vtrnq_f32(r2, r3);
      const float64x2_t a0 = vreinterpretq_f64_f32(t01.val[0]), a1 = vreinterpretq_f64_f32(t01.val[1]);
      const float64x2_t b0 = vreinterpretq_f64_f32(t23.val[0]), b1 = vreinterpretq_f64_f32(t23.val[1]);
      vst1q_f32(at(dst, ld_dst, x, j), vreinterpretq_f32_f64(vtrn1q_f64(a0, b0)));
      vst1q_f32(at(dst, ld_dst, x + 1, j), vreinterpretq_f32_f64(vtrn1q_f64(a1, b1)));
      vst1q_f32(at(dst, ld_dst, x + 2, j), vreinterpretq_f32_f64(vtrn2q_f64(a0, b0)));
      vst1q_f32(at(dst, ld_dst, x + 3, j), vreinterpretq_f32_f64(vtrn2q_f64(a1, b1)));
    }
    for (int64_t x = cols4; x < cols; ++x)
      for (int64_t i = j; i < j + 4; ++i) *at(dst, ld_dst, x, i) = *at(src, ld_src, i, x);
  }
  for (int64_t i = rows4; i < rows; ++i)
    for (int64_t x = 0; x < cols; ++x) *at(dst, ld_dst, x, i) = *at(src, ld_src, i, x);
}

// ref::read_stream with 16-byte loads, four accumulators (sums mod 2^64:
// any order gives the same result).
uint64_t read_stream(const uint8_t* p, size_t bytes) {
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    a0 = vaddq_u64(a0, vreinterpretq_u64_u8(vld1q_u8(p + i)));
    a1 = vaddq_u64(a1, vreinterpretq_u64_u8(vld1q_u8(p + i + 16)));
    a2 = vaddq_u64(a2, vreinterpretq_u64_u8(vld1q_u8(p + i + 32)));
    a3 = vaddq_u64(a3, vreinterpretq_u64_u8(vld1q_u8(p + i + 48)));
  }
  uint64_t sum = vaddvq_u64(vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3)));
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    sum += w;
  }
  return sum;
}

}  // namespace kazeia::kernels::arm::neon
