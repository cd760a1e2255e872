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
// Strips of F32 / F16 / BF16 rows (float_rows_neon.cpp, beside the row
// dots): tiles of rows x tokens, the row dots' bits.
void strip_f32(const StripArgs& a);
void strip_f16(const StripArgs& a);
void strip_bf16(const StripArgs& a);
// The kernel table's float ops (float_ops_neon.cpp, gemm_f32_neon.cpp):
// the references' signatures and bits.
float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p);
void silu(const float* x, int64_t n, float* out);
void swiglu(const float* gate, const float* up, int64_t n, float* out);
void sigmoid_mul(const float* gate, const float* x, int64_t n, float* out);
void swiglu_rows(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                 size_t ld_out, bool stream);
void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out);
double sum_squares(const float* x, int64_t n);
void abs_range(const float* x, int64_t n, float* min, float* max);
void scale(const float* x, float s, int64_t n, float* out);
void scale_mul(const float* x, float s, const float* w, int64_t n, float* out);
void scale_add(const float* x, float s, const float* y, int64_t n, float* out);
void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst);
uint64_t read_stream(const uint8_t* p, size_t bytes);
void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                  size_t ldc);
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc);
void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc);
void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc);
void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max);
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
void strip_q4_1(const StripArgs& a);
void strip_q5_0(const StripArgs& a);
void strip_q5_1(const StripArgs& a);
void strip_q4_K(const StripArgs& a);
void strip_q5_K(const StripArgs& a);
void strip_q6_K(const StripArgs& a);
void strip_q2_K(const StripArgs& a);
void strip_q3_K(const StripArgs& a);
// Q4_0 / Q8_0 prefill on token groups of 16 (strip_dotprod.cpp): the
// WeightKernels tile_strip, tile_group_bytes and tile_acts below i8mm.
void group_strip_q4_0(const StripArgs& a);
void group_strip_q8_0(const StripArgs& a);
size_t token_group_bytes_q4_0(int64_t n_in);
size_t token_group_bytes_q8_0(int64_t n_in);
void build_token_group_q4_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
void build_token_group_q8_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
}  // namespace dotprod

namespace i8mm {
// Strips of 4-row x 4-token tiles of 2x2 SMMLAs (strip_i8mm.cpp); one
// token takes dotprod's.
void strip_q4_0(const StripArgs& a);
void strip_q8_0(const StripArgs& a);
void strip_q4_K(const StripArgs& a);
void strip_q5_K(const StripArgs& a);
// Q4_0 / Q8_0 / Q4_K / Q5_K / Q6_K prefill on token groups of 16
// (token_groups_i8mm.cpp): the WeightKernels tile_strip, tile_group_bytes
// and tile_acts.
void group_strip_q4_0(const StripArgs& a);
void group_strip_q8_0(const StripArgs& a);
void group_strip_q4_K(const StripArgs& a);
void group_strip_q5_K(const StripArgs& a);
void group_strip_q6_K(const StripArgs& a);
size_t token_group_bytes_q4_0(int64_t n_in);
size_t token_group_bytes_q8_0(int64_t n_in);
size_t token_group_bytes_k(int64_t n_in);  // Q4_K and Q5_K
size_t token_group_bytes_q6_K(int64_t n_in);
void build_token_group_q4_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
void build_token_group_q8_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
void build_token_group_k(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
void build_token_group_q6_K(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
}  // namespace i8mm

}  // namespace kazeia::kernels::arm
