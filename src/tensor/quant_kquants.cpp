// Reference quantizers of the K-quant super-blocks (256 elements): Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K and Q8_K.
//
// These follow llama.cpp's quantize_row_*_ref (no importance matrix) operation
// for operation: the same search helpers with the same parameters, the same
// float evaluation order (a*b*c is (a*b)*c; no fused multiply-add), the same
// rounding (nearest_int = round half to even; C truncation where ggml
// converts a float to an integer type) and the same integer truncations. Do
// not "simplify" an expression here without checking the byte-identity tests.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/quant.h"
#include "tensor/quant_ref.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // bit-exact float results: no fused multiply-add
#endif

namespace kazeia::ref {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ggml's make_qx_quants without quant weights: symmetric quants
// L[i] = l + nmax with l in [-nmax, nmax - 1], returns the scale.
// rmse_type 1 (the only one used here) weighs each element by x^2 and tries
// 18 scales around nmax / max, keeping the best weighted least-squares fit.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {  // all zero
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  auto weight = [&](int i) -> float {
    switch (rmse_type) {
      case 1: return x[i] * x[i];
      case 2: return 1;
      case 3: return std::fabs(x[i]);
      default: return std::sqrt(std::fabs(x[i]));
    }
  };
  float iscale = -nmax / max;
  if (rmse_type == 0) {
    for (int i = 0; i < n; ++i) {
      const int l = nearest_int(iscale * x[i]);
      L[i] = static_cast<int8_t>(nmax + clamp_int(l, -nmax, nmax - 1));
    }
    return 1 / iscale;
  }
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = weight(i);
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = weight(i);
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * x[i]);
        L[i] = static_cast<int8_t>(nmax + clamp_int(l, -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// ggml's make_q3_quants(do_rmse = true): symmetric quants weighted by x^2
// with up to 5 passes of coordinate descent on single quants.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        const int new_l = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// ggml's make_qkx2_quants: asymmetric quants L[i] in [0, nmax] with
// x ~ scale * L - the_min. Starts from the min/max fit, then tries nstep + 1
// scales (rmin + rdelta * is + nmax) / (max - min), solving the weighted
// least-squares scale and min for each rounding, and keeps the one with the
// smallest weighted error (squared, or absolute when use_mad).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(clamp_int(l, 0, nmax));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// The 2-bit fields of Q2_K / Q3_K: for each 128-element half, byte l of its
// 32 holds elements l, l + 32, l + 64, l + 96 in bits 0-1, 2-3, 4-5, 6-7.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                           (L[j + l + 96] << 6));
    }
  }
}

// Q4_K / Q5_K: 8 sub-blocks of 32 fitted with make_qkx2_quants, the scales and
// mins quantized to 6 bits against their maxima, then the quants recomputed
// from the stored (fp16 and 6-bit rounded) scales.
void quantize_k_scales_mins(const float* x, int nmax, float rmin, float rdelta, int nstep,
                            uint8_t* L, uint8_t scales_out[kKScaleSize], uint16_t* d_out,
                            uint16_t* dmin_out) {
  uint8_t Laux[32];
  float weights[32];
  float mins[kQK_K / 32];
  float scales[kQK_K / 32];
  float max_scale = 0;  // as the min is subtracted, scales are always positive
  float max_min = 0;
  for (int j = 0; j < kQK_K / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin,
                                 rdelta, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t* s = scales_out;
  for (int j = 0; j < kQK_K / 32; ++j) {
    // ggml stores nearest_int() into a uint8_t before clamping to 63.
    uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls = ls < 63 ? ls : 63;
    lm = lm < 63 ? lm : 63;
    if (j < 4) {
      s[j] = ls;
      s[j + 4] = lm;
    } else {
      s[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      s[j - 4] = static_cast<uint8_t>(s[j - 4] | ((ls >> 4) << 6));
      s[j] = static_cast<uint8_t>(s[j] | ((lm >> 4) << 6));
    }
  }
  *d_out = fp32_to_fp16(max_scale / 63.f);
  *dmin_out = fp32_to_fp16(max_min / 63.f);

  const float d_all = fp16_to_fp32(*d_out);
  const float dmin_all = fp16_to_fp32(*dmin_out);
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, s, &sc, &m);
    const float d = d_all * sc;
    if (d == 0) continue;  // keep the quants of make_qkx2_quants
    const float dm = dmin_all * m;
    for (int ii = 0; ii < 32; ++ii) {
      const int l = nearest_int((x[32 * j + ii] + dm) / d);
      L[32 * j + ii] = static_cast<uint8_t>(clamp_int(l, 0, nmax));
    }
  }
}

}  // namespace

void quantize_block_q2_K(const float* x, BlockQ2_K* y) {
  uint8_t L[kQK_K];
  uint8_t Laux[16];
  float weights[16];
  float mins[kQK_K / 16];
  float scales[kQK_K / 16];
  const float q4scale = 15.f;

  float max_scale = 0;
  float max_min = 0;
  for (int j = 0; j < kQK_K / 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f,
                                 0.1f, 15, true);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  if (max_scale > 0) {
    const float iscale = q4scale / max_scale;
    for (int j = 0; j < kQK_K / 16; ++j) {
      y->scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
    }
    y->d = fp32_to_fp16(max_scale / q4scale);
  } else {
    for (int j = 0; j < kQK_K / 16; ++j) y->scales[j] = 0;
    y->d = fp32_to_fp16(0.f);
  }
  if (max_min > 0) {
    const float iscale = q4scale / max_min;
    for (int j = 0; j < kQK_K / 16; ++j) {
      const int l = nearest_int(iscale * mins[j]);
      y->scales[j] = static_cast<uint8_t>(y->scales[j] | (l << 4));
    }
    y->dmin = fp32_to_fp16(max_min / q4scale);
  } else {
    y->dmin = fp32_to_fp16(0.f);
  }

  const float d_all = fp16_to_fp32(y->d);
  const float dmin_all = fp16_to_fp32(y->dmin);
  for (int j = 0; j < kQK_K / 16; ++j) {
    const float d = d_all * (y->scales[j] & 0xF);
    if (d == 0) continue;
    const float dm = dmin_all * (y->scales[j] >> 4);
    for (int ii = 0; ii < 16; ++ii) {
      const int l = nearest_int((x[16 * j + ii] + dm) / d);
      L[16 * j + ii] = static_cast<uint8_t>(clamp_int(l, 0, 3));
    }
  }
  pack_2bit(L, y->qs);
}

void quantize_block_q3_K(const float* x, BlockQ3_K* y) {
  int8_t L[kQK_K];
  float scales[kQK_K / 16];

  float max_scale = 0;
  float amax = 0;
  for (int j = 0; j < kQK_K / 16; ++j) {
    scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    const float scale = std::fabs(scales[j]);
    if (scale > amax) {
      amax = scale;
      max_scale = scales[j];
    }
  }

  std::memset(y->scales, 0, kKScaleSize);
  if (max_scale != 0) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < kQK_K / 16; ++j) {
      // ggml: int8_t l = nearest_int(...); l = MAX(-32, MIN(31, l)) + 32;
      int l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
      l = clamp_int(l, -32, 31) + 32;
      if (j < 8) {
        y->scales[j] = static_cast<uint8_t>(l & 0xF);
      } else {
        y->scales[j - 8] = static_cast<uint8_t>(y->scales[j - 8] | ((l & 0xF) << 4));
      }
      l >>= 4;
      y->scales[j % 4 + 8] = static_cast<uint8_t>(y->scales[j % 4 + 8] | (l << (2 * (j / 4))));
    }
    y->d = fp32_to_fp16(1 / iscale);
  } else {
    y->d = fp32_to_fp16(0.f);
  }

  const float d_all = fp16_to_fp32(y->d);
  for (int j = 0; j < kQK_K / 16; ++j) {
    const int low = j < 8 ? (y->scales[j] & 0xF) : (y->scales[j - 8] >> 4);
    const int sc = (low | (((y->scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
    const float d = d_all * sc;
    if (d == 0) continue;
    for (int ii = 0; ii < 16; ++ii) {
      const int l = clamp_int(nearest_int(x[16 * j + ii] / d), -4, 3);
      L[16 * j + ii] = static_cast<int8_t>(l + 4);
    }
  }

  // The high bit of element 32p + l goes to bit p of hmask[l].
  std::memset(y->hmask, 0, kQK_K / 8);
  uint8_t Lu[kQK_K];
  for (int j = 0; j < kQK_K; ++j) {
    int q = L[j];
    if (q > 3) {
      y->hmask[j % 32] = static_cast<uint8_t>(y->hmask[j % 32] | (1u << (j / 32)));
      q -= 4;
    }
    Lu[j] = static_cast<uint8_t>(q);
  }
  pack_2bit(Lu, y->qs);
}

void quantize_block_q4_K(const float* x, BlockQ4_K* y) {
  uint8_t L[kQK_K];
  std::memset(y->scales, 0, kKScaleSize);
  quantize_k_scales_mins(x, 15, -1.f, 0.1f, 20, L, y->scales, &y->d, &y->dmin);
  uint8_t* q = y->qs;
  for (int j = 0; j < kQK_K; j += 64) {
    for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    q += 32;
  }
}

void quantize_block_q5_K(const float* x, BlockQ5_K* y) {
  uint8_t L[kQK_K];
  std::memset(y->scales, 0, kKScaleSize);
  quantize_k_scales_mins(x, 31, -0.5f, 0.1f, 15, L, y->scales, &y->d, &y->dmin);
  uint8_t* qh = y->qh;
  uint8_t* ql = y->qs;
  std::memset(qh, 0, kQK_K / 8);
  uint8_t m1 = 1, m2 = 2;
  for (int n = 0; n < kQK_K; n += 64) {
    for (int j = 0; j < 32; ++j) {
      int l1 = L[n + j];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] |= m1;
      }
      int l2 = L[n + j + 32];
      if (l2 > 15) {
        l2 -= 16;
        qh[j] |= m2;
      }
      ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
    }
    m1 = static_cast<uint8_t>(m1 << 2);
    m2 = static_cast<uint8_t>(m2 << 2);
    ql += 32;
  }
}

void quantize_block_q6_K(const float* x, BlockQ6_K* y) {
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  float max_scale = 0;
  float max_abs_scale = 0;
  for (int ib = 0; ib < kQK_K / 16; ++ib) {
    const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1);
    scales[ib] = scale;
    const float abs_scale = std::fabs(scale);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scale;
    }
  }

  if (max_abs_scale < kGroupMaxEps) {
    std::memset(y, 0, sizeof(*y));
    y->d = fp32_to_fp16(0.f);
    return;
  }

  const float iscale = -128.f / max_scale;
  y->d = fp32_to_fp16(1 / iscale);
  for (int ib = 0; ib < kQK_K / 16; ++ib) {
    const int l = nearest_int(iscale * scales[ib]);
    y->scales[ib] = static_cast<int8_t>(l < 127 ? l : 127);
  }

  const float d_all = fp16_to_fp32(y->d);
  for (int j = 0; j < kQK_K / 16; ++j) {
    const float d = d_all * y->scales[j];
    if (d == 0) continue;
    for (int ii = 0; ii < 16; ++ii) {
      const int l = clamp_int(nearest_int(x[16 * j + ii] / d), -32, 31);
      L[16 * j + ii] = static_cast<int8_t>(l + 32);
    }
  }

  uint8_t* ql = y->ql;
  uint8_t* qh = y->qh;
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t q1 = L[j + l + 0] & 0xF;
      const uint8_t q2 = L[j + l + 32] & 0xF;
      const uint8_t q3 = L[j + l + 64] & 0xF;
      const uint8_t q4 = L[j + l + 96] & 0xF;
      ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
      ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
      qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                   ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
}

void quantize_block_q8_K(const float* x, BlockQ8_K* y) {
  float max = 0;
  float amax = 0;
  for (int j = 0; j < kQK_K; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax == 0) {
    // ggml leaves bsums untouched here; we zero them so the output is
    // deterministic (the sums of all-zero quants are zero anyway).
    y->d = 0;
    std::memset(y->qs, 0, sizeof(y->qs));
    std::memset(y->bsums, 0, sizeof(y->bsums));
    return;
  }
  const float iscale = -127.f / max;
  for (int j = 0; j < kQK_K; ++j) {
    const int v = nearest_int(iscale * x[j]);
    y->qs[j] = static_cast<int8_t>(v < 127 ? v : 127);
  }
  for (int j = 0; j < kQK_K / 16; ++j) {
    int sum = 0;
    for (int ii = 0; ii < 16; ++ii) sum += y->qs[j * 16 + ii];
    y->bsums[j] = static_cast<int16_t>(sum);
  }
  y->d = 1 / iscale;
}

}  // namespace kazeia::ref
