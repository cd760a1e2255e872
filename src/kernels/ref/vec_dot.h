// Scalar reference dot products: one weight row times one activation row
// that quantize_activations() already converted to vec_dot_type(weight).
//
// These are the units SIMD kernels replace, and the units their tests
// compare against: same signature, same result up to float summation order.
//
// Each follows the float grouping of ggml's generic ggml_vec_dot_*_q8_*
// (integer sums per block or sub-block, exact; scales applied in float in
// ggml's order), so the reference is as close to llama.cpp as a scalar loop
// can be. Where ggml keeps several float partial sums, so do we.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/tensor_types.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::ref {

// ggml's block_q8_1: the activation format for Q4_1 / Q5_1 weights.
// value = d * qs[i]; s = d * sum(qs) (both fp16), which carries the weights'
// offset m: sum((q_w * d_w + m) * x) = d_w * d * sum(q_w * q) + m * s.
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 36);

// w_row: n values of the weight type in their on-disk layout (any
// alignment). x_row: n values of the vec-dot type as written by
// quantize_activations (alignment of its block type). n is a multiple of the
// weight type's block size.
using VecDotFn = float (*)(int64_t n, const uint8_t* w_row, const void* x_row);

// The reference dot product for a weight type, nullptr when unsupported.
VecDotFn vec_dot_fn(TensorType weight_type);

float vec_dot_f32(int64_t n, const uint8_t* w_row, const void* x_row);   // x: f32
float vec_dot_f16(int64_t n, const uint8_t* w_row, const void* x_row);   // x: f16
float vec_dot_bf16(int64_t n, const uint8_t* w_row, const void* x_row);  // x: bf16
float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_0
float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_1
float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_0
float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_1
float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_0
float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_K
float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_K
float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_K
float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_K
float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row);  // x: Q8_K

// Activation quantizers (ggml's x86 runtime behaviour, see kernels.h).
void quantize_row_q8_0_act(const float* x, int64_t n, uint8_t* out);
void quantize_row_q8_1_act(const float* x, int64_t n, uint8_t* out);
void quantize_row_q8_K_act(const float* x, int64_t n, uint8_t* out);

// Float sum of a[i] * b[i] with kFloatLanes independent partial sums (lane
// i % kFloatLanes), combined pairwise at the end. Deterministic, and a shape
// the compiler vectorises without -ffast-math.
inline constexpr int kFloatLanes = 16;
float dot_f32_lanes(const float* a, const float* b, int64_t n);

// C[i][j] = fma(A[i][k], B[k][j], C[i][j]) for k = 0 .. k - 1 in order
// (row-major, leading dimensions in floats): C += A * B.
void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                  float* c, size_t ldc);
// C = A * B: C's m x n entries set to 0, then gemm_f32_acc (the same chains
// from 0; entries between rows, past n, untouched).
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc);
// gemm_f32_acc / gemm_f32 with B in IEEE half (the f16 KV cache's tiles),
// each B value converted exactly to float: the same bits as converting B
// first (fp16_to_fp32_row), then the float product.
void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc);
void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc);
// C = scale * C + A * B (C's m x n entries scaled, each product rounded,
// then gemm_f32_acc), and the abs_range of the new m x n entries.
void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max);

// exp(x) to ~2e-7 relative by a fixed sequence of float operations (0 for
// x <= -87, NaN included); SIMD variants repeat it lane by lane.
float exp_approx(float x);

// The sum (mod 2^64) of the buffer's little-endian 64-bit words, the last
// bytes % 8 ignored: a read of every byte that the compiler cannot drop,
// the probe of `kazeia bench --bandwidth`.
uint64_t read_stream(const uint8_t* p, size_t bytes);

// sum of x[i] * x[i] for RMSNorm / L2 norm: each square rounded to float,
// added in double into eight partial sums (element i into sum i % 8), those
// added pairwise at the end (ref/norm_rope.cpp says why).
double sum_squares(const float* x, int64_t n);

// The smallest and the largest |x[i]| (n >= 1), compared as IEEE bit
// patterns with the sign cleared: the float order for numbers, and a NaN
// ranks above infinity (so max is a NaN when x holds one). Exact, so every
// variant gives the same result.
void abs_range(const float* x, int64_t n, float* min, float* max);
// out[i] = x[i] * s (out may be x). One rounding per element, so every
// variant gives the same bits.
void scale(const float* x, float s, int64_t n, float* out);
// out[i] = (x[i] * s) * w[i] (out may be x): RMSNorm's scaling, ggml's two
// roundings in its order.
void scale_mul(const float* x, float s, const float* w, int64_t n, float* out);
// out[i] = x[i] * s + y[i] (out may be x or y): two roundings, no fused
// multiply-add, so every variant gives the same bits.
void scale_add(const float* x, float s, const float* y, int64_t n, float* out);
// dst[x * ld_dst + j] = src[j * ld_src + x] for j < rows, x < cols (no
// overlap between src and dst; entries between dst's rows untouched).
void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst);
// IEEE half <-> float over a row, with tensor/quant.h's scalar conversions
// (round to nearest even, F16C's rules for NaN, infinity and subnormals).
void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out);
void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out);

// silu(x) = x / (1 + exp_approx(-x)); swiglu = silu(gate) * up. The
// forward passes' activations (kernels::silu / swiglu dispatch to these or
// a bit-identical SIMD variant).
void silu_approx(const float* x, int64_t n, float* out);
void swiglu_approx(const float* gate, const float* up, int64_t n, float* out);
// x * sigmoid(gate) as x / (1 + exp_approx(-gate)): gated attention's
// output gate (one rounding fewer than x * (1 / (1 + e))).
void sigmoid_mul_approx(const float* gate, const float* x, int64_t n, float* out);
// swiglu_approx on n_rows rows of `width` values (inputs ld_in apart,
// outputs ld_out apart). `stream` is a hint for the SIMD variants
// (non-temporal stores of whole lines); no effect here.
void swiglu_rows(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                 size_t ld_out, bool stream);

// A causal depthwise conv over one row of n channels, then silu (Gated
// DeltaNet's conv1d): out[c] = silu_approx(0 + taps[0][c] * rows[0][c] +
// .. + taps[K-1][c] * rows[K-1][c]), summed left to right, each product and
// sum rounded (no fma); tap k's row at taps + k * taps_stride. out must not
// alias the rows.
void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out);

// One row of an online softmax over a tile of n scores s (first `valid`
// real, the rest masked): p[j] = exp_approx(s[j] * scale - m_new) with
// m_new = max(*m, max_j s[j] * scale), p[j] = 0 for j >= valid;
// *alpha = exp_approx(*m - m_new) (0 when *m was -inf); *m = m_new.
// Returns sum_j p[j], element j summed in lane j % 16, lanes pairwise.
float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p);

}  // namespace kazeia::kernels::ref
