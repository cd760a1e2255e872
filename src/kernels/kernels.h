// The kernels layer: the arithmetic every model is built from.
//
// This header is the op API; src/kernels/ref/ holds its scalar reference
// implementation, the path that defines "correct". Later SIMD variants
// (per-ISA files) must agree with it and are tested against it.
//
// Numerics follow llama.cpp's CPU backend (ggml), because the golden logits
// in ../shared/golden were produced by it:
//  - A matrix product first converts each activation row to the weight
//    type's "vec-dot type" (see vec_dot_type()): f16 / bf16 rounding for F16 /
//    BF16 weights, 8-bit blocks (Q8_0, Q8_1, Q8_K) for quantized weights. It
//    then multiplies integer quants block by block and applies the scales in
//    float, in the same grouping as ggml's scalar (generic) dot products.
//  - Reductions in the norms and softmax are summed in double, as ggml's
//    `ggml_float` sums are; results are rounded to float where ggml rounds.
// The remaining differences to llama.cpp are float summation order (ggml's
// SIMD kernels keep 8 or 16 partial sums); they are ~1 ulp per sum.
//
// Shapes follow GGUF: a matrix [n_in, n_out] (ne0 = n_in contiguous) holds
// n_out rows of n_in values; y = W x means y[r] = sum_c W[r][c] * x[c].
// Activations of several tokens are stored token-major: x[t * n_in + c].
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "format/tensor_types.h"
#include "kazeia/status.h"

namespace kazeia {
class ThreadPool;
}

namespace kazeia::kernels {

// ------------------------------------------------------------------ matrices

// A view into a weight matrix in its on-disk (GGUF / ggml block) layout. Owns
// nothing: `data` usually points into a mapped model file.
struct MatrixView {
  TensorType type = TensorType::F32;
  const uint8_t* data = nullptr;  // row r starts at data + r * row_bytes (any alignment)
  int64_t n_in = 0;               // ne0: values per row (columns)
  int64_t n_out = 0;              // ne1: rows
  size_t row_bytes = 0;           // bytes from one row to the next
};

// Builds a view of a dense [n_in, n_out] matrix of `type` at `data`, checking
// what the kernels rely on: a known type, positive dims, n_in a multiple of
// the type's block size, no overflow of n_out * row_bytes, non-null data.
// When data_bytes is given (not SIZE_MAX), the matrix must fit in it.
// The type need not be one matmul supports (get_rows accepts more).
Result<MatrixView> make_matrix_view(TensorType type, const void* data, int64_t n_in,
                                    int64_t n_out, size_t data_bytes = SIZE_MAX);

// The type ggml's CPU backend converts activations to before multiplying
// them by a matrix of `weight_type`:
//   F32 -> F32, F16 -> F16, BF16 -> BF16,
//   Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 -> Q8_0,   Q4_1, Q5_1 -> Q8_1,
//   Q2_K..Q6_K, IQ2_*, IQ3_*, IQ1_*, IQ4_XS, TQ1_0, TQ2_0 -> Q8_K.
// Types ggml cannot multiply (integers, F64, Q8_1, Q8_K) map to themselves.
// This is a fact about ggml; matmul_supported() says what we implement.
TensorType vec_dot_type(TensorType weight_type);

// True for the weight types matmul() implements: F32, F16, BF16, Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
bool matmul_supported(TensorType weight_type);

// Bytes of one activation row of n values converted to `vec_dot_type`
// (F32, F16, BF16, Q8_0, Q8_1 or Q8_K); n must be a multiple of its block.
size_t activation_row_bytes(TensorType vec_dot_type, int64_t n);

// Converts n floats to `vec_dot_type` exactly as ggml's CPU backend does on
// x86 (the machine the golden outputs come from):
//  - F32: copied.  F16 / BF16: rounded to nearest even.
//  - Q8_0 (32-blocks, fp16 d): amax = max|x|, d = amax / 127 stored as fp16,
//    q = round-half-even(x * (127 / amax)) — ggml's AVX2 quantize_row_q8_0.
//    (ggml's portable reference instead uses roundf(x * (1 / d)); the two
//    differ only at exact rounding ties and one-ulp multiplier differences.)
//  - Q8_1: as Q8_0, plus s = fp16(d * sum(q)) with the unrounded fp32 d.
//  - Q8_K (256-blocks, fp32 d): ggml's quantize_row_q8_K_ref — the value of
//    largest magnitude `max` (first on ties), q = nearest_int(-127/max * x)
//    clamped to 127, d = 1 / (-127/max), bsums = sums of 16 quants.
// `out` needs activation_row_bytes(vec_dot_type, n) bytes (any alignment).
Status quantize_activations(TensorType vec_dot_type, const float* x, int64_t n, void* out);

// y[t * n_out + r] = sum_c W[r][c] * x[t * n_in + c] for t < n_tokens, with
// the activation rounding described above (done once per call, not per
// row). Rows are split across `pool` when it is given (may be null: runs on
// the calling thread). The result does not depend on the pool size.
// x and y must not overlap.
Status matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y,
              ThreadPool* pool = nullptr);

// Several matmuls of the same activations (q, k and v; gate and up): job i
// computes jobs[i].y = *jobs[i].w times x, with the bits matmul() gives.
// Matrices that share a weight type and row length share one activation
// conversion and one parallel region (one dispatch, one barrier).
struct MatmulJob {
  const MatrixView* w;
  float* y;
};
Status matmul_many(std::span<const MatmulJob> jobs, const float* x, int64_t n_tokens,
                   ThreadPool* pool = nullptr);

// The SwiGLU feed-forward's first half: out = swiglu(gate times x, up times
// x) (n_tokens x n_out), with the bits of matmul_many({gate, up}) followed
// by swiglu(). Batches of more than a few tokens with matching matrices
// compute each strip of gate and up rows back to back and combine them in
// the thread's cache: the two products never reach memory. `out` must not
// overlap x.
Status matmul_swiglu(const MatrixView& gate, const MatrixView& up, const float* x, int64_t n_tokens, float* out,
                     ThreadPool* pool = nullptr);

// Embedding lookup: out[i * n_in + c] = row ids[i] of `table`, dequantized
// (exactly, as ggml's get_rows). Any type tensor/quant.h can dequantize.
// OutOfRange naming the offending index when an id is outside [0, n_out).
Status get_rows(const MatrixView& table, const int32_t* ids, int64_t n, float* out);

// ------------------------------------------------------- norms and rotary
//
// All of these accept out == x (in place).

// RMSNorm as ggml: sum of x[i]*x[i] (each product rounded to float) in
// double, mean = float(sum / n), scale = 1 / sqrtf(mean + eps),
// out = (x * scale) * w. `w` may be null (no weight).
void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out);

// The same per head: n_heads consecutive vectors of head_dim, one shared
// weight vector of head_dim (qwen3's q_norm / k_norm).
void rms_norm_heads(const float* x, const float* w, int64_t n_heads, int64_t head_dim,
                    float eps, float* out);

// L2 normalisation as ggml_l2_norm: sum of squares in double,
// out = x * (1 / max(sqrtf(float(sum)), eps)).
void l2_norm(const float* x, int64_t n, float eps, float* out);

// Rotary position embedding, in place, on n_heads consecutive vectors of
// head_dim at position `pos`. Only the first n_rot dims of each head rotate
// (n_rot even, 0 < n_rot <= head_dim); the rest are left untouched.
// Angles as ggml_rope_cache_init: theta_0 = float(pos), theta_{i+1} =
// theta_i * powf(freq_base, -2 / n_rot) (repeated float multiplication, not
// pow per pair); pair i uses cosf(theta_i), sinf(theta_i).
//  - rope_neox pairs dims (i, i + n_rot/2)  (GPT-NeoX; qwen3, qwen35)
//  - rope_norm pairs dims (2i, 2i + 1)      (original; llama)
// out' = x0 cos - x1 sin, x1' = x0 sin + x1 cos.
Status rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
                 float freq_base);
Status rope_norm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
                 float freq_base);
// The same two steps apart, for callers that rotate many heads at one
// position (a model's attention layers: the angles cost more than the
// rotation of a few heads): the n_rot / 2 angles' cos and sin, then the
// rotation with them. rope_neox(.., pos, base) is rope_angles(pos, ..)
// followed by rope_neox_angles, bit for bit.
void rope_angles(int64_t pos, int64_t n_rot, float freq_base, float* cos_out, float* sin_out);
Status rope_neox_angles(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_theta,
                        const float* sin_theta);
Status rope_norm_angles(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_theta,
                        const float* sin_theta);

// Softmax as ggml_soft_max_ext: w = x * scale (+ mask[i] when mask is not
// null), m = max(w), e_i = expf(w_i - m), sum in double,
// out = e * float(1 / sum). A mask entry of -INFINITY excludes a position;
// at least one position must stay finite.
void softmax(const float* x, int64_t n, float* out);

// C += A * B for row-major float matrices (m x k times k x n; leading
// dimensions in floats): each C element is a chain of fused multiply-adds
// over k in order, so the result does not depend on the kernel variant or
// on how a caller splits m and n. The attention tiles' matrix products.
void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                  float* c, size_t ldc);
// C = A * B: gemm_f32_acc onto a zeroed C, without the zeroing pass (the
// same bits).
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc);
// gemm_f32_acc / gemm_f32 with B in IEEE half (the f16 KV cache's tiles):
// the same bits as converting B with fp16_to_fp32_row first, without the
// converted copy (a decoded token's attention reads each tile once).
void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc);
void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc);
// C = scale * C + A * B: each chain starts from the rounded scale * C[i][j]
// (the same bits as scaling C first, then gemm_f32_acc), and the smallest
// and largest |C| of the result as abs_range gives them, taken while C is
// in registers. (The gated delta rule's state update, S = decay S + K D.)
void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max);

// One row of an online softmax over a tile of n scores (the first `valid`
// real): p[j] = exp(s[j] * scale - m_new) with m_new = max(*m, scaled
// scores), 0 past `valid`; *alpha = exp(*m - m_new); *m = m_new; returns
// the sum of p. The exp is a fixed polynomial (~2e-7 relative), the same
// bits in every kernel variant.
float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p);
void softmax_ext(const float* x, const float* mask, int64_t n, float scale, float* out);

// ---------------------------------------------------------------- elementwise
//
// Scalar ggml formulas (the portable fallbacks of ggml's vectorised ones).
// Every output may alias an input.

// Sums a buffer's 64-bit words (mod 2^64) with the widest loads this CPU
// has: the memory-bandwidth probe of `kazeia bench --bandwidth`.
uint64_t read_stream(const uint8_t* p, size_t bytes);

// A hint: fetch [p, p + bytes) into the second-level cache (x86
// prefetcht1) ahead of its use, for reads the hardware prefetchers would
// reach late (a new stream a few pages long). Never faults, whatever the
// address. Into L2, not L1: a burst of first-level prefetches holds the
// core's few line-fill buffers and stalls it until they drain. The empty
// volatile asm keeps the loop: GCC deleted loops of nothing but prefetches
// (the attention's, here, before it was added).
inline void prefetch_to_l2(const void* p, size_t bytes) {
  const auto* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) {
    __builtin_prefetch(c + off, 0, 2);
    asm volatile("");
  }
}

// Reads one byte of every cache line of [a, a + a_bytes) and of
// [b, b + b_bytes), the two walked side by side, so that what reads them
// next finds them in cache. Demand loads, not prefetches: a decoded token's
// attention streamed its K / V tiles from memory ~18 % faster after this
// (Zen 2, 2 threads, 2048 cached positions: 21 against 17.6 GB/s), where
// software prefetches of the same lines, in a burst or spread over the
// products, gained nothing. Both ranges must be readable.
inline void read_into_cache(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* pa = static_cast<const volatile unsigned char*>(a);
  const auto* pb = static_cast<const volatile unsigned char*>(b);
  const size_t n = a_bytes > b_bytes ? a_bytes : b_bytes;
  for (size_t off = 0; off < n; off += 64) {
    if (off < a_bytes) (void)pa[off];
    if (off < b_bytes) (void)pb[off];
  }
  // The last line of a range that does not start on a line.
  if (a_bytes != 0) (void)pa[a_bytes - 1];
  if (b_bytes != 0) (void)pb[b_bytes - 1];
}

// IEEE half <-> float over a row (the f16 KV cache): exact one way, round to
// nearest even the other, the same bits on every ISA.
void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out);
void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out);

// silu and swiglu use the kernels' exp (exp_approx, ~2e-7 relative) and
// dispatch to SIMD variants with the same bits; out may alias the inputs.
void silu(const float* x, int64_t n, float* out);                    // x / (1 + exp(-x))
void swiglu(const float* gate, const float* up, int64_t n, float* out);  // silu(gate) * up
void sigmoid_mul(const float* gate, const float* x, int64_t n, float* out);  // x / (1 + exp(-gate))
// min and max of |x[i]| as IEEE bit patterns (ref::abs_range: a NaN ranks
// above infinity); n = 0 gives min = inf, max = 0.
void abs_range(const float* x, int64_t n, float* min, float* max);
// Causal depthwise conv + silu over a row of n channels (ref::conv_silu):
// out[c] = silu(sum over k, in order, of taps[k * taps_stride + c] * rows[k][c]).
void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out);
void sigmoid(const float* x, int64_t n, float* out);                 // 1 / (1 + expf(-x))
void softplus(const float* x, int64_t n, float* out);                // x > 20 ? x : logf(1 + expf(x))
void add(const float* a, const float* b, int64_t n, float* out);     // a + b
void mul(const float* a, const float* b, int64_t n, float* out);     // a * b
void scale(const float* x, float s, int64_t n, float* out);          // x * s
void scale_add(const float* x, float s, const float* y, int64_t n, float* out);  // x * s + y, no fma
// dst[x * ld_dst + j] = src[j * ld_src + x] for j < rows, x < cols.
void transpose_f32(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst);

}  // namespace kazeia::kernels
