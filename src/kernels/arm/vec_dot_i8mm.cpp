// 2-row x 2-token tiles for Q8_0 and Q4_0 weights with the Armv8.6 8-bit
// matrix multiply (SMMLA; compiled with +i8mm, only called when the CPU has
// it).
//
// SMMLA multiplies a 2x8 int8 matrix (first operand: row 0 in bytes 0-7,
// row 1 in bytes 8-15) by an 8x2 one (second operand: column 0 in bytes
// 0-7, column 1 in bytes 8-15) and adds the 2x2 int32 product, row-major,
// to the accumulator. With the two weight rows interleaved in 8-byte pieces
// as the first operand and the two activation rows as the second, four
// SMMLAs give the four exact integer block sums
//   [w0.x0, w0.x1, w1.x0, w1.x1]
// of one 32-element block: each weight and activation byte is loaded once
// for two dot products, twice the work per instruction of SDOT.
//
// Per block the four sums are scaled in float as the reference scales them
// and added to each output's running sum in block order: every output is
// ref::vec_dot_q4_0 / _q8_0 of its row and token, bit for bit (given no
// contraction into fused multiply-adds, see cmake/ArmCrossBuild.cmake).
#include <arm_neon.h>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::i8mm {
namespace {

// The 32 quants of one block of each of two rows, as two 16-byte vectors
// per row: elements 0-15 and 16-31.
struct TwoRows {
  int8x16_t r0_lo, r0_hi, r1_lo, r1_hi;
};

int8x16_t zip_lo64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
int8x16_t zip_hi64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

// [w0.x0, w0.x1, w1.x0, w1.x1] over one block; elements 8k .. 8k+7 of both
// rows form the k-th pair of SMMLA operands.
int32x4_t block_sums_2x2(const TwoRows& w, const TwoRows& x) {
  int32x4_t acc = vdupq_n_s32(0);
  acc = vmmlaq_s32(acc, zip_lo64(w.r0_lo, w.r1_lo), zip_lo64(x.r0_lo, x.r1_lo));  // 0-7
  acc = vmmlaq_s32(acc, zip_hi64(w.r0_lo, w.r1_lo), zip_hi64(x.r0_lo, x.r1_lo));  // 8-15
  acc = vmmlaq_s32(acc, zip_lo64(w.r0_hi, w.r1_hi), zip_lo64(x.r0_hi, x.r1_hi));  // 16-23
  acc = vmmlaq_s32(acc, zip_hi64(w.r0_hi, w.r1_hi), zip_hi64(x.r0_hi, x.r1_hi));  // 24-31
  return acc;
}

TwoRows q8_0_rows(const uint8_t* b0, const uint8_t* b1) {
  const uint8_t* q0 = b0 + offsetof(BlockQ8_0, qs);
  const uint8_t* q1 = b1 + offsetof(BlockQ8_0, qs);
  return {load_s8x16(q0), load_s8x16(q0 + 16), load_s8x16(q1), load_s8x16(q1 + 16)};
}

// Q4_0: element j < 16 is the low nibble of qs[j], j + 16 the high one,
// both minus 8.
TwoRows q4_0_rows(const uint8_t* b0, const uint8_t* b1) {
  const uint8x16_t q0 = vld1q_u8(b0 + offsetof(BlockQ4_0, qs));
  const uint8x16_t q1 = vld1q_u8(b1 + offsetof(BlockQ4_0, qs));
  return {low_nibbles(q0, 8), high_nibbles(q0, 8), low_nibbles(q1, 8), high_nibbles(q1, 8)};
}

template <size_t kWeightBlockBytes, TwoRows (*UnpackWeights)(const uint8_t*, const uint8_t*),
          ScaleOrder kOrder>
void dot_2x2(int64_t n, const uint8_t* w_rows, size_t w_row_bytes, const void* x_rows,
             size_t x_row_bytes, float* y, size_t y_stride) {
  const uint8_t* w0 = w_rows;
  const uint8_t* w1 = w_rows + w_row_bytes;
  const auto* x0 = static_cast<const uint8_t*>(x_rows);
  const uint8_t* x1 = x0 + x_row_bytes;
  constexpr int64_t kXBlock = sizeof(BlockQ8_0);
  constexpr int64_t kWBlock = kWeightBlockBytes;

  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const uint8_t* wb0 = w0 + ib * kWBlock;
    const uint8_t* wb1 = w1 + ib * kWBlock;
    const uint8_t* xb0 = x0 + ib * kXBlock;
    const uint8_t* xb1 = x1 + ib * kXBlock;
    const int32x4_t sums = block_sums_2x2(UnpackWeights(wb0, wb1), q8_0_rows(xb0, xb1));
    // d is the first field of every block; lanes follow the sums' layout.
    const uint16_t dw0 = load_u16(wb0), dw1 = load_u16(wb1);
    const uint16_t dx0 = load_u16(xb0), dx1 = load_u16(xb1);
    const float32x4_t dw = halves_to_f32x4(dw0, dw0, dw1, dw1);
    const float32x4_t dx = halves_to_f32x4(dx0, dx1, dx0, dx1);
    const float32x4_t sumi = vcvtq_f32_s32(sums);
    const ScaledSums s = scale_sums<kOrder>(sumi, dw, dx);
    acc = vfmaq_f32(acc, s.a, s.b);
  }
  y[0] = vgetq_lane_f32(acc, 0);             // w0 . x0
  y[y_stride] = vgetq_lane_f32(acc, 1);      // w0 . x1
  y[1] = vgetq_lane_f32(acc, 2);             // w1 . x0
  y[y_stride + 1] = vgetq_lane_f32(acc, 3);  // w1 . x1
}

}  // namespace

void vec_dot_q4_0_2x2(int64_t n, const uint8_t* w_rows, size_t w_row_bytes, const void* x_rows,
                      size_t x_row_bytes, float* y, size_t y_stride) {
  dot_2x2<sizeof(BlockQ4_0), q4_0_rows, ScaleOrder::kWeightFirst>(n, w_rows, w_row_bytes, x_rows,
                                                                   x_row_bytes, y, y_stride);
}

void vec_dot_q8_0_2x2(int64_t n, const uint8_t* w_rows, size_t w_row_bytes, const void* x_rows,
                      size_t x_row_bytes, float* y, size_t y_stride) {
  dot_2x2<sizeof(BlockQ8_0), q8_0_rows, ScaleOrder::kProductOfScales>(
      n, w_rows, w_row_bytes, x_rows, x_row_bytes, y, y_stride);
}

}  // namespace kazeia::kernels::arm::i8mm
