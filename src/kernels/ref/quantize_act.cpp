// Activation conversion: what ggml's CPU backend does to the input of a
// matrix product before the dot products (its type_traits_cpu from_float of
// the weight's vec_dot_type).
//
// Q8_0 and Q8_1 follow the x86 (AVX/AVX2/AVX-512 builds) path of
// quantize_row_q8_0 / quantize_row_q8_1, which is what produced the golden
// logits: multiplier 127 / amax and round-half-even. ggml's portable
// reference (quantize_row_q8_0_ref) differs: multiplier 1 / d with
// d = amax / 127, and roundf (half away from zero). ARM builds use 1 / d with
// round-half-even. Q8_K has no x86 special case: every CPU build uses
// quantize_row_q8_K_ref, which tensor/ implements as ref::quantize_block_q8_K.
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"
#include "tensor/quant_ref.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::kernels {
namespace ref {
namespace {

// max |x_j| over one block, as the SIMD max reduction computes it (the order
// does not matter for max; NaN inputs are not meaningful activations).
float block_amax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  return amax;
}

// round-half-even to int8 with the saturation of _mm256_cvtps_epi32 followed
// by the packs instructions: out-of-range values clamp, NaN becomes -128
// (cvtps_epi32 gives INT32_MIN, which packs saturate).
int8_t round_even_saturate(float v) {
  if (std::isnan(v)) return -128;
  const float r = std::nearbyint(v);  // default rounding mode: ties to even
  if (r >= 127.0f) return 127;
  if (r <= -128.0f) return -128;
  return static_cast<int8_t>(r);
}

// One Q8_0-style block: fp32 d, the quants, and their integer sum.
float quantize_block_x86(const float* x, int8_t* qs, int* sum) {
  const float amax = block_amax(x, kQK);
  const float d = amax / 127.f;
  const float id = amax != 0.0f ? 127.f / amax : 0.0f;
  int s = 0;
  for (int j = 0; j < kQK; ++j) {
    qs[j] = round_even_saturate(x[j] * id);
    s += qs[j];
  }
  *sum = s;
  return d;
}

}  // namespace

void quantize_row_q8_0_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    BlockQ8_0 b;
    int sum = 0;
    const float d = quantize_block_x86(x + ib * kQK, b.qs, &sum);
    b.d = fp32_to_fp16(d);
    std::memcpy(out + ib * sizeof(BlockQ8_0), &b, sizeof(b));
  }
}

void quantize_row_q8_1_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    BlockQ8_1 b;
    int sum = 0;
    const float d = quantize_block_x86(x + ib * kQK, b.qs, &sum);
    b.d = fp32_to_fp16(d);
    // ggml: GGML_FP32_TO_FP16(d * hsum): the fp32 d, not the rounded one.
    b.s = fp32_to_fp16(d * static_cast<float>(sum));
    std::memcpy(out + ib * sizeof(BlockQ8_1), &b, sizeof(b));
  }
}

void quantize_row_q8_K_act(const float* x, int64_t n, uint8_t* out) {
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    BlockQ8_K b;
    kazeia::ref::quantize_block_q8_K(x + ib * kQK_K, &b);
    std::memcpy(out + ib * sizeof(BlockQ8_K), &b, sizeof(b));
  }
}

}  // namespace ref

TensorType vec_dot_type(TensorType weight_type) {
  switch (weight_type) {
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q8_0:
    case TensorType::IQ4_NL:
    case TensorType::MXFP4:
      return TensorType::Q8_0;
    case TensorType::Q4_1:
    case TensorType::Q5_1:
      return TensorType::Q8_1;
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
    case TensorType::IQ2_XXS:
    case TensorType::IQ2_XS:
    case TensorType::IQ2_S:
    case TensorType::IQ3_XXS:
    case TensorType::IQ3_S:
    case TensorType::IQ1_S:
    case TensorType::IQ1_M:
    case TensorType::IQ4_XS:
    case TensorType::TQ1_0:
    case TensorType::TQ2_0:
      return TensorType::Q8_K;
    default:
      // F32, F16, BF16 multiply in their own type; the rest (integers, F64,
      // the intermediate Q8_1 / Q8_K) are not matrix weights in ggml.
      return weight_type;
  }
}

size_t activation_row_bytes(TensorType vec_dot_type, int64_t n) {
  return type_row_bytes(vec_dot_type, n);
}

Status quantize_activations(TensorType vdt, const float* x, int64_t n, void* out) {
  const TensorTypeTraits& traits = tensor_type_traits(vdt);
  switch (vdt) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q8_0:
    case TensorType::Q8_1:
    case TensorType::Q8_K:
      break;
    default:
      return Unsupported("quantize_activations: " + std::string(traits.name) +
                         " is not an activation (vec-dot) type");
  }
  if (n < 0 || n % traits.block_size != 0) {
    return InvalidArgument("quantize_activations " + std::string(traits.name) + ": n = " +
                           std::to_string(n) + " is not a multiple of the block size " +
                           std::to_string(traits.block_size));
  }
  if (n == 0) return OkStatus();
  if (x == nullptr || out == nullptr) {
    return InvalidArgument("quantize_activations " + std::string(traits.name) + ": null buffer");
  }
  auto* o = static_cast<uint8_t*>(out);
  switch (vdt) {
    case TensorType::F32:
      std::memcpy(o, x, static_cast<size_t>(n) * sizeof(float));
      break;
    case TensorType::F16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_fp16(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case TensorType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case TensorType::Q8_0: ref::quantize_row_q8_0_act(x, n, o); break;
    case TensorType::Q8_1: ref::quantize_row_q8_1_act(x, n, o); break;
    case TensorType::Q8_K: ref::quantize_row_q8_K_act(x, n, o); break;
    default: break;
  }
  return OkStatus();
}

}  // namespace kazeia::kernels
