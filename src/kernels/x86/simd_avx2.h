// The AVX2 (+FMA, F16C) vector policy of the x86 kernel templates: 8 weight
// rows per vector, one per 32-bit lane. Include only from *_avx2.cpp and
// *_avxvnni.cpp files; unnamed namespace as in simd_avx512.h.
//
// Without VNNI the 4-byte dot is vpmaddubsw + vpmaddwd. vpmaddubsw
// saturates pairs to int16, which cannot happen for the unsigned quants it
// meets here (at most 63: 2 * 63 * 128 < 32768); Q8_0 weights, whose biased
// quants would reach 255, use the sign trick instead (kVnni == false path
// in strip_legacy.h).
#pragma once

#include <immintrin.h>

#include <algorithm>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kazeia::kernels::x86 {
namespace {

struct Avx2 {
  static constexpr int kRows = 8;
  static constexpr bool kVnni = false;
  // Empty asm statements may pin a VI in a vector register (strip_kquants.h).
  static constexpr bool kRegisterBarriers = true;
  // Q4_0 / Q8_0 / Q6_K decode without transposition (rows_*_avx2.h):
  // measured faster on AVX2-only cores; AvxVnni keeps the vpdpbusd strips.
  static constexpr bool kRowKernels = true;
  using VI = __m256i;
  using VF = __m256;

  static VI zero_i() { return _mm256_setzero_si256(); }
  static VF zero_f() { return _mm256_setzero_ps(); }
  static VI splat8(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static VI splat32(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
  static VI bcst32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(static_cast<int>(v));
  }
  static VF bcst_f32(const void* p) {
    float v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_ps(v);
  }

  static VI and_(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VI or_(VI a, VI b) { return _mm256_or_si256(a, b); }
  static VI xor_(VI a, VI b) { return _mm256_xor_si256(a, b); }
  static VI or_and(VI a, VI b, VI c) { return _mm256_or_si256(a, _mm256_and_si256(b, c)); }
  // No one-instruction bitwise select (Avx512::select): kernels keep their
  // AND / OR forms here.
  static constexpr bool kBitSelect = false;
  template <int N>
  static VI srl16(VI a) { return _mm256_srli_epi16(a, N); }
  template <int N>
  static VI sll16(VI a) { return _mm256_slli_epi16(a, N); }
  template <int N>
  static VI srl32(VI a) { return _mm256_srli_epi32(a, N); }
  template <int N>
  static VI sll32(VI a) { return _mm256_slli_epi32(a, N); }
  template <int N>
  static VI sra32(VI a) { return _mm256_srai_epi32(a, N); }
  static VI add32(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI sub32(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI mullo32(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
  // Byte 4i of every 32-bit lane i (mod 4) of a 128-bit lane, repeated 4
  // times: the vpshufb control that copies byte 0 of each lane across it.
  static VI dword_base() { return _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C, 0, 0x04040404, 0x08080808, 0x0C0C0C0C); }
  static VI cmpeq8(VI a, VI b) { return _mm256_cmpeq_epi8(a, b); }
  static VI shuffle8(VI a, VI ctrl) { return _mm256_shuffle_epi8(a, ctrl); }

  [[gnu::always_inline]] static VI dot4(VI acc, VI w, const void* x) {
    const VI pairs = _mm256_maddubs_epi16(w, bcst32(x));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  // Signed weights (Q8_0 without VNNI): |w| times x with w's sign.
  [[gnu::always_inline]] static VI dot4_signed(VI acc, VI w_abs, VI w, const void* x) {
    const VI pairs = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(bcst32(x), w));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  // Q4_0's int16 dot chain (strip_legacy.h): the vpmaddubsw pairs of one
  // word, and a block's int16 sum widened to int32 pairs.
  [[gnu::always_inline]] static VI pairs16(VI w, const void* x) { return _mm256_maddubs_epi16(w, bcst32(x)); }
  static VI add16(VI a, VI b) { return _mm256_add_epi16(a, b); }
  static VI widen16(VI a) { return _mm256_madd_epi16(a, _mm256_set1_epi16(1)); }
  static VI madd16(VI a, VI b) { return _mm256_madd_epi16(a, b); }
  static VI abs8(VI a) { return _mm256_abs_epi8(a); }
  [[gnu::always_inline]] static VI dot2x16(VI acc, VI a, const void* p) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, bcst32(p)));
  }

  static VF cvt(VI a) { return _mm256_cvtepi32_ps(a); }
  static VF mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  static VF add(VF a, VF b) { return _mm256_add_ps(a, b); }
  static VF fmadd(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
  static VF fnmadd(VF a, VF b, VF c) { return _mm256_fnmadd_ps(a, b, c); }
  [[gnu::always_inline]] static VF half_lo(VI a) {
    // Pack the low 16 bits of the 8 lanes into one 128-bit vector.
    const VI lo16 = _mm256_shuffle_epi8(
        a, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5,
                            8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
    const __m128i packed = _mm_unpacklo_epi64(_mm256_castsi256_si128(lo16), _mm256_extracti128_si256(lo16, 1));
    return _mm256_cvtph_ps(packed);
  }

  // As Avx512::row_offsets: lane r = min(r, n - 1) * stride.
  static VI row_offsets(size_t stride, int64_t n) {
    const VI lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    const VI row = _mm256_min_epi32(lane, _mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, kRows) - 1)));
    return _mm256_mullo_epi32(row, _mm256_set1_epi32(static_cast<int>(stride)));
  }
  static VI gather32(const uint8_t* base, VI idx) {
    return _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), idx, 1);
  }

  // A row pointer read from memory at each use (a volatile load): held in
  // registers, the 16 pointers do not fit next to the kernel's own and the
  // compiler parks them in vector registers, paying a move per use.
  static const uint8_t* row_ptr(const uint8_t* const* rows, int r) {
    return static_cast<const uint8_t* const volatile*>(rows)[r];
  }
  // As Avx512::load_t4 for 8 rows: t[k] lane r = bytes 4k..4k+3 of row r.
  [[gnu::always_inline]] static void load_t4(const uint8_t* const* rows, size_t off, VI t[4]) {
    VI a[4];
    for (int j = 0; j < 4; ++j) {
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j) + off));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j + 4) + off));
      a[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    const VI t01lo = _mm256_unpacklo_epi32(a[0], a[1]);
    const VI t01hi = _mm256_unpackhi_epi32(a[0], a[1]);
    const VI t23lo = _mm256_unpacklo_epi32(a[2], a[3]);
    const VI t23hi = _mm256_unpackhi_epi32(a[2], a[3]);
    t[0] = _mm256_unpacklo_epi64(t01lo, t23lo);
    t[1] = _mm256_unpackhi_epi64(t01lo, t23lo);
    t[2] = _mm256_unpacklo_epi64(t01hi, t23hi);
    t[3] = _mm256_unpackhi_epi64(t01hi, t23hi);
  }

  // As Avx512::load_t8: load_t4 at off and at off + 16.
  [[gnu::always_inline]] static void load_t8(const uint8_t* const* rows, size_t off, VI t[8]) {
    load_t4(rows, off, t);
    load_t4(rows, off + 16, t + 4);
  }

  static void store_rows(float* y, VF v, int n) { store_first(y, n, v); }

  // The first n lanes of v at p (n may be <= 0 or >= 8), without a masked
  // store: vmaskmovps stores are microcoded on AMD cores (Zen 2:
  // transposing one row of 128 floats took 1.1 us with them, 0.23 us by
  // scalar stores).
  static void store_first(float* p, int64_t n, __m256 v) {
    if (n >= 8) {
      _mm256_storeu_ps(p, v);
      return;
    }
    __m128 rest = _mm256_castps256_ps128(v);
    if (n >= 4) {
      _mm_storeu_ps(p, rest);
      rest = _mm256_extractf128_ps(v, 1);
      p += 4;
      n -= 4;
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), rest);
      rest = _mm_movehl_ps(rest, rest);
      p += 2;
      n -= 2;
    }
    if (n == 1) _mm_store_ss(p, rest);
  }

  // ---------------------------------------------------------------- floats
  // 16 lanes (the reference's LaneSum) as two vectors: lanes 0-7 and 8-15.
  struct V16 {
    __m256 lo, hi;
  };
  static V16 zero16() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static __m256i tail_mask8(int64_t n) {  // lanes < n (n may be <= 0 or >= 8)
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 0 ? 0 : (n > 8 ? 8 : n))), idx);
  }
  static V16 load_f32(const uint8_t* p) {
    return {_mm256_loadu_ps(reinterpret_cast<const float*>(p)), _mm256_loadu_ps(reinterpret_cast<const float*>(p + 32))};
  }
  // The first n (0..16) floats or halves at p, the rest 0; nothing past
  // them is read. Masked loads: copied through the stack instead, every
  // load waited on a failed store forwarding - a one-row product over 9
  // columns (the delta rule's k.k and q.k in decode) took 6.5x the time of
  // one over 16.
  static V16 load_f32_tail(const uint8_t* p, int64_t n) {
    const auto* f = reinterpret_cast<const float*>(p);
    return {_mm256_maskload_ps(f, tail_mask8(n)), _mm256_maskload_ps(f + 8, tail_mask8(n - 8))};
  }
  static V16 load_f16(const uint8_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  static V16 load_f16_tail(const uint8_t* p, int64_t n) {
    const __m256i h = load_u16_tail(p, n);
    return {_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1))};
  }
  // The first n (0..16) 16-bit values at p, the rest 0: whole pairs as
  // masked 32-bit lanes, an odd last one blended in.
  static __m256i load_u16_tail(const uint8_t* p, int64_t n) {
    __m256i h = _mm256_maskload_epi32(reinterpret_cast<const int*>(p), tail_mask8(n / 2));
    if (n % 2 != 0) {
      uint16_t last;
      std::memcpy(&last, p + 2 * (n - 1), 2);
      const __m256i at = _mm256_cmpeq_epi16(_mm256_set1_epi16(static_cast<short>(n - 1)),
                                            _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      h = _mm256_blendv_epi8(h, _mm256_set1_epi16(static_cast<short>(last)), at);
    }
    return h;
  }
  static __m256 bf16x8(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static V16 load_bf16(const uint8_t* p) {
    return {bf16x8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            bf16x8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  static V16 load_bf16_tail(const uint8_t* p, int64_t n) {
    const __m256i h = load_u16_tail(p, n);
    return {bf16x8(_mm256_castsi256_si128(h)), bf16x8(_mm256_extracti128_si256(h, 1))};
  }
  static V16 mul(V16 a, V16 b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static V16 add(V16 a, V16 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static V16 fmadd(V16 a, V16 b, V16 c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  static V16 splat16(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
  static void store_f32(uint8_t* p, V16 v) {
    _mm256_storeu_ps(reinterpret_cast<float*>(p), v.lo);
    _mm256_storeu_ps(reinterpret_cast<float*>(p + 32), v.hi);
  }
  static void store_f32_tail(uint8_t* p, V16 v, int64_t n) {
    store_first(reinterpret_cast<float*>(p), n, v.lo);
    store_first(reinterpret_cast<float*>(p) + 8, n - 8, v.hi);
  }
  static V16 add_tail(V16 acc, V16 prod, int64_t n) {
    const __m256 s_lo = _mm256_add_ps(acc.lo, prod.lo);
    const __m256 s_hi = _mm256_add_ps(acc.hi, prod.hi);
    return {_mm256_blendv_ps(acc.lo, s_lo, _mm256_castsi256_ps(tail_mask8(n))),
            _mm256_blendv_ps(acc.hi, s_hi, _mm256_castsi256_ps(tail_mask8(n - 8)))};
  }
  static float pairwise_sum(V16 v) {
    const __m256 a = _mm256_add_ps(v.lo, v.hi);
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    const __m128 d = _mm_add_ss(c, _mm_movehdup_ps(c));
    return _mm_cvtss_f32(d);
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
