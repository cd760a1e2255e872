// The per-level ARM kernels behind arm_kernels.h. Internal to src/kernels/arm:
// each namespace's functions live in source files compiled with that level's
// -march flags (cmake/KazeiaLayer.cmake: *_neon.cpp baseline, *_dotprod.cpp
// +dotprod+fp16, *_i8mm.cpp +i8mm), so one must only be called when the CPU
// has the level. arm_kernels.cpp is the only caller.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kazeia::kernels {
struct StripArgs;
}

namespace kazeia::kernels::arm {

namespace neon {
float vec_dot_f32(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_f16(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_bf16(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row);
void quantize_row_q8_0_act(const float* x, int64_t n, uint8_t* out);
void quantize_row_q8_1_act(const float* x, int64_t n, uint8_t* out);
void quantize_row_q8_K_act(const float* x, int64_t n, uint8_t* out);
void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out);
void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out);
}  // namespace neon

namespace dotprod {
float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row);
float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row);
// Strips of 4-row x 4-token SDOT tiles (strip_dotprod.cpp,
// strip_kquants_dotprod.cpp).
void strip_q4_0(const StripArgs& a);
void strip_q8_0(const StripArgs& a);
void strip_q4_K(const StripArgs& a);
void strip_q5_K(const StripArgs& a);
void strip_q6_K(const StripArgs& a);
}  // namespace dotprod

namespace i8mm {
// Strips of 4-row x 4-token tiles of 2x2 SMMLAs (strip_i8mm.cpp); one
// token takes dotprod's.
void strip_q4_0(const StripArgs& a);
void strip_q8_0(const StripArgs& a);
}  // namespace i8mm

}  // namespace kazeia::kernels::arm
