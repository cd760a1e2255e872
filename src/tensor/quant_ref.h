// Typed, per-block reference quantizers and dequantizers (scalar). The
// row-level API in tensor/quant.h dispatches to these; SIMD kernels can test
// one block at a time against them.
//
// Each quantize_block_* follows the llama.cpp reference quantizer of the same
// type without importance matrix (quantize_row_*_ref in ggml-quants.c)
// operation for operation, so its output is byte-identical to llama-quantize.
// Input must be finite; non-finite input gives unspecified (but defined)
// bytes.
#pragma once

#include <bit>
#include <cstdint>

#include "tensor/blocks.h"

namespace kazeia::ref {

// Round to nearest, ties to even, by the float magic-number trick of ggml's
// nearest_int (valid for |x| <= 4194303; larger values give garbage, as in ggml).
inline int nearest_int(float x) {
  const float biased = x + 12582912.f;  // 1.5 * 2^23
  const uint32_t bits = std::bit_cast<uint32_t>(biased);
  return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

// C's float -> int conversion (truncation toward zero) for values in int
// range; 0 for NaN or out of range instead of undefined behaviour.
inline int trunc_to_int(float x) {
  if (x > -2147483648.f && x < 2147483648.f) return static_cast<int>(x);
  return 0;
}

void quantize_block_q4_0(const float* x, BlockQ4_0* y);
void quantize_block_q4_1(const float* x, BlockQ4_1* y);
void quantize_block_q5_0(const float* x, BlockQ5_0* y);
void quantize_block_q5_1(const float* x, BlockQ5_1* y);
void quantize_block_q8_0(const float* x, BlockQ8_0* y);
void quantize_block_q2_K(const float* x, BlockQ2_K* y);
void quantize_block_q3_K(const float* x, BlockQ3_K* y);
void quantize_block_q4_K(const float* x, BlockQ4_K* y);
void quantize_block_q5_K(const float* x, BlockQ5_K* y);
void quantize_block_q6_K(const float* x, BlockQ6_K* y);
void quantize_block_q8_K(const float* x, BlockQ8_K* y);

void dequantize_block_q4_0(const BlockQ4_0& b, float* y);
void dequantize_block_q4_1(const BlockQ4_1& b, float* y);
void dequantize_block_q5_0(const BlockQ5_0& b, float* y);
void dequantize_block_q5_1(const BlockQ5_1& b, float* y);
void dequantize_block_q8_0(const BlockQ8_0& b, float* y);
void dequantize_block_q2_K(const BlockQ2_K& b, float* y);
void dequantize_block_q3_K(const BlockQ3_K& b, float* y);
void dequantize_block_q4_K(const BlockQ4_K& b, float* y);
void dequantize_block_q5_K(const BlockQ5_K& b, float* y);
void dequantize_block_q6_K(const BlockQ6_K& b, float* y);
void dequantize_block_q8_K(const BlockQ8_K& b, float* y);

}  // namespace kazeia::ref
