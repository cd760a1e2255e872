// Quantized row dots with the Armv8.2 dot-product extension: SDOT adds four
// 8-bit products into each 32-bit lane in one instruction (compiled with
// +dotprod, see cmake/KazeiaLayer.cmake; only called when the CPU has it).
#include <arm_neon.h>

#include "kernels/arm/int8_dot_kernels.h"
#include "kernels/arm/level_kernels.h"

namespace kazeia::kernels::arm::dotprod {
namespace {

struct SdotDot {
  static int32x4_t accumulate(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
  }
};

}  // namespace

float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<SdotDot, Q4_0Format>(n, w_row, x_row);
}

float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<SdotDot, Q4_1Format>(n, w_row, x_row);
}

float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<SdotDot, Q5_0Format>(n, w_row, x_row);
}

float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<SdotDot, Q5_1Format>(n, w_row, x_row);
}

float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_legacy<SdotDot, Q8_0Format>(n, w_row, x_row);
}

float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q2_K<SdotDot>(n, w_row, x_row);
}

float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q3_K<SdotDot>(n, w_row, x_row);
}

float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q4_K<SdotDot>(n, w_row, x_row);
}

float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q5_K<SdotDot>(n, w_row, x_row);
}

float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_q6_K<SdotDot>(n, w_row, x_row);
}

}  // namespace kazeia::kernels::arm::dotprod
