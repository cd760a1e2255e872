// Vectorised activation quantizers (Q8_0, Q8_1, Q8_K), byte-identical to
// ref::quantize_row_*_act (src/kernels/ref/quantize_act.cpp) for every
// input without NaNs:
//  - Q8_0 / Q8_1 (ggml's x86 rule): amax = max |x| (NaNs skipped, as fmax
//    does), d = amax / 127, q = round-half-even(x * (127 / amax)) saturated
//    to int8 - vcvtps2dq rounds half to even under the default MXCSR, and
//    the saturating int32 -> int8 conversion clamps exactly like the
//    reference (NaN products give INT32_MIN -> -128 there too);
//  - Q8_K (quantize_row_q8_K_ref): the first value of largest magnitude
//    gives iscale = -127 / max; q = round-half-even(iscale * x), at most
//    127 (ggml's nearest_int is round-half-even for |v| < 2^22); d = 1 /
//    iscale; bsums from the int32 quants before packing.
// The scalar parts (d, id, the fp16 conversion with F16C) are the same
// float operations as the reference's. Included only from per-ISA files.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"

namespace kazeia::kernels::x86 {
namespace {

template <class Isa>
struct Quantize {
  static constexpr bool k512 = Isa::kRows == 16;
  using VF = typename Isa::VF;
  using VI = typename Isa::VI;
  static constexpr int kF = k512 ? 16 : 8;  // floats per vector

  static VF load(const float* p) {
    if constexpr (k512) {
      return _mm512_loadu_ps(p);
    } else {
      return _mm256_loadu_ps(p);
    }
  }
  static VF abs(VF v) {
    if constexpr (k512) {
      return _mm512_abs_ps(v);
    } else {
      return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    }
  }
  // max(a, acc) with NaNs in `a` skipped: maxps returns its second operand
  // when either is NaN.
  static VF max_skip_nan(VF a, VF acc) {
    if constexpr (k512) {
      return _mm512_max_ps(a, acc);
    } else {
      return _mm256_max_ps(a, acc);
    }
  }
  static float hmax(VF v) {
    __m256 m;
    if constexpr (k512) {
      m = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    } else {
      m = v;
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
  }
  static VF splat(float v) {
    if constexpr (k512) {
      return _mm512_set1_ps(v);
    } else {
      return _mm256_set1_ps(v);
    }
  }
  static VI round(VF v) {
    if constexpr (k512) {
      return _mm512_cvtps_epi32(v);
    } else {
      return _mm256_cvtps_epi32(v);
    }
  }
  static int hsum(VI v) {
    __m256i s;
    if constexpr (k512) {
      s = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    } else {
      s = v;
    }
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return _mm_cvtsi128_si32(h);
  }
  // 32 int32 (32 / kF vectors) -> 32 saturated int8 at out.
  static void store32(const VI* q, uint8_t* out) {
    if constexpr (k512) {
      const __m128i a = _mm512_cvtsepi32_epi8(q[0]);
      const __m128i b = _mm512_cvtsepi32_epi8(q[1]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), a);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), b);
    } else {
      // packs works per 128-bit lane: [a0 b0 a1 b1] -> words, then bytes,
      // then undo the lane interleave.
      const __m256i ab = _mm256_packs_epi32(q[0], q[1]);
      const __m256i cd = _mm256_packs_epi32(q[2], q[3]);
      const __m256i bytes = _mm256_packs_epi16(ab, cd);
      const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), ordered);
    }
  }
  static VI min127(VI v) {
    if constexpr (k512) {
      return _mm512_min_epi32(v, _mm512_set1_epi32(127));
    } else {
      return _mm256_min_epi32(v, _mm256_set1_epi32(127));
    }
  }
  // Index of the first lane of v equal to `value` (it exists).
  static int first_equal(VF v, float value) {
    if constexpr (k512) {
      const unsigned m = _mm512_cmp_ps_mask(v, _mm512_set1_ps(value), _CMP_EQ_OQ);
      return m != 0 ? __builtin_ctz(m) : -1;
    } else {
      const unsigned m = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_set1_ps(value), _CMP_EQ_OQ)));
      return m != 0 ? __builtin_ctz(m) : -1;
    }
  }

  static uint16_t to_fp16(float f) {
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }

  static VI clamp8(VI v) {
    if constexpr (k512) {
      return _mm512_max_epi32(_mm512_min_epi32(v, _mm512_set1_epi32(127)), _mm512_set1_epi32(-128));
    } else {
      return _mm256_max_epi32(_mm256_min_epi32(v, _mm256_set1_epi32(127)), _mm256_set1_epi32(-128));
    }
  }
  static VI add(VI a, VI b) {
    if constexpr (k512) {
      return _mm512_add_epi32(a, b);
    } else {
      return _mm256_add_epi32(a, b);
    }
  }

  // One 32-value block by the x86 rule: writes the quants, returns the fp32
  // d and (kSum) the sum of the stored, saturated quants.
  template <bool kSum>
  static float block32(const float* x, uint8_t* qs, int* sum) {
    constexpr int kV = 32 / kF;
    VF v[kV];
    VF acc = splat(0.0f);
    for (int i = 0; i < kV; ++i) {
      v[i] = load(x + i * kF);
      acc = max_skip_nan(abs(v[i]), acc);
    }
    const float amax = hmax(acc);
    const float d = amax / 127.f;
    const VF id = splat(amax != 0.0f ? 127.f / amax : 0.0f);
    VI q[kV];
    for (int i = 0; i < kV; ++i) {
      if constexpr (k512) {
        q[i] = round(_mm512_mul_ps(v[i], id));
      } else {
        q[i] = round(_mm256_mul_ps(v[i], id));
      }
    }
    store32(q, qs);
    if constexpr (kSum) {
      VI t = clamp8(q[0]);
      for (int i = 1; i < kV; ++i) t = add(t, clamp8(q[i]));
      *sum = hsum(t);
    }
    return d;
  }

  static void q8_0(const float* x, int64_t n, uint8_t* out) {
    for (int64_t ib = 0; ib < n / 32; ++ib) {
      uint8_t* blk = out + ib * 34;
      const uint16_t d = to_fp16(block32<false>(x + ib * 32, blk + 2, nullptr));
      std::memcpy(blk, &d, 2);
    }
  }

  static void q8_1(const float* x, int64_t n, uint8_t* out) {
    for (int64_t ib = 0; ib < n / 32; ++ib) {
      uint8_t* blk = out + ib * 36;
      int sum;
      const float d = block32<true>(x + ib * 32, blk + 4, &sum);
      const uint16_t h[2] = {to_fp16(d), to_fp16(d * static_cast<float>(sum))};
      std::memcpy(blk, h, 4);
    }
  }

  static void q8_K(const float* x, int64_t n, uint8_t* out) {
    constexpr int kV = 256 / kF;
    for (int64_t ib = 0; ib < n / 256; ++ib) {
      const float* xb = x + ib * 256;
      uint8_t* blk = out + ib * 292;
      VF acc = splat(0.0f);
      for (int i = 0; i < kV; ++i) acc = max_skip_nan(abs(load(xb + i * kF)), acc);
      const float amax = hmax(acc);
      if (amax == 0.0f) {
        std::memset(blk, 0, 292);
        continue;
      }
      // The first value of that magnitude, with its sign (ggml's `max`).
      float max = 0.0f;
      for (int i = 0; i < kV; ++i) {
        const int j = first_equal(abs(load(xb + i * kF)), amax);
        if (j >= 0) {
          max = xb[i * kF + j];
          break;
        }
      }
      const float iscale = -127.f / max;
      const VF s = splat(iscale);
      int16_t bsums[16];
      for (int g = 0; g < 8; ++g) {  // 32 values at a time
        VI q[32 / kF];
        for (int i = 0; i < 32 / kF; ++i) {
          if constexpr (k512) {
            q[i] = min127(round(_mm512_mul_ps(load(xb + 32 * g + i * kF), s)));
          } else {
            q[i] = min127(round(_mm256_mul_ps(load(xb + 32 * g + i * kF), s)));
          }
        }
        store32(q, blk + 4 + 32 * g);
        if constexpr (k512) {
          bsums[2 * g] = static_cast<int16_t>(hsum(q[0]));
          bsums[2 * g + 1] = static_cast<int16_t>(hsum(q[1]));
        } else {
          bsums[2 * g] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[0], q[1])));
          bsums[2 * g + 1] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[2], q[3])));
        }
      }
      const float d = 1 / iscale;
      std::memcpy(blk, &d, 4);
      std::memcpy(blk + 260, bsums, 32);
    }
  }
};

template <class Isa>
void fill_quantizers(KernelTable& table) {
  table.quantize_q8_0 = &Quantize<Isa>::q8_0;
  table.quantize_q8_1 = &Quantize<Isa>::q8_1;
  table.quantize_q8_K = &Quantize<Isa>::q8_K;
}

}  // namespace
}  // namespace kazeia::kernels::x86
