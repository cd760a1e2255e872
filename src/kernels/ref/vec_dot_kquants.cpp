// Reference dot products of the K-quant weights (Q2_K .. Q6_K, 256-element
// super-blocks) with Q8_K activations.
//
// Each super-block is first unpacked to 256 small signed integers a[i] and a
// sub-block scale per element; the integer part is then exact, so only the
// float grouping has to match ggml's generic ggml_vec_dot_qN_K_q8_K:
//  - Q2_K: per super-block
//      sumf += (d_x * d_w) * isum - (d_x * dmin_w) * summs
//    isum = sum_s scale_s * sum_{i in s} q8_i * a_i,
//    summs = sum_s bsums_s * min_s (the constant part of each sub-block).
//  - Q3_K, Q6_K: eight integer lanes per super-block, lane l collecting the
//    elements i with i % 8 == l (times their sub-block scale); eight float
//    sums that persist across super-blocks: sums[l] += (d_w * d_x) * lane[l];
//    at the end sumf = sums[0] + sums[1] + ... + sums[7] (in that order).
//  - Q4_K, Q5_K: as Q3_K, plus a running sumf -= (dmin_w * d_x) * summs per
//    super-block, to which the eight sums are added at the end.
// The mins term uses the activation's bsums (sums of 16 quants), as ggml does.
#include <cstdint>
#include <cstring>

#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::kernels::ref {
namespace {

constexpr int kLanes = 8;  // ggml's aux32[8]

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// lane[l] = sum over i % 8 == l of scale[i / sub] * q8[i] * a[i].
void lane_sums(const int8_t* a, const int8_t* q8, const int* scales, int sub, int32_t lane[kLanes]) {
  for (int l = 0; l < kLanes; ++l) lane[l] = 0;
  for (int i = 0; i < kQK_K; ++i) {
    lane[i % kLanes] += scales[i / sub] * (static_cast<int32_t>(q8[i]) * a[i]);
  }
}

// Element i of a Q2_K / Q3_K super-block takes its 2 low bits from byte
// qs[32 * (i / 128) + i % 32], at bit 2 * ((i / 32) % 4).
int low2(const uint8_t* qs, int i) {
  return (qs[32 * (i / 128) + i % 32] >> (2 * ((i / 32) % 4))) & 3;
}

// The 16 6-bit scales of a Q3_K block (still biased by 32).
void q3_scales(const uint8_t* sc, int out[16]) {
  for (int s = 0; s < 16; ++s) out[s] = q3_scale(sc, s);
}

// sum of bsums[g] * min of the sub-block of 32 holding group g (two groups
// of 16 per sub-block): the constant part of Q4_K / Q5_K.
int mins_term(const BlockQ8_K& x, const int mins[8]) {
  int sumi = 0;
  for (int g = 0; g < kQK_K / 16; ++g) sumi += x.bsums[g] * mins[g / 2];
  return sumi;
}

// Final combination for the lane-based formats.
float finish(float sumf, const float sums[kLanes]) {
  for (int l = 0; l < kLanes; ++l) sumf += sums[l];
  return sumf;
}

}  // namespace

float vec_dot_q2_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_K*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const auto w = load<BlockQ2_K>(w_row + ib * sizeof(BlockQ2_K));
    const BlockQ8_K& x = xb[ib];
    int summs = 0;
    for (int s = 0; s < 16; ++s) summs += x.bsums[s] * (w.scales[s] >> 4);
    int isum = 0;
    for (int s = 0; s < 16; ++s) {
      int isuml = 0;
      for (int i = 16 * s; i < 16 * s + 16; ++i) isuml += x.qs[i] * low2(w.qs, i);
      isum += (w.scales[s] & 0xF) * isuml;
    }
    const float dall = x.d * fp16_to_fp32(w.d);
    const float dmin = x.d * fp16_to_fp32(w.dmin);
    sumf += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sumf;
}

float vec_dot_q3_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_K*>(x_row);
  float sums[kLanes] = {};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const auto w = load<BlockQ3_K>(w_row + ib * sizeof(BlockQ3_K));
    int8_t a[kQK_K];
    for (int i = 0; i < kQK_K; ++i) {
      // High bit of element i = 32p + l is bit p of hmask[l]; a clear bit
      // means the value is 4 lower.
      const bool high = (w.hmask[i % 32] >> (i / 32)) & 1;
      a[i] = static_cast<int8_t>(low2(w.qs, i) - (high ? 0 : 4));
    }
    int scales[16];
    q3_scales(w.scales, scales);
    for (int s = 0; s < 16; ++s) scales[s] -= 32;
    int32_t lane[kLanes];
    lane_sums(a, xb[ib].qs, scales, 16, lane);
    const float d = fp16_to_fp32(w.d) * xb[ib].d;
    for (int l = 0; l < kLanes; ++l) sums[l] += d * static_cast<float>(lane[l]);
  }
  return finish(0.0f, sums);
}

float vec_dot_q4_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_K*>(x_row);
  float sumf = 0.0f;
  float sums[kLanes] = {};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const auto w = load<BlockQ4_K>(w_row + ib * sizeof(BlockQ4_K));
    int8_t a[kQK_K];
    for (int i = 0; i < kQK_K; ++i) {
      // Sub-block s = i / 32: low nibbles of qs[32 (s/2) ..] for even s,
      // high nibbles for odd s.
      const uint8_t byte = w.qs[32 * (i / 64) + i % 32];
      a[i] = static_cast<int8_t>(((i / 32) % 2 == 0) ? (byte & 0xF) : (byte >> 4));
    }
    int scales[8];
    int mins[8];
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      scale_min_k4(s, w.scales, &sc, &m);
      scales[s] = sc;
      mins[s] = m;
    }
    int32_t lane[kLanes];
    lane_sums(a, xb[ib].qs, scales, 32, lane);
    const float d = fp16_to_fp32(w.d) * xb[ib].d;
    for (int l = 0; l < kLanes; ++l) sums[l] += d * static_cast<float>(lane[l]);
    const float dmin = fp16_to_fp32(w.dmin) * xb[ib].d;
    sumf -= dmin * static_cast<float>(mins_term(xb[ib], mins));
  }
  return finish(sumf, sums);
}

float vec_dot_q5_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_K*>(x_row);
  float sumf = 0.0f;
  float sums[kLanes] = {};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const auto w = load<BlockQ5_K>(w_row + ib * sizeof(BlockQ5_K));
    int8_t a[kQK_K];
    for (int i = 0; i < kQK_K; ++i) {
      const uint8_t byte = w.qs[32 * (i / 64) + i % 32];
      const int low = ((i / 32) % 2 == 0) ? (byte & 0xF) : (byte >> 4);
      // Element 32s + l has its 5th bit in bit s of qh[l].
      const int high = (w.qh[i % 32] >> (i / 32)) & 1;
      a[i] = static_cast<int8_t>(low + 16 * high);
    }
    int scales[8];
    int mins[8];
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      scale_min_k4(s, w.scales, &sc, &m);
      scales[s] = sc;
      mins[s] = m;
    }
    int32_t lane[kLanes];
    lane_sums(a, xb[ib].qs, scales, 32, lane);
    const float d = fp16_to_fp32(w.d) * xb[ib].d;
    for (int l = 0; l < kLanes; ++l) sums[l] += d * static_cast<float>(lane[l]);
    const float dmin = fp16_to_fp32(w.dmin) * xb[ib].d;
    sumf -= dmin * static_cast<float>(mins_term(xb[ib], mins));
  }
  return finish(sumf, sums);
}

float vec_dot_q6_K(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_K*>(x_row);
  float sums[kLanes] = {};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const auto w = load<BlockQ6_K>(w_row + ib * sizeof(BlockQ6_K));
    int8_t a[kQK_K];
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = w.ql + 64 * h;
      const uint8_t* qh = w.qh + 32 * h;
      int8_t* out = a + 128 * h;
      for (int l = 0; l < 32; ++l) {
        out[l] = static_cast<int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
        out[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
        out[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        out[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
      }
    }
    int scales[16];
    for (int s = 0; s < 16; ++s) scales[s] = w.scales[s];
    int32_t lane[kLanes];
    lane_sums(a, xb[ib].qs, scales, 16, lane);
    const float d = fp16_to_fp32(w.d) * xb[ib].d;
    for (int l = 0; l < kLanes; ++l) sums[l] += d * static_cast<float>(lane[l]);
  }
  return finish(0.0f, sums);
}

}  // namespace kazeia::kernels::ref
