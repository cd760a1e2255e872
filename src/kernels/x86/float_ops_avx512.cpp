// AVX-512 float ops built on the reference's exp_approx, evaluated on 16
// lanes with the same operations in the same order (no fused multiply-adds),
// so every result is bit-identical to its reference: the online-softmax row
// (ref::softmax_online_row, with its 16-lane sum), silu, swiglu and
// sigmoid_mul; and the
// bandwidth probe's read_stream with 64-byte loads.
#include "kernels/x86/exact_float.h"  // first: before any code

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/x86/transpose16_avx512.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

inline __m512 exp16(__m512 x) {
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_GT_OQ);
  x = _mm512_min_ps(x, _mm512_set1_ps(88.0f));
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), magic);
  const __m512 n = _mm512_sub_ps(t, magic);
  const __m512 r = _mm512_sub_ps(_mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693145752f))),
                                 _mm512_mul_ps(n, _mm512_set1_ps(1.42860677e-06f)));
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(0.5f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mov_ps(live, _mm512_mul_ps(p, _mm512_castsi512_ps(bits)));
}

inline __mmask16 first(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u); }

float softmax_online_row_avx512(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha,
                                float* p) {
  const __m512 vscale = _mm512_set1_ps(scale);
  __m512 vmax = _mm512_set1_ps(*m);
  for (int64_t j = 0; j < valid; j += 16) {
    const __mmask16 k = first(valid - j);
    const __m512 w = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, s + j), vscale);
    _mm512_mask_storeu_ps(p + j, k, w);
    vmax = _mm512_mask_max_ps(vmax, k, vmax, w);
  }
  const float m_new = _mm512_reduce_max_ps(vmax);
  const __m512 vm = _mm512_set1_ps(m_new);
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < valid; j += 16) {
    const __mmask16 k = first(valid - j);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, p + j), vm));
    _mm512_mask_storeu_ps(p + j, k, e);
    sum = _mm512_mask_add_ps(sum, k, sum, e);
  }
  for (int64_t j = valid; j < n; ++j) p[j] = 0.0f;
  *alpha = _mm512_cvtss_f32(exp16(_mm512_set1_ps(*m - m_new)));
  *m = m_new;
  // Lanes l and l + w for w = 8, 4, 2, 1, as the reference.
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(sum), _mm512_extractf32x8_ps(sum, 1));
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

// x / (1 + exp(-x)), as ref::silu_approx.
inline __m512 silu16(__m512 x) {
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

void silu_avx512(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    _mm512_mask_storeu_ps(out + i, k, silu16(_mm512_maskz_loadu_ps(k, x + i)));
  }
}

void swiglu_avx512(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    const __m512 s = silu16(_mm512_maskz_loadu_ps(k, gate + i));
    _mm512_mask_storeu_ps(out + i, k, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(k, up + i)));
  }
}

void sigmoid_mul_avx512(const float* gate, const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(k, gate + i)));
    _mm512_mask_storeu_ps(out + i, k, _mm512_div_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_add_ps(_mm512_set1_ps(1.0f), e)));
  }
}

// Rows of swiglu (ref::swiglu_rows); with `stream`, rows that are whole
// lines (width a multiple of 16, out and ld_out line-aligned) are written
// with non-temporal stores, fenced before returning.
void swiglu_rows_avx512(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                        size_t ld_out, bool stream) {
  stream = stream && width % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 64 == 0 && ld_out % 16 == 0;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* g = gate + static_cast<size_t>(r) * ld_in;
    const float* u = up + static_cast<size_t>(r) * ld_in;
    float* o = out + static_cast<size_t>(r) * ld_out;
    if (!stream) {
      swiglu_avx512(g, u, width, o);
      continue;
    }
    for (int64_t i = 0; i < width; i += 16)
      _mm512_stream_ps(o + i, _mm512_mul_ps(silu16(_mm512_loadu_ps(g + i)), _mm512_loadu_ps(u + i)));
  }
  if (stream) _mm_sfence();
}

// ref::sum_squares: the eight double partial sums are the eight lanes of
// one vector (element i in lane i % 8, as the reference; a partial tail
// adds zeros to the lanes past it), then the same pairwise total.
double sum_squares_avx512(const float* x, int64_t n) {
  __m512d s = _mm512_setzero_pd();
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 k = static_cast<__mmask8>(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1u);
    const __m256 v = _mm256_maskz_loadu_ps(k, x + i);
    s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm256_mul_ps(v, v)));
  }
  alignas(64) double l[8];
  _mm512_store_pd(l, s);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// ref::abs_range, 16 lanes of unsigned min / max on the patterns.
void abs_range_avx512(const float* x, int64_t n, float* min, float* max) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  __m512i lo = magnitude, hi = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    const __m512i v = _mm512_and_epi32(_mm512_maskz_loadu_epi32(k, x + i), magnitude);
    lo = _mm512_mask_min_epu32(lo, k, lo, v);
    hi = _mm512_mask_max_epu32(hi, k, hi, v);
  }
  const uint32_t mn = _mm512_reduce_min_epu32(lo), mx = _mm512_reduce_max_epu32(hi);
  std::memcpy(min, &mn, sizeof mn);
  std::memcpy(max, &mx, sizeof mx);
}

// ref::conv_silu: the same sum, 16 channels at a time.
void conv_silu_avx512(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
                      float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t t = 0; t < n_taps; ++t)
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, taps + static_cast<size_t>(t) * taps_stride + i),
                                             _mm512_maskz_loadu_ps(k, rows[t] + i)));
    _mm512_mask_storeu_ps(out + i, k, silu16(acc));
  }
}

// ref::read_stream with 64-byte loads, four accumulators (integer sums mod
// 2^64: any order gives the same result).
uint64_t read_stream_avx512(const uint8_t* p, size_t bytes) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 256 <= bytes; i += 256) {
    a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i + 64));
    a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + i + 128));
    a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + i + 192));
  }
  uint64_t sum = static_cast<uint64_t>(
      _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3))));
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    sum += w;
  }
  return sum;
}

// Half <-> float with VCVTPH2PS / VCVTPS2PH (imm 0: round to nearest even),
// the rules ref::fp16_to_fp32_row / fp32_to_fp16_row follow.
void fp16_to_fp32_row_avx512(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    _mm512_mask_storeu_ps(out + i, k, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, x + i)));
  }
}

void scale_avx512(const float* x, float s, int64_t n, float* out) {
  const __m512 v = _mm512_set1_ps(s);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    _mm512_mask_storeu_ps(out + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), v));
  }
}

// ref::transpose_f32 in 16 x 16 blocks through registers: 16 (masked)
// row loads, the register transpose, 16 (masked) column stores.
void transpose_f32_avx512(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst) {
  for (int64_t j0 = 0; j0 < rows; j0 += 16) {
    const int64_t nr = rows - j0 < 16 ? rows - j0 : 16;
    for (int64_t x0 = 0; x0 < cols; x0 += 16) {
      const int64_t nc = cols - x0 < 16 ? cols - x0 : 16;
      const __mmask16 kc = first(nc), kr = first(nr);
      __m512 r[16];
      static_for<16>([&](auto i) {
        r[i] = i < nr ? _mm512_maskz_loadu_ps(kc, src + static_cast<size_t>(j0 + i) * ld_src + static_cast<size_t>(x0))
                      : _mm512_setzero_ps();
      });
      transpose16(r);
      static_for<16>([&](auto i) {
        if (i < nc) _mm512_mask_storeu_ps(dst + static_cast<size_t>(x0 + i) * ld_dst + static_cast<size_t>(j0), kr, r[i]);
      });
    }
  }
}

// out = combine(x * s, y), both products and combinations rounded once:
// ref::scale_mul (combine = *) and ref::scale_add (combine = +).
template <class Combine>
void scale_then(const float* x, float s, const float* y, int64_t n, float* out, Combine combine) {
  const __m512 v = _mm512_set1_ps(s);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    const __m512 xs = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), v);
    _mm512_mask_storeu_ps(out + i, k, combine(xs, _mm512_maskz_loadu_ps(k, y + i)));
  }
}

void scale_mul_avx512(const float* x, float s, const float* w, int64_t n, float* out) {
  scale_then(x, s, w, n, out, [](__m512 a, __m512 b) { return _mm512_mul_ps(a, b); });
}

void scale_add_avx512(const float* x, float s, const float* y, int64_t n, float* out) {
  scale_then(x, s, y, n, out, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
}

void fp32_to_fp16_row_avx512(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = first(n - i);
    _mm256_mask_storeu_epi16(out + i, k, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(k, x + i), _MM_FROUND_TO_NEAREST_INT));
  }
}

}  // namespace

void fill_avx512_float_ops(KernelTable& table) {
  table.read_stream = &read_stream_avx512;
  table.softmax_online_row = &softmax_online_row_avx512;
  table.silu = &silu_avx512;
  table.swiglu = &swiglu_avx512;
  table.sigmoid_mul = &sigmoid_mul_avx512;
  table.swiglu_rows = &swiglu_rows_avx512;
  table.conv_silu = &conv_silu_avx512;
  table.abs_range = &abs_range_avx512;
  table.scale = &scale_avx512;
  table.scale_mul = &scale_mul_avx512;
  table.scale_add = &scale_add_avx512;
  table.transpose_f32 = &transpose_f32_avx512;
  table.sum_squares = &sum_squares_avx512;
  table.fp16_to_fp32_row = &fp16_to_fp32_row_avx512;
  table.fp32_to_fp16_row = &fp32_to_fp16_row_avx512;
}

}  // namespace kazeia::kernels::x86
