// AVX2-level float ops (FMA unused, F16C), the AVX-512 ones
// (float_ops_avx512.cpp) on 8 lanes: built on the reference's exp_approx,
// evaluated lane by lane with the same operations in the same order (no
// fused multiply-adds), so every result is bit-identical to its reference:
// the online-softmax row (its 16-lane sum kept in two vectors), silu,
// swiglu, sigmoid_mul, the depthwise conv + silu, RMSNorm's sum of squares
// and scalings, the quantizer's abs_range, transpose_f32 in 8 x 8 blocks,
// half <-> float rows, and the bandwidth probe's read_stream. A row's last
// partial vector is read and written with vmaskmovps (which never touches
// the masked-out elements' memory).
#include "kernels/x86/exact_float.h"  // first: before any code

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/ref/vec_dot.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/static_for.h"
#include "kernels/x86/transpose8_avx2.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

inline __m256 load(const float* p, int64_t n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, Avx2::tail_mask8(n));
}
inline void store(float* p, int64_t n, __m256 v) { Avx2::store_first(p, n, v); }

// ref::exp_approx on 8 lanes (0 where !(x > -87), NaN included).
inline __m256 exp8(__m256 x) {
  const __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GT_OQ);
  x = _mm256_min_ps(x, _mm256_set1_ps(88.0f));
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(0.693145752f))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(1.42860677e-06f)));
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(0.5f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(live, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

float softmax_online_row_avx2(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha,
                              float* p) {
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256 vmax = _mm256_set1_ps(*m);
  for (int64_t j = 0; j < valid; j += 8) {
    const int64_t left = valid - j;
    const __m256 w = _mm256_mul_ps(load(s + j, left), vscale);
    store(p + j, left, w);
    // Lanes past the row keep the running maximum.
    vmax = _mm256_max_ps(vmax, left >= 8 ? w : _mm256_blendv_ps(vmax, w, _mm256_castsi256_ps(Avx2::tail_mask8(left))));
  }
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  const float m_new = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
  const __m256 vm = _mm256_set1_ps(m_new);
  // Element j in lane j % 16: lanes 0-7 in sum[0], 8-15 in sum[1]. The
  // tail's lanes past the row (read as 0, so exp8 gives exp(-m_new)) are
  // cleared before they reach the sum.
  __m256 sum[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t j = 0; j < valid; j += 8) {
    const int64_t left = valid - j;
    __m256 e = exp8(_mm256_sub_ps(load(p + j, left), vm));
    if (left < 8) e = _mm256_and_ps(e, _mm256_castsi256_ps(Avx2::tail_mask8(left)));
    store(p + j, left, e);
    sum[(j / 8) & 1] = _mm256_add_ps(sum[(j / 8) & 1], e);
  }
  for (int64_t j = valid; j < n; ++j) p[j] = 0.0f;
  *alpha = _mm256_cvtss_f32(exp8(_mm256_set1_ps(*m - m_new)));
  *m = m_new;
  return Avx2::pairwise_sum({sum[0], sum[1]});  // lanes l and l + w for w = 8, 4, 2, 1, as the reference
}

// x / (1 + exp(-x)), as ref::silu_approx.
inline __m256 silu8(__m256 x) {
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void silu_avx2(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 8) store(out + i, n - i, silu8(load(x + i, n - i)));
}

void swiglu_avx2(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 8)
    store(out + i, n - i, _mm256_mul_ps(silu8(load(gate + i, n - i)), load(up + i, n - i)));
}

void sigmoid_mul_avx2(const float* gate, const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), load(gate + i, n - i)));
    store(out + i, n - i, _mm256_div_ps(load(x + i, n - i), _mm256_add_ps(_mm256_set1_ps(1.0f), e)));
  }
}

// Rows of swiglu (ref::swiglu_rows); with `stream`, rows that are whole
// lines (width a multiple of 16, out and ld_out line-aligned) are written
// with non-temporal stores, fenced before returning.
void swiglu_rows_avx2(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in, float* out,
                      size_t ld_out, bool stream) {
  stream = stream && width % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 64 == 0 && ld_out % 16 == 0;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* g = gate + static_cast<size_t>(r) * ld_in;
    const float* u = up + static_cast<size_t>(r) * ld_in;
    float* o = out + static_cast<size_t>(r) * ld_out;
    if (!stream) {
      swiglu_avx2(g, u, width, o);
      continue;
    }
    for (int64_t i = 0; i < width; i += 8)
      _mm256_stream_ps(o + i, _mm256_mul_ps(silu8(_mm256_loadu_ps(g + i)), _mm256_loadu_ps(u + i)));
  }
  if (stream) _mm_sfence();
}

// ref::sum_squares: the eight double partial sums are the lanes of two
// vectors (element i in lane i % 8, as the reference; a partial tail adds
// zeros to the lanes past it), then the same pairwise total.
double sum_squares_avx2(const float* x, int64_t n) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = load(x + i, n - i);
    const __m256 sq = _mm256_mul_ps(v, v);
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
  }
  alignas(32) double l[8];
  _mm256_store_pd(l, lo);
  _mm256_store_pd(l + 4, hi);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// ref::abs_range, 8 lanes of integer min / max on the patterns (sign
// cleared, so signed compares order them); the tail's lanes past the row
// are steered to the neutral values.
void abs_range_avx2(const float* x, int64_t n, float* min, float* max) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  __m256i lo = magnitude, hi = _mm256_setzero_si256();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i v = _mm256_and_si256(_mm256_castps_si256(load(x + i, n - i)), magnitude);
    if (n - i >= 8) {
      lo = _mm256_min_epi32(lo, v);
      hi = _mm256_max_epi32(hi, v);
    } else {
      const __m256i k = Avx2::tail_mask8(n - i);
      lo = _mm256_min_epi32(lo, _mm256_blendv_epi8(magnitude, v, k));
      hi = _mm256_max_epi32(hi, _mm256_and_si256(v, k));
    }
  }
  __m128i l = _mm_min_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
  __m128i h = _mm_max_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
  l = _mm_min_epi32(l, _mm_shuffle_epi32(l, 0x4E));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  l = _mm_min_epi32(l, _mm_shuffle_epi32(l, 0xB1));
  h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  const uint32_t mn = static_cast<uint32_t>(_mm_cvtsi128_si32(l)), mx = static_cast<uint32_t>(_mm_cvtsi128_si32(h));
  std::memcpy(min, &mn, sizeof mn);
  std::memcpy(max, &mx, sizeof mx);
}

// ref::conv_silu: the same sum, 8 channels at a time.
void conv_silu_avx2(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
                    float* out) {
  for (int64_t i = 0; i < n; i += 8) {
    const int64_t left = n - i;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t t = 0; t < n_taps; ++t)
      acc = _mm256_add_ps(acc, _mm256_mul_ps(load(taps + static_cast<size_t>(t) * taps_stride + i, left),
                                             load(rows[t] + i, left)));
    store(out + i, left, silu8(acc));
  }
}

// ref::read_stream with 32-byte loads, four accumulators (integer sums mod
// 2^64: any order gives the same result).
uint64_t read_stream_avx2(const uint8_t* p, size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) uint64_t l[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  uint64_t sum = l[0] + l[1] + l[2] + l[3];
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    sum += w;
  }
  return sum;
}

void scale_avx2(const float* x, float s, int64_t n, float* out) {
  const __m256 v = _mm256_set1_ps(s);
  for (int64_t i = 0; i < n; i += 8) store(out + i, n - i, _mm256_mul_ps(load(x + i, n - i), v));
}

// out = combine(x * s, y), both products and combinations rounded once:
// ref::scale_mul (combine = *) and ref::scale_add (combine = +).
template <class Combine>
void scale_then(const float* x, float s, const float* y, int64_t n, float* out, Combine combine) {
  const __m256 v = _mm256_set1_ps(s);
  for (int64_t i = 0; i < n; i += 8)
    store(out + i, n - i, combine(_mm256_mul_ps(load(x + i, n - i), v), load(y + i, n - i)));
}

void scale_mul_avx2(const float* x, float s, const float* w, int64_t n, float* out) {
  scale_then(x, s, w, n, out, [](__m256 a, __m256 b) { return _mm256_mul_ps(a, b); });
}

void scale_add_avx2(const float* x, float s, const float* y, int64_t n, float* out) {
  scale_then(x, s, y, n, out, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); });
}

// ref::transpose_f32 in 8 x 8 blocks through registers: 8 (masked) row
// loads, the register transpose, 8 column stores (partial ones lane by
// lane: Avx2::store_first). One row is a plain strided copy.
void transpose_f32_avx2(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst, size_t ld_dst) {
  if (rows == 1) {  // a row into a column (the delta rule's K^T in decode)
    for (int64_t x = 0; x < cols; ++x) dst[static_cast<size_t>(x) * ld_dst] = src[x];
    return;
  }
  for (int64_t j0 = 0; j0 < rows; j0 += 8) {
    const int64_t nr = rows - j0 < 8 ? rows - j0 : 8;
    for (int64_t x0 = 0; x0 < cols; x0 += 8) {
      const int64_t nc = cols - x0 < 8 ? cols - x0 : 8;
      __m256 r[8];
      static_for<8>([&](auto i) {
        r[i] = i < nr ? load(src + static_cast<size_t>(j0 + i) * ld_src + static_cast<size_t>(x0), nc)
                      : _mm256_setzero_ps();
      });
      transpose8(r);
      static_for<8>([&](auto i) {
        if (i < nc) store(dst + static_cast<size_t>(x0 + i) * ld_dst + static_cast<size_t>(j0), nr, r[i]);
      });
    }
  }
}

// Half <-> float with VCVTPH2PS / VCVTPS2PH (imm 0: round to nearest even),
// bit-identical to ref::fp16_to_fp32_row / fp32_to_fp16_row. Tails go
// through the reference.
void fp16_to_fp32_row_avx2(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  ref::fp16_to_fp32_row(x + i, n - i, out + i);
}

void fp32_to_fp16_row_avx2(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  ref::fp32_to_fp16_row(x + i, n - i, out + i);
}

}  // namespace

void fill_avx2_float_ops(KernelTable& table) {
  table.read_stream = &read_stream_avx2;
  table.softmax_online_row = &softmax_online_row_avx2;
  table.silu = &silu_avx2;
  table.swiglu = &swiglu_avx2;
  table.sigmoid_mul = &sigmoid_mul_avx2;
  table.swiglu_rows = &swiglu_rows_avx2;
  table.conv_silu = &conv_silu_avx2;
  table.abs_range = &abs_range_avx2;
  table.scale = &scale_avx2;
  table.scale_mul = &scale_mul_avx2;
  table.scale_add = &scale_add_avx2;
  table.transpose_f32 = &transpose_f32_avx2;
  table.sum_squares = &sum_squares_avx2;
  table.fp16_to_fp32_row = &fp16_to_fp32_row_avx2;
  table.fp32_to_fp16_row = &fp32_to_fp16_row_avx2;
}

}  // namespace kazeia::kernels::x86
