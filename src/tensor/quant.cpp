// Row-level dispatch of the reference quantizers / dequantizers.
//
// Blocks are copied in and out with memcpy, so src / dst may have any
// alignment (a row inside a mapped GGUF file is only byte-aligned in general).
#include "tensor/quant.h"

#include <cstring>
#include <string>

#include "tensor/blocks.h"
#include "tensor/quant_ref.h"

namespace kazeia {
namespace {

// Runs fn(x, &block) for each block of a row and stores the blocks.
template <typename Block, typename Fn>
void quantize_blocks(const float* src, void* dst, int64_t n, int block_size, Fn fn) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / block_size; ++i) {
    Block b;
    std::memset(&b, 0, sizeof(b));
    fn(src + i * block_size, &b);
    std::memcpy(out + i * sizeof(Block), &b, sizeof(Block));
  }
}

template <typename Block, typename Fn>
void dequantize_blocks(const void* src, float* dst, int64_t n, int block_size, Fn fn) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n / block_size; ++i) {
    Block b;
    std::memcpy(&b, in + i * sizeof(Block), sizeof(Block));
    fn(b, dst + i * block_size);
  }
}

Status check_row(TensorType type, const void* a, const void* b, int64_t n, const char* what) {
  const TensorTypeTraits& t = tensor_type_traits(type);
  if (n < 0 || n % t.block_size != 0) {
    return InvalidArgument(std::string(what) + " " + std::string(t.name) + ": n = " +
                           std::to_string(n) +
                           " is not a non-negative multiple of the block size " +
                           std::to_string(t.block_size));
  }
  if (n > 0 && (a == nullptr || b == nullptr)) {
    return InvalidArgument(std::string(what) + " " + std::string(t.name) +
                           ": null buffer for n = " + std::to_string(n));
  }
  return OkStatus();
}

}  // namespace

bool can_dequantize(TensorType type) {
  switch (type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
    case TensorType::Q8_K:
      return true;
    default:
      return false;
  }
}

bool can_quantize(TensorType type) {
  // The same set: every format we read we can also write.
  return can_dequantize(type);
}

size_t type_row_bytes(TensorType type, int64_t n) {
  if (n <= 0) return 0;
  const TensorTypeTraits& t = tensor_type_traits(type);
  return static_cast<size_t>(n / t.block_size) * t.block_bytes;
}

Status dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
  if (!can_dequantize(type)) {
    return Unsupported("dequantize: no reference dequantizer for type " +
                       std::string(tensor_type_name(type)));
  }
  KZ_RETURN_IF_ERROR(check_row(type, src, dst, n, "dequantize"));
  const auto* in = static_cast<const uint8_t*>(src);
  switch (type) {
    case TensorType::F32:
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      break;
    case TensorType::F16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = fp16_to_fp32(h);
      }
      break;
    case TensorType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = bf16_to_fp32(h);
      }
      break;
    case TensorType::Q4_0:
      dequantize_blocks<BlockQ4_0>(src, dst, n, kQK, ref::dequantize_block_q4_0);
      break;
    case TensorType::Q4_1:
      dequantize_blocks<BlockQ4_1>(src, dst, n, kQK, ref::dequantize_block_q4_1);
      break;
    case TensorType::Q5_0:
      dequantize_blocks<BlockQ5_0>(src, dst, n, kQK, ref::dequantize_block_q5_0);
      break;
    case TensorType::Q5_1:
      dequantize_blocks<BlockQ5_1>(src, dst, n, kQK, ref::dequantize_block_q5_1);
      break;
    case TensorType::Q8_0:
      dequantize_blocks<BlockQ8_0>(src, dst, n, kQK, ref::dequantize_block_q8_0);
      break;
    case TensorType::Q2_K:
      dequantize_blocks<BlockQ2_K>(src, dst, n, kQK_K, ref::dequantize_block_q2_K);
      break;
    case TensorType::Q3_K:
      dequantize_blocks<BlockQ3_K>(src, dst, n, kQK_K, ref::dequantize_block_q3_K);
      break;
    case TensorType::Q4_K:
      dequantize_blocks<BlockQ4_K>(src, dst, n, kQK_K, ref::dequantize_block_q4_K);
      break;
    case TensorType::Q5_K:
      dequantize_blocks<BlockQ5_K>(src, dst, n, kQK_K, ref::dequantize_block_q5_K);
      break;
    case TensorType::Q6_K:
      dequantize_blocks<BlockQ6_K>(src, dst, n, kQK_K, ref::dequantize_block_q6_K);
      break;
    case TensorType::Q8_K:
      dequantize_blocks<BlockQ8_K>(src, dst, n, kQK_K, ref::dequantize_block_q8_K);
      break;
    default:
      return Internal("dequantize: type " + std::string(tensor_type_name(type)) +
                      " accepted by can_dequantize() but not dispatched");
  }
  return OkStatus();
}

Status quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  if (!can_quantize(type)) {
    return Unsupported("quantize: no reference quantizer for type " +
                       std::string(tensor_type_name(type)));
  }
  KZ_RETURN_IF_ERROR(check_row(type, src, dst, n, "quantize"));
  auto* out = static_cast<uint8_t*>(dst);
  switch (type) {
    case TensorType::F32:
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      break;
    case TensorType::F16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_fp16(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      break;
    case TensorType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      break;
    case TensorType::Q4_0:
      quantize_blocks<BlockQ4_0>(src, dst, n, kQK, ref::quantize_block_q4_0);
      break;
    case TensorType::Q4_1:
      quantize_blocks<BlockQ4_1>(src, dst, n, kQK, ref::quantize_block_q4_1);
      break;
    case TensorType::Q5_0:
      quantize_blocks<BlockQ5_0>(src, dst, n, kQK, ref::quantize_block_q5_0);
      break;
    case TensorType::Q5_1:
      quantize_blocks<BlockQ5_1>(src, dst, n, kQK, ref::quantize_block_q5_1);
      break;
    case TensorType::Q8_0:
      quantize_blocks<BlockQ8_0>(src, dst, n, kQK, ref::quantize_block_q8_0);
      break;
    case TensorType::Q2_K:
      quantize_blocks<BlockQ2_K>(src, dst, n, kQK_K, ref::quantize_block_q2_K);
      break;
    case TensorType::Q3_K:
      quantize_blocks<BlockQ3_K>(src, dst, n, kQK_K, ref::quantize_block_q3_K);
      break;
    case TensorType::Q4_K:
      quantize_blocks<BlockQ4_K>(src, dst, n, kQK_K, ref::quantize_block_q4_K);
      break;
    case TensorType::Q5_K:
      quantize_blocks<BlockQ5_K>(src, dst, n, kQK_K, ref::quantize_block_q5_K);
      break;
    case TensorType::Q6_K:
      quantize_blocks<BlockQ6_K>(src, dst, n, kQK_K, ref::quantize_block_q6_K);
      break;
    case TensorType::Q8_K:
      quantize_blocks<BlockQ8_K>(src, dst, n, kQK_K, ref::quantize_block_q8_K);
      break;
    default:
      return Internal("quantize: type " + std::string(tensor_type_name(type)) +
                      " accepted by can_quantize() but not dispatched");
  }
  return OkStatus();
}

}  // namespace kazeia
