// Reference dot products for the float weight types and the 32-element
// block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0).
//
// Float grouping per block (fma: one rounding, as std::fma):
//   Q4_0: sumf = fma(sumi * d_w, d_x, sumf)
//   Q5_0: sumf += (d_w * d_x) * sumi
//   Q8_0: sumf = fma(d_w * d_x, sumi, sumf)
//   Q4_1, Q5_1: sumf += (d_w * d_x) * sumi + m_w * s_x
// The groupings without fma are those of ggml's generic ggml_vec_dot_*.
// Q4_0 and Q8_0, the formats of the AMX prefill, fuse the last multiply
// and the add: there the float update per block is the strip's bottleneck
// (every 16 x 16 tile of block sums takes 16 of them), and fusing saves a
// quarter of its vector operations. Every variant fuses the same way, so
// they all still give the reference's bits.
//
// The float types use 16 partial sums. ggml's scalar fallback sums in
// double, its SIMD paths (what x86 runs) keep float partial sums; products of
// two f16 or two bf16 values are exact in float, so only the summation order
// differs.
#include <cmath>
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

// kFloatLanes partial sums: element i always goes to lane i % kFloatLanes,
// also across several add() calls as long as each call but the last covers a
// multiple of kFloatLanes elements.
struct LaneSum {
  float acc[kFloatLanes] = {};

  void add(const float* a, const float* b, int64_t n) {
    int64_t i = 0;
    for (; i + kFloatLanes <= n; i += kFloatLanes) {
      for (int l = 0; l < kFloatLanes; ++l) acc[l] += a[i + l] * b[i + l];
    }
    for (int l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  }

  // Pairwise: lanes l and l + w for w = 8, 4, 2, 1.
  float total() const {
    float t[kFloatLanes];
    std::memcpy(t, acc, sizeof(t));
    for (int w = kFloatLanes / 2; w >= 1; w /= 2) {
      for (int l = 0; l < w; ++l) t[l] += t[l + w];
    }
    return t[0];
  }
};

// Values converted in chunks of this many (a multiple of kFloatLanes).
constexpr int64_t kChunk = 256;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Shared body of the f16 and bf16 dots: convert both rows chunk by chunk,
// then multiply in float.
template <float (*ToF32)(uint16_t)>
float dot_half(int64_t n, const uint8_t* w_row, const uint8_t* x_row) {
  LaneSum sum;
  float wf[kChunk];
  float xf[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
    for (int64_t i = 0; i < m; ++i) {
      wf[i] = ToF32(load<uint16_t>(w_row + 2 * (i0 + i)));
      xf[i] = ToF32(load<uint16_t>(x_row + 2 * (i0 + i)));
    }
    sum.add(wf, xf, m);
  }
  return sum.total();
}

// The 5th bits of a Q5 block as one little-endian word: bit j belongs to
// element j.
uint32_t load_qh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) |
         (static_cast<uint32_t>(qh[2]) << 16) | (static_cast<uint32_t>(qh[3]) << 24);
}

constexpr int kHalf = kQK / 2;

}  // namespace

float dot_f32_lanes(const float* a, const float* b, int64_t n) {
  LaneSum sum;
  sum.add(a, b, n);
  return sum.total();
}

float vec_dot_f32(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* x_bytes = static_cast<const uint8_t*>(x_row);
  if (reinterpret_cast<uintptr_t>(w_row) % alignof(float) == 0 &&
      reinterpret_cast<uintptr_t>(x_bytes) % alignof(float) == 0) {
    return dot_f32_lanes(reinterpret_cast<const float*>(w_row), reinterpret_cast<const float*>(x_bytes), n);
  }
  // A misaligned row (not the case for GGUF data, which is 32-byte aligned,
  // nor for our activation buffers): copy both in chunks; the lane
  // assignment is the same as above.
  LaneSum sum;
  float wf[kChunk];
  float xf[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
    std::memcpy(wf, w_row + i0 * sizeof(float), static_cast<size_t>(m) * sizeof(float));
    std::memcpy(xf, x_bytes + i0 * sizeof(float), static_cast<size_t>(m) * sizeof(float));
    sum.add(wf, xf, m);
  }
  return sum.total();
}

float vec_dot_f16(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_half<fp16_to_fp32>(n, w_row, static_cast<const uint8_t*>(x_row));
}

float vec_dot_bf16(int64_t n, const uint8_t* w_row, const void* x_row) {
  return dot_half<bf16_to_fp32>(n, w_row, static_cast<const uint8_t*>(x_row));
}

float vec_dot_q4_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_0*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const auto w = load<BlockQ4_0>(w_row + ib * sizeof(BlockQ4_0));
    int sumi = 0;
    for (int j = 0; j < kHalf; ++j) {
      const int v0 = (w.qs[j] & 0x0F) - 8;
      const int v1 = (w.qs[j] >> 4) - 8;
      sumi += v0 * xb[ib].qs[j] + v1 * xb[ib].qs[j + kHalf];
    }
    sumf = std::fma(static_cast<float>(sumi) * fp16_to_fp32(w.d), fp16_to_fp32(xb[ib].d), sumf);
  }
  return sumf;
}

float vec_dot_q4_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_1*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const auto w = load<BlockQ4_1>(w_row + ib * sizeof(BlockQ4_1));
    int sumi = 0;
    for (int j = 0; j < kHalf; ++j) {
      const int v0 = w.qs[j] & 0x0F;
      const int v1 = w.qs[j] >> 4;
      sumi += v0 * xb[ib].qs[j] + v1 * xb[ib].qs[j + kHalf];
    }
    const float dd = fp16_to_fp32(w.d) * fp16_to_fp32(xb[ib].d);
    sumf += dd * static_cast<float>(sumi) + fp16_to_fp32(w.m) * fp16_to_fp32(xb[ib].s);
  }
  return sumf;
}

float vec_dot_q5_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_0*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const auto w = load<BlockQ5_0>(w_row + ib * sizeof(BlockQ5_0));
    const uint32_t qh = load_qh(w.qh);
    int sumi = 0;
    for (int j = 0; j < kHalf; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kHalf)) & 1u) << 4;
      const int v0 = ((w.qs[j] & 0x0F) | h0) - 16;
      const int v1 = ((w.qs[j] >> 4) | h1) - 16;
      sumi += v0 * xb[ib].qs[j] + v1 * xb[ib].qs[j + kHalf];
    }
    sumf += (fp16_to_fp32(w.d) * fp16_to_fp32(xb[ib].d)) * static_cast<float>(sumi);
  }
  return sumf;
}

float vec_dot_q5_1(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_1*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const auto w = load<BlockQ5_1>(w_row + ib * sizeof(BlockQ5_1));
    const uint32_t qh = load_qh(w.qh);
    int sumi = 0;
    for (int j = 0; j < kHalf; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kHalf)) & 1u) << 4;
      const int v0 = (w.qs[j] & 0x0F) | h0;
      const int v1 = (w.qs[j] >> 4) | h1;
      sumi += v0 * xb[ib].qs[j] + v1 * xb[ib].qs[j + kHalf];
    }
    const float dd = fp16_to_fp32(w.d) * fp16_to_fp32(xb[ib].d);
    sumf += dd * static_cast<float>(sumi) + fp16_to_fp32(w.m) * fp16_to_fp32(xb[ib].s);
  }
  return sumf;
}

float vec_dot_q8_0(int64_t n, const uint8_t* w_row, const void* x_row) {
  const auto* xb = static_cast<const BlockQ8_0*>(x_row);
  float sumf = 0.0f;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const auto w = load<BlockQ8_0>(w_row + ib * sizeof(BlockQ8_0));
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += w.qs[j] * xb[ib].qs[j];
    sumf = std::fma(fp16_to_fp32(w.d) * fp16_to_fp32(xb[ib].d), static_cast<float>(sumi), sumf);
  }
  return sumf;
}

}  // namespace kazeia::kernels::ref
