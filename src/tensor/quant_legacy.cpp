// Reference quantize / dequantize of the 32-element formats: Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0.
//
// The quantizers reproduce llama.cpp's quantize_row_*_ref exactly, including
// their quirks: the scale is computed in fp32 and only stored as fp16 (the
// quants are derived from the fp32 scale, not the rounded one), Q4_0/Q5_0 pick
// d = max / -8 (-16) from the signed value of largest magnitude, rounding is
// "add 0.5 (+ offset), truncate" for the 4/5-bit formats and roundf (half away
// from zero) for Q8_0.
#include <cmath>
#include <cstdint>

#include "tensor/quant.h"
#include "tensor/quant_ref.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::ref {
namespace {

constexpr int kHalf = kQK / 2;

// The signed value of largest magnitude (the first one on ties), 0 for an
// all-zero block.
float signed_absmax(const float* x, int n) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float* min, float* max) {
  *min = 3.402823466e+38f;   // FLT_MAX
  *max = -3.402823466e+38f;
  for (int j = 0; j < n; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// Stores the 5th bit of the 32 quants q[0..31] as ggml does: bit j of the
// little-endian uint32 qh is the high bit of element j.
void pack_q5(const uint8_t* q, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kHalf; ++j) {
    const uint8_t q0 = q[j];
    const uint8_t q1 = q[j + kHalf];
    qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= static_cast<uint32_t>((q0 & 0x10u) >> 4) << j;
    qh |= static_cast<uint32_t>((q1 & 0x10u) >> 4) << (j + kHalf);
  }
  for (int b = 0; b < 4; ++b) qh_bytes[b] = static_cast<uint8_t>(qh >> (8 * b));
}

uint32_t load_qh(const uint8_t* qh_bytes) {
  return static_cast<uint32_t>(qh_bytes[0]) | (static_cast<uint32_t>(qh_bytes[1]) << 8) |
         (static_cast<uint32_t>(qh_bytes[2]) << 16) | (static_cast<uint32_t>(qh_bytes[3]) << 24);
}

int min_int(int a, int b) { return a < b ? a : b; }

// C's (int8_t)f for the values these quantizers produce: truncation toward
// zero, then (for out-of-range values, which finite input never gives) the
// wrap-around x86 compilers produce.
int to_int8(float f) { return static_cast<int8_t>(trunc_to_int(f)); }

}  // namespace

// ---------------------------------------------------------------- quantize

void quantize_block_q4_0(const float* x, BlockQ4_0* y) {
  const float max = signed_absmax(x, kQK);
  const float d = max / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = fp32_to_fp16(d);
  for (int j = 0; j < kHalf; ++j) {
    const float x0 = x[j] * id;
    const float x1 = x[j + kHalf] * id;
    // ggml: MIN(15, (int8_t)(x0 + 8.5f)) stored in a uint8_t.
    const uint8_t q0 = static_cast<uint8_t>(min_int(15, to_int8(x0 + 8.5f)));
    const uint8_t q1 = static_cast<uint8_t>(min_int(15, to_int8(x1 + 8.5f)));
    y->qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

void quantize_block_q4_1(const float* x, BlockQ4_1* y) {
  float min, max;
  min_max(x, kQK, &min, &max);
  const float d = (max - min) / ((1 << 4) - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = fp32_to_fp16(d);
  y->m = fp32_to_fp16(min);
  for (int j = 0; j < kHalf; ++j) {
    const float x0 = (x[j] - min) * id;
    const float x1 = (x[j + kHalf] - min) * id;
    const uint8_t q0 = static_cast<uint8_t>(min_int(15, to_int8(x0 + 0.5f)));
    const uint8_t q1 = static_cast<uint8_t>(min_int(15, to_int8(x1 + 0.5f)));
    y->qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

void quantize_block_q5_0(const float* x, BlockQ5_0* y) {
  const float max = signed_absmax(x, kQK);
  const float d = max / -16;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = fp32_to_fp16(d);
  uint8_t q[kQK];
  for (int j = 0; j < kQK; ++j) {
    const float v = x[j] * id;
    q[j] = static_cast<uint8_t>(min_int(31, to_int8(v + 16.5f)));
  }
  pack_q5(q, y->qs, y->qh);
}

void quantize_block_q5_1(const float* x, BlockQ5_1* y) {
  float min, max;
  min_max(x, kQK, &min, &max);
  const float d = (max - min) / ((1 << 5) - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = fp32_to_fp16(d);
  y->m = fp32_to_fp16(min);
  uint8_t q[kQK];
  for (int j = 0; j < kQK; ++j) {
    const float v = (x[j] - min) * id;
    q[j] = static_cast<uint8_t>(trunc_to_int(v + 0.5f));  // ggml: no clamp here
  }
  pack_q5(q, y->qs, y->qh);
}

void quantize_block_q8_0(const float* x, BlockQ8_0* y) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;  // ggml: MAX(amax, fabsf(v))
  }
  const float d = amax / ((1 << 7) - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = fp32_to_fp16(d);
  for (int j = 0; j < kQK; ++j) {
    y->qs[j] = static_cast<int8_t>(trunc_to_int(std::round(x[j] * id)));
  }
}

// -------------------------------------------------------------- dequantize

void dequantize_block_q4_0(const BlockQ4_0& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  for (int j = 0; j < kHalf; ++j) {
    const int q0 = (b.qs[j] & 0x0F) - 8;
    const int q1 = (b.qs[j] >> 4) - 8;
    y[j] = static_cast<float>(q0) * d;
    y[j + kHalf] = static_cast<float>(q1) * d;
  }
}

void dequantize_block_q4_1(const BlockQ4_1& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float m = fp16_to_fp32(b.m);
  for (int j = 0; j < kHalf; ++j) {
    const int q0 = b.qs[j] & 0x0F;
    const int q1 = b.qs[j] >> 4;
    y[j] = static_cast<float>(q0) * d + m;
    y[j + kHalf] = static_cast<float>(q1) * d + m;
  }
}

void dequantize_block_q5_0(const BlockQ5_0& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < kHalf; ++j) {
    const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int h1 = static_cast<int>((qh >> (j + kHalf)) & 1u) << 4;
    const int q0 = ((b.qs[j] & 0x0F) | h0) - 16;
    const int q1 = ((b.qs[j] >> 4) | h1) - 16;
    y[j] = static_cast<float>(q0) * d;
    y[j + kHalf] = static_cast<float>(q1) * d;
  }
}

void dequantize_block_q5_1(const BlockQ5_1& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float m = fp16_to_fp32(b.m);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < kHalf; ++j) {
    const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int h1 = static_cast<int>((qh >> (j + kHalf)) & 1u) << 4;
    const int q0 = (b.qs[j] & 0x0F) | h0;
    const int q1 = (b.qs[j] >> 4) | h1;
    y[j] = static_cast<float>(q0) * d + m;
    y[j + kHalf] = static_cast<float>(q1) * d + m;
  }
}

void dequantize_block_q8_0(const BlockQ8_0& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
}

}  // namespace kazeia::ref
