// ARM (aarch64) SIMD kernels, exposed per dispatch level for the kernel
// dispatch table to pick from.
//
// Each lookup takes the level the caller runs at (normally cpu_level(), which
// honours KAZEIA_CPU_LEVEL) and returns the best kernel that level allows, or
// nullptr when this file set has none for the type at that level (the caller
// then keeps the scalar reference). Off aarch64 every lookup returns nullptr,
// so dispatch code may call these unconditionally.
//
// What exists, by level (a higher level also offers everything below it):
//   neon:    dots F32, F16, BF16 and their strips (tiles of up to 4 rows x
//            3 tokens); Q4_0, Q5_0, Q8_0 (x Q8_0), Q4_1, Q5_1
//            (x Q8_1), Q2_K .. Q6_K (x Q8_K) with widening 8-bit
//            multiplies; activation quantizers Q8_0, Q8_1, Q8_K
//   dotprod: the same quantized dots with SDOT (vdotq_s32); Q4_0, Q4_1,
//            Q5_0, Q5_1, Q8_0 and Q2_K .. Q6_K strips of 4-row x
//            4-token tiles (SDOT by element, rows in the lanes) for any
//            number of tokens; Q4_0 and Q8_0 prefill on token groups
//            and the float ops (softmax row, activations, norms, gemm_f32)
//   i8mm:    Q4_0, Q8_0, Q4_K and Q5_K strips of 4-row x 4-token tiles
//            of 2x2 SMMLAs for two tokens and more; Q4_0, Q8_0, Q4_K,
//            Q5_K and Q6_K prefill on token groups (activations paired
//            once per call)
//
// Agreement with the reference (src/kernels/ref, tested in
// tests/kernels/arm_*_test.cpp):
//  - integer sums of each block / sub-block are exact, the same integers the
//    reference computes;
//  - F32, F16, BF16, the legacy formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and
//    Q2_K (row dots and strips) also repeat the reference's float operations
//    in its order: bit-identical results, so these types give the same
//    logits at every level. This holds when the compiler does not contract
//    a * b + c into fused multiply-adds (-ffp-contract=off; GCC contracts
//    by default);
//  - Q3_K, Q4_K, Q5_K and Q6_K scale whole super-block sums (the reference keeps
//    eight partial sums), so they may differ by a few ulps of
//    sum |w_i * x_i|; their strips give their row dots' floats exactly;
//  - the activation quantizers write exactly the bytes of
//    ref::quantize_row_*_act (for every input without signalling NaNs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/cpu_features.h"
#include "format/tensor_types.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels {
struct StripArgs;    // kernels/dispatch.h
struct KernelTable;  // kernels/dispatch.h
struct WeightKernels;  // kernels/dispatch.h
}

namespace kazeia::kernels::arm {

// One weight row times one activation row: the signature of
// ref::vec_dot_fn(), a drop-in replacement for it.
using VecDotFn = ref::VecDotFn;

// Converts n floats (a multiple of the block size) to an activation block
// type; the signature of ref::quantize_row_*_act.
using QuantizeActFn = void (*)(const float* x, int64_t n, uint8_t* out);

// A matmul strip (dispatch.h's StripFn: rows [0, n_rows) of a strip times
// every token): from dotprod, 4 x 4 SDOT tiles; at i8mm, Q4_0, Q8_0,
// Q4_K and Q5_K take 4 x 4 tiles of SMMLAs. Any n_rows works; kArmStripRows is a good
// strip_rows. nullptr where no strip exists.
using StripFn = void (*)(const StripArgs& args);
inline constexpr int kArmStripRows = 16;

VecDotFn arm_vec_dot_fn(TensorType weight_type, CpuLevel level);
StripFn arm_strip_fn(TensorType weight_type, CpuLevel level);
// vec_dot_type is the activation type (Q8_0, Q8_1, Q8_K).
QuantizeActFn arm_quantize_act_fn(TensorType vec_dot_type, CpuLevel level);
// Half <-> float rows (every ARM level), nullptr off aarch64.
using HalfToFloatFn = void (*)(const uint16_t* x, int64_t n, float* out);
using FloatToHalfFn = void (*)(const float* x, int64_t n, uint16_t* out);
HalfToFloatFn arm_fp16_to_fp32_fn(CpuLevel level);
FloatToHalfFn arm_fp32_to_fp16_fn(CpuLevel level);
// Sets the table's float ops (softmax row, silu / swiglu / sigmoid_mul,
// conv_silu, the norms' sum of squares and scalings, abs_range, transpose,
// read_stream, the gemm_f32 family) to the NEON ones at every ARM level;
// leaves the table as it is off aarch64 or at the scalar level.
void fill_arm_float_ops(KernelTable& table, CpuLevel level);
// Sets the prefill token-group kernels of a weight type (tile_strip,
// tile_acts, tile_group_bytes, tile_above: dispatch.h) where the level has
// them (dotprod: Q4_0, Q8_0; i8mm: Q4_0, Q8_0, Q4_K, Q5_K, Q6_K); leaves k
// as it is elsewhere.
void fill_arm_token_groups(WeightKernels& k, TensorType weight_type, CpuLevel level);

}  // namespace kazeia::kernels::arm
