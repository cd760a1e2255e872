// Quantized row dots for plain NEON (every aarch64 CPU): the 8-bit products
// are formed with widening multiplies (SMULL, 16-bit results) and added in
// pairs into 32-bit lanes (SADALP). Used when the CPU lacks the dot-product
// extension; vec_dot_int8_dotprod.cpp is the same code with SDOT.
#include <arm_neon.h>

#include "kernels/arm/int8_dot_kernels.h"
#include "kernels/arm/level_kernels.h"

namespace kazeia::kernels::arm::neon {
namespace {

struct WideningDot {
  // A product of two int8 values fits in int16 (|p| <= 16384), and SADALP
  // widens before adding, so nothing overflows.
  static int32x4_t accumulate(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
  }
};

}  // namespace

float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<WideningDot, Q4_0Format>(n, w_row, x_row);
}

float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<WideningDot, Q4_1Format>(n, w_row, x_row);
}

float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<WideningDot, Q5_0Format>(n, w_row, x_row);
}

float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<WideningDot, Q5_1Format>(n, w_row, x_row);
}

float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<WideningDot, Q8_0Format>(n, w_row, x_row);
}

float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q2_K<WideningDot>(n, w_row, x_row);
}

float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q3_K<WideningDot>(n, w_row, x_row);
}

float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q4_K<WideningDot>(n, w_row, x_row);
}

float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q5_K<WideningDot>(n, w_row, x_row);
}

float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q6_K<WideningDot>(n, w_row, x_row);
}

}  // namespace kazeia::kernels::arm::neon
