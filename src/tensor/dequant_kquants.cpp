// Reference dequantizers of the K-quant super-blocks, in ggml's element order
// and with ggml's float evaluation order (so results are bit-identical to
// dequantize_row_* in ggml-quants.c and to gguf-py's numpy dequantizers):
//   Q2_K: (d * sc) * q - (dmin * m)      Q3_K: (d * (sc - 32)) * q
//   Q4_K/Q5_K: (d * sc) * q - (dmin * m) Q6_K: (d * sc) * (q - 32)
//   Q8_K: d * q
#include <cstdint>

#include "tensor/quant.h"
#include "tensor/quant_ref.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::ref {

void dequantize_block_q2_K(const BlockQ2_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  int is = 0;
  for (int half = 0; half < 2; ++half) {
    const uint8_t* q = b.qs + 32 * half;
    for (int pass = 0; pass < 4; ++pass) {
      const int shift = 2 * pass;
      for (int part = 0; part < 2; ++part) {  // two sub-blocks of 16 per pass
        const uint8_t sc = b.scales[is++];
        const float dl = d * static_cast<float>(sc & 0xF);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          const int v = (q[16 * part + l] >> shift) & 3;
          *y++ = dl * static_cast<float>(v) - ml;
        }
      }
    }
  }
}

namespace {

// The 16 signed 6-bit scales of a Q3_K block, already minus 32.
void unpack_q3_scales(const uint8_t packed[kKScaleSize], int scales[16]) {
  for (int s = 0; s < 16; ++s) scales[s] = q3_scale(packed, s) - 32;
}

}  // namespace

void dequantize_block_q3_K(const BlockQ3_K& b, float* y) {
  const float d_all = fp16_to_fp32(b.d);
  int scales[16];
  unpack_q3_scales(b.scales, scales);
  int is = 0;
  uint8_t m = 1;  // hmask bit of the current 32 elements
  for (int half = 0; half < 2; ++half) {
    const uint8_t* q = b.qs + 32 * half;
    for (int pass = 0; pass < 4; ++pass) {
      const int shift = 2 * pass;
      for (int part = 0; part < 2; ++part) {
        const float dl = d_all * static_cast<float>(scales[is++]);
        for (int l = 0; l < 16; ++l) {
          const int low = (q[16 * part + l] >> shift) & 3;
          const int v = low - ((b.hmask[16 * part + l] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(v);
        }
      }
      m = static_cast<uint8_t>(m << 1);
    }
  }
}

void dequantize_block_q4_K(const BlockQ4_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  const uint8_t* q = b.qs;
  for (int chunk = 0; chunk < 4; ++chunk) {  // 64 elements: sub-blocks 2c, 2c + 1
    uint8_t sc, m;
    scale_min_k4(2 * chunk, b.scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(m);
    scale_min_k4(2 * chunk + 1, b.scales, &sc, &m);
    const float d2 = d * static_cast<float>(sc);
    const float m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    q += 32;
  }
}

void dequantize_block_q5_K(const BlockQ5_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  const uint8_t* ql = b.qs;
  for (int chunk = 0; chunk < 4; ++chunk) {
    const uint8_t u1 = static_cast<uint8_t>(1u << (2 * chunk));
    const uint8_t u2 = static_cast<uint8_t>(2u << (2 * chunk));
    uint8_t sc, m;
    scale_min_k4(2 * chunk, b.scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(m);
    scale_min_k4(2 * chunk + 1, b.scales, &sc, &m);
    const float d2 = d * static_cast<float>(sc);
    const float m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      const int v = (ql[l] & 0xF) + ((b.qh[l] & u1) ? 16 : 0);
      *y++ = d1 * static_cast<float>(v) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int v = (ql[l] >> 4) + ((b.qh[l] & u2) ? 16 : 0);
      *y++ = d2 * static_cast<float>(v) - m2;
    }
    ql += 32;
  }
}

void dequantize_block_q6_K(const BlockQ6_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const uint8_t* ql = b.ql;
  const uint8_t* qh = b.qh;
  const int8_t* sc = b.scales;
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

void dequantize_block_q8_K(const BlockQ8_K& b, float* y) {
  for (int j = 0; j < kQK_K; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
}

}  // namespace kazeia::ref
