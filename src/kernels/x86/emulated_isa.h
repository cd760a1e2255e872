// AVX-512 and AVX-VNNI intrinsics on an AVX2 CPU, for testing only: with
// -DKAZEIA_EMULATE_AVX512=PARTIAL|FULL (cmake/KazeiaLayer.cmake) the
// *_avx512.cpp files (FULL: also kernels_avxvnni.cpp) are compiled with AVX2
// flags and this header forced in first (-include), so their kernels run,
// slowly, on a host without those instructions, and the kernel tests compare
// them with the scalar references like every other table. Without it they
// were tested only on hosts that have them, and the development and CI hosts
// have been AVX2-only for months (Zen 2 / Zen 3 guests; qemu 7.2 has neither).
//
// SIMDe (libsimde-dev) supplies most intrinsics under their Intel names
// (SIMDE_ENABLE_NATIVE_ALIASES); the ones its 0.7.4 lacks are below, written
// lane by lane from the instructions' definitions in the Intel SDM. The
// horizontal reductions follow GCC's own order (avx512fintrin.h), so that a
// float reduction rounds as it does on real hardware built with GCC.
#pragma once

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <cstdint>
#include <cstring>

namespace kazeia_emulated_isa {

// SIMDe's lanes are vector-extension elements under clang: no addresses.
template <class T>
inline T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// A float -> int32 conversion as AVX2's on each half.
template <class Convert>
inline simde__m512i convert_halves(simde__m512 a, Convert convert) {
  simde__m512_private p = simde__m512_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 2; ++i) r.m256i[i] = convert(p.m256[i]);
  return simde__m512i_from_private(r);
}

inline simde__m512 cvtepi32_ps(simde__m512i a) {
  simde__m512i_private p = simde__m512i_to_private(a);
  simde__m512_private r;
  for (int i = 0; i < 16; ++i) r.f32[i] = static_cast<float>(p.i32[i]);
  return simde__m512_from_private(r);
}

// Truncation toward zero; NaN and out-of-range give INT32_MIN (as vcvttps2dq).
inline simde__m512i cvttps_epi32(simde__m512 a) {
  return convert_halves(a, [](__m256 h) { return _mm256_cvttps_epi32(h); });
}

// Rounded by the current mode (nearest); NaN and out-of-range give INT32_MIN.
inline simde__m512i cvtps_epi32(simde__m512 a) {
  return convert_halves(a, [](__m256 h) { return _mm256_cvtps_epi32(h); });
}

inline simde__m512i srai_epi32(simde__m512i a, int n) {
  simde__m512i_private p = simde__m512i_to_private(a);
  for (int i = 0; i < 16; ++i) p.i32[i] = n > 31 ? (p.i32[i] < 0 ? -1 : 0) : (p.i32[i] >> n);
  return simde__m512i_from_private(p);
}

inline simde__m512 cvtph_ps(simde__m256i a) {
  simde__m256i_private p = simde__m256i_to_private(a);
  simde__m512_private r;
  for (int i = 0; i < 2; ++i) r.m256[i] = _mm256_cvtph_ps(p.m128i[i]);
  return simde__m512_from_private(r);
}

// F16C's instruction needs the rounding immediate as a constant.
inline simde__m128i cvtps_ph_half(simde__m256 a, int rounding) {
  switch (rounding & 7) {
    case _MM_FROUND_TO_NEAREST_INT: return _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT);
    case _MM_FROUND_TO_NEG_INF: return _mm256_cvtps_ph(a, _MM_FROUND_TO_NEG_INF);
    case _MM_FROUND_TO_POS_INF: return _mm256_cvtps_ph(a, _MM_FROUND_TO_POS_INF);
    case _MM_FROUND_TO_ZERO: return _mm256_cvtps_ph(a, _MM_FROUND_TO_ZERO);
    default: return _mm256_cvtps_ph(a, _MM_FROUND_CUR_DIRECTION);
  }
}

inline simde__m256i cvtps_ph(simde__m512 a, int rounding) {
  simde__m512_private p = simde__m512_to_private(a);
  simde__m256i_private r;
  for (int i = 0; i < 2; ++i) r.m128i[i] = cvtps_ph_half(p.m256[i], rounding);
  return simde__m256i_from_private(r);
}

inline simde__m512d cvtps_pd(simde__m256 a) {
  simde__m256_private p = simde__m256_to_private(a);
  simde__m512d_private r;
  for (int i = 0; i < 8; ++i) r.f64[i] = static_cast<double>(p.f32[i]);
  return simde__m512d_from_private(r);
}

inline simde__m256i cvtepi32_epi16(simde__m512i a) {  // truncating (vpmovdw)
  simde__m512i_private p = simde__m512i_to_private(a);
  simde__m256i_private r;
  for (int i = 0; i < 16; ++i) r.i16[i] = static_cast<int16_t>(static_cast<uint32_t>(p.i32[i]) & 0xFFFF);
  return simde__m256i_from_private(r);
}

inline simde__m512i cvtepu16_epi32(simde__m256i a) {
  simde__m256i_private p = simde__m256i_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) r.i32[i] = p.u16[i];
  return simde__m512i_from_private(r);
}

inline float cvtss_f32(simde__m512 a) { return simde__m512_to_private(a).f32[0]; }

inline simde__m256 extractf32x8_ps(simde__m512 a, int hi) { return simde__m512_to_private(a).m256[hi & 1]; }

inline simde__m512 shuffle_f32x4(simde__m512 a, simde__m512 b, int imm) {
  simde__m512_private pa = simde__m512_to_private(a), pb = simde__m512_to_private(b), r;
  for (int lane = 0; lane < 4; ++lane) {
    const simde__m512_private& src = lane < 2 ? pa : pb;
    for (int j = 0; j < 4; ++j) r.f32[4 * lane + j] = src.f32[4 * ((imm >> (2 * lane)) & 3) + j];
  }
  return simde__m512_from_private(r);
}

// Gathers and masked loads read only the lanes they keep, as the hardware
// does (a masked-off lane may point anywhere).
inline simde__m512i mask_i32gather_epi32(simde__m512i src, simde__mmask16 k, simde__m512i idx, const void* base,
                                         int scale) {
  simde__m512i_private r = simde__m512i_to_private(src), pi = simde__m512i_to_private(idx);
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1)
      r.i32[i] = load<int32_t>(static_cast<const char*>(base) + static_cast<int64_t>(pi.i32[i]) * scale);
  return simde__m512i_from_private(r);
}

inline simde__m512i i32gather_epi32(simde__m512i idx, const void* base, int scale) {
  return mask_i32gather_epi32(simde_mm512_setzero_si512(), 0xFFFF, idx, base, scale);
}

inline simde__m512i maskz_loadu_epi32(simde__mmask16 k, const void* p) {
  simde__m512i_private r = simde__m512i_to_private(simde_mm512_setzero_si512());
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1) r.i32[i] = load<int32_t>(static_cast<const char*>(p) + 4 * i);
  return simde__m512i_from_private(r);
}

inline simde__m512 maskz_loadu_ps(simde__mmask16 k, const void* p) {
  return simde_mm512_castsi512_ps(maskz_loadu_epi32(k, p));
}

inline void mask_storeu_ps(void* p, simde__mmask16 k, simde__m512 a) {
  simde__m512_private pa = simde__m512_to_private(a);
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1) store<float>(static_cast<char*>(p) + 4 * i, pa.f32[i]);
}

inline void stream_ps(void* p, simde__m512 a) { std::memcpy(p, &a, 64); }

inline simde__m256 maskz_loadu_ps_256(simde__mmask8 k, const void* p) {
  simde__m256_private r = simde__m256_to_private(simde_mm256_setzero_ps());
  for (int i = 0; i < 8; ++i)
    if (k >> i & 1) r.f32[i] = load<float>(static_cast<const char*>(p) + 4 * i);
  return simde__m256_from_private(r);
}

inline simde__m256i maskz_loadu_epi16_256(simde__mmask16 k, const void* p) {
  simde__m256i_private r = simde__m256i_to_private(simde_mm256_setzero_si256());
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1) r.i16[i] = load<int16_t>(static_cast<const char*>(p) + 2 * i);
  return simde__m256i_from_private(r);
}

inline void mask_storeu_epi16_256(void* p, simde__mmask16 k, simde__m256i a) {
  simde__m256i_private pa = simde__m256i_to_private(a);
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1) store<int16_t>(static_cast<char*>(p) + 2 * i, pa.i16[i]);
}

// GCC's reductions: the upper 256 bits against the lower, then 128, 64, 32.
inline float reduce_max_ps(simde__m512 a) {
  simde__m512_private p = simde__m512_to_private(a);
  const __m256 t3 = _mm256_max_ps(p.m256[1], p.m256[0]);
  const __m128 t6 = _mm_max_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
  const __m128 t8 = _mm_max_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m128 t10 = _mm_max_ps(t8, _mm_shuffle_ps(t8, t8, _MM_SHUFFLE(0, 1, 0, 1)));
  return _mm_cvtss_f32(t10);
}

inline uint32_t reduce_max_epu32(simde__m512i a) {
  simde__m512i_private p = simde__m512i_to_private(a);
  uint32_t m = 0;
  for (int i = 0; i < 16; ++i) m = p.u32[i] > m ? p.u32[i] : m;
  return m;
}

inline uint32_t reduce_min_epu32(simde__m512i a) {
  simde__m512i_private p = simde__m512i_to_private(a);
  uint32_t m = UINT32_MAX;
  for (int i = 0; i < 16; ++i) m = p.u32[i] < m ? p.u32[i] : m;
  return m;
}

inline int64_t reduce_add_epi64(simde__m512i a) {  // wrapping, as the hardware's adds
  simde__m512i_private p = simde__m512i_to_private(a);
  uint64_t s = 0;
  for (int i = 0; i < 8; ++i) s += static_cast<uint64_t>(p.i64[i]);
  return static_cast<int64_t>(s);
}

}  // namespace kazeia_emulated_isa

// The Intel names SIMDe 0.7.4 does not alias. Immediates stay arguments:
// nothing here needs them as constants.
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps kazeia_emulated_isa::cvtepi32_ps
#undef _mm512_cvttps_epi32
#define _mm512_cvttps_epi32 kazeia_emulated_isa::cvttps_epi32
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32 kazeia_emulated_isa::cvtps_epi32
#undef _mm512_cvtps_ph
#define _mm512_cvtps_ph kazeia_emulated_isa::cvtps_ph
#undef _mm512_srai_epi32
#define _mm512_srai_epi32 kazeia_emulated_isa::srai_epi32
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps kazeia_emulated_isa::cvtph_ps
#undef _mm512_cvtps_pd
#define _mm512_cvtps_pd kazeia_emulated_isa::cvtps_pd
#undef _mm512_cvtepi32_epi16
#define _mm512_cvtepi32_epi16 kazeia_emulated_isa::cvtepi32_epi16
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32 kazeia_emulated_isa::cvtepu16_epi32
#undef _mm512_cvtss_f32
#define _mm512_cvtss_f32 kazeia_emulated_isa::cvtss_f32
#undef _mm512_extractf32x8_ps
#define _mm512_extractf32x8_ps kazeia_emulated_isa::extractf32x8_ps
#undef _mm512_shuffle_f32x4
#define _mm512_shuffle_f32x4 kazeia_emulated_isa::shuffle_f32x4
#undef _mm512_i32gather_epi32
#define _mm512_i32gather_epi32 kazeia_emulated_isa::i32gather_epi32
#undef _mm512_mask_i32gather_epi32
#define _mm512_mask_i32gather_epi32 kazeia_emulated_isa::mask_i32gather_epi32
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32 kazeia_emulated_isa::maskz_loadu_epi32
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps kazeia_emulated_isa::maskz_loadu_ps
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps kazeia_emulated_isa::mask_storeu_ps
#undef _mm512_stream_ps
#define _mm512_stream_ps kazeia_emulated_isa::stream_ps
#undef _mm256_maskz_loadu_ps
#define _mm256_maskz_loadu_ps kazeia_emulated_isa::maskz_loadu_ps_256
#undef _mm256_maskz_loadu_epi16
#define _mm256_maskz_loadu_epi16 kazeia_emulated_isa::maskz_loadu_epi16_256
#undef _mm256_mask_storeu_epi16
#define _mm256_mask_storeu_epi16 kazeia_emulated_isa::mask_storeu_epi16_256
#undef _mm512_reduce_max_ps
#define _mm512_reduce_max_ps kazeia_emulated_isa::reduce_max_ps
#undef _mm512_reduce_max_epu32
#define _mm512_reduce_max_epu32 kazeia_emulated_isa::reduce_max_epu32
#undef _mm512_reduce_min_epu32
#define _mm512_reduce_min_epu32 kazeia_emulated_isa::reduce_min_epu32
#undef _mm512_reduce_add_epi64
#define _mm512_reduce_add_epi64 kazeia_emulated_isa::reduce_add_epi64
// AVX-VNNI's VEX forms compute what AVX512-VNNI's 256-bit ones do.
#undef _mm256_dpbusd_avx_epi32
#define _mm256_dpbusd_avx_epi32 simde_mm256_dpbusd_epi32
#undef _mm256_dpwssd_avx_epi32
#define _mm256_dpwssd_avx_epi32 simde_mm256_dpwssd_epi32
