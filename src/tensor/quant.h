// Reference (scalar) quantization and dequantization, byte-identical to the
// GGUF/ggml block layouts. These are the ground truth that every SIMD kernel
// is tested against; they favour clarity over speed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/tensor_types.h"
#include "kazeia/status.h"

namespace kazeia {

// IEEE half and bfloat16 conversions (round to nearest even; NaN kept NaN).
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

bool can_dequantize(TensorType type);
bool can_quantize(TensorType type);

// Bytes of n elements of the type; n must be a multiple of its block size
// (the caller checks, e.g. with tensor_type_traits()).
size_t type_row_bytes(TensorType type, int64_t n);

// Dequantize n elements (a multiple of the block size) from src into dst.
// Unsupported on a type can_dequantize() refuses or a bad n.
Status dequantize_row(TensorType type, const void* src, float* dst, int64_t n);

// Quantize n elements (a multiple of the block size) from src into dst, the
// way llama.cpp's reference quantizers do (no importance matrix).
Status quantize_row(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace kazeia
