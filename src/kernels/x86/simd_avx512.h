// The AVX-512 (F BW VL DQ VNNI) vector policy of the x86 kernel templates:
// 16 weight rows per vector, one per 32-bit lane. Include only from
// *_avx512.cpp files (they get the -m flags); everything is in an unnamed
// namespace so these copies never meet another ISA's at link time.
#pragma once

#include <immintrin.h>

#include <algorithm>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kazeia::kernels::x86 {
namespace {

struct Avx512 {
  static constexpr int kRows = 16;  // rows per vector (one 32-bit lane each)
  static constexpr bool kVnni = true;
  // Empty asm statements may pin a VI in a vector register (strip_kquants.h);
  // not under the AVX2 emulation (emulated_isa.h), whose VI is a struct.
#if KAZEIA_AVX512_EMULATED
  static constexpr bool kRegisterBarriers = false;
#else
  static constexpr bool kRegisterBarriers = true;
#endif
  static constexpr bool kRowKernels = false;  // rows_*_avx2.h are AVX2 kernels
  using VI = __m512i;
  using VF = __m512;

  static VI zero_i() { return _mm512_setzero_si512(); }
  static VF zero_f() { return _mm512_setzero_ps(); }
  static VI splat8(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static VI splat32(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
  // 4 bytes at p (any alignment), repeated in every lane.
  static VI bcst32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(static_cast<int>(v));
  }
  static VF bcst_f32(const void* p) {
    float v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_ps(v);
  }

  static VI and_(VI a, VI b) { return _mm512_and_si512(a, b); }
  static VI or_(VI a, VI b) { return _mm512_or_si512(a, b); }
  static VI xor_(VI a, VI b) { return _mm512_xor_si512(a, b); }
  // a | (b & c), one instruction.
  static VI or_and(VI a, VI b, VI c) { return _mm512_ternarylogic_epi32(a, b, c, 0xF8); }
  // Bitwise select: a's bits where m is set, b's elsewhere, one instruction
  // (kBitSelect: AVX2 has no select; kernels keep their AND / OR forms there).
  static constexpr bool kBitSelect = true;
  static VI select(VI a, VI b, VI m) { return _mm512_ternarylogic_epi32(a, b, m, 0xE4); }
  template <int N>
  static VI srl16(VI a) { return _mm512_srli_epi16(a, N); }
  template <int N>
  static VI sll16(VI a) { return _mm512_slli_epi16(a, N); }
  template <int N>
  static VI srl32(VI a) { return _mm512_srli_epi32(a, N); }
  template <int N>
  static VI sll32(VI a) { return _mm512_slli_epi32(a, N); }
  template <int N>
  static VI sra32(VI a) { return _mm512_srai_epi32(a, N); }
  static VI add32(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VI sub32(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI mullo32(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
  // Per 128-bit lane byte shuffle (control bytes >= 0x80 give 0).
  // Byte 4i of every 32-bit lane i (mod 4) of a 128-bit lane, repeated 4
  // times: the vpshufb control that copies byte 0 of each lane across it.
  static VI dword_base() { return _mm512_set4_epi32(0x0C0C0C0C, 0x08080808, 0x04040404, 0); }
  static VI cmpeq8(VI a, VI b) { return _mm512_movm_epi8(_mm512_cmpeq_epi8_mask(a, b)); }
  static VI shuffle8(VI a, VI ctrl) { return _mm512_shuffle_epi8(a, ctrl); }

  // acc + sum over the 4 bytes of each lane of u8(w) * s8(x), with the 4
  // bytes at x broadcast to every lane. Exact (no saturation).
  [[gnu::always_inline]] static VI dot4(VI acc, VI w, const void* x) { return _mm512_dpbusd_epi32(acc, w, bcst32(x)); }
  // acc + lo16(a) * lo16(b) + hi16(a) * hi16(b) (signed), b = the 4 bytes at
  // p in every lane.
  [[gnu::always_inline]] static VI dot2x16(VI acc, VI a, const void* p) { return _mm512_dpwssd_epi32(acc, a, bcst32(p)); }

  static VF cvt(VI a) { return _mm512_cvtepi32_ps(a); }
  static VF mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  static VF add(VF a, VF b) { return _mm512_add_ps(a, b); }
  static VF fmadd(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
  static VF fnmadd(VF a, VF b, VF c) { return _mm512_fnmadd_ps(a, b, c); }
  // The fp16 value in the low 16 bits of each lane, as float.
  [[gnu::always_inline]] static VF half_lo(VI a) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(a)); }

  // Lane r = the 32-bit word at rows[r] + off, i.e. a gather relative to
  // rows[0] with idx = row_offsets(stride, n): lane r's row is min(r, n - 1)
  // rows on (the Rows layout), computed in registers - built from the
  // pointer array on the stack, it cost every strip a store-to-load round
  // trip. stride * 15 fits in int32 (matmul sends longer rows elsewhere).
  static VI row_offsets(size_t stride, int64_t n) {
    const VI lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const VI row = _mm512_min_epi32(lane, _mm512_set1_epi32(static_cast<int>(std::min<int64_t>(n, kRows) - 1)));
    return _mm512_mullo_epi32(row, _mm512_set1_epi32(static_cast<int>(stride)));
  }
  static VI gather32(const uint8_t* base, VI idx) { return _mm512_i32gather_epi32(idx, base, 1); }

  // A row pointer read from memory at each use (a volatile load): held in
  // registers, the 16 pointers do not fit next to the kernel's own and the
  // compiler parks them in vector registers, paying a move per use.
  static const uint8_t* row_ptr(const uint8_t* const* rows, int r) {
    return static_cast<const uint8_t* const volatile*>(rows)[r];
  }
  // Reads 16 bytes at rows[r] + off for every row and transposes them:
  // t[k] lane r = bytes 4k..4k+3 of row r's 16.
  [[gnu::always_inline]] static void load_t4(const uint8_t* const* rows, size_t off, VI t[4]) {
    VI a[4];
    for (int j = 0; j < 4; ++j) {
      // a[j]: 128-bit lane L = row j + 4L.
      __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j) + off)));
      // Masked broadcasts from memory instead of inserts: an insert needs
      // the shuffle port, which the transposes below keep busy; a masked
      // broadcast is a load plus a blend that either vector port takes.
      v = _mm512_mask_broadcast_i32x4(v, 0x00F0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j + 4) + off)));
      v = _mm512_mask_broadcast_i32x4(v, 0x0F00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j + 8) + off)));
      v = _mm512_mask_broadcast_i32x4(v, 0xF000, _mm_loadu_si128(reinterpret_cast<const __m128i*>(row_ptr(rows, j + 12) + off)));
      a[j] = v;
    }
    transpose_words(a, t);
  }

  // load_t4 at off and at off + 16 (t[0..3], t[4..7]) from one 32-byte read
  // per row: 16 loads, 8 blends, 8 lane shuffles and 16 unpacks instead of
  // 32 loads, 24 blends and 16 unpacks (llvm-mca: the Q8_0 decode pass
  // 317 -> 272 cycles per unit; Q4_0, bound by the shuffle port, unchanged).
  [[gnu::always_inline]] static void load_t8(const uint8_t* const* rows, size_t off, VI t[8]) {
    // a[j] (j < 4): rows j and j + 4, 32 bytes each; a[j + 4]: rows j + 8
    // and j + 12. A masked broadcast for the upper half, as in load_t4.
    VI a[8];
    auto two_rows = [&](int lo, int hi) __attribute__((always_inline)) {
      const __m512i v = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row_ptr(rows, lo) + off)));
      return _mm512_mask_broadcast_i64x4(v, 0xF0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row_ptr(rows, hi) + off)));
    };
    for (int j = 0; j < 4; ++j) {
      a[j] = two_rows(j, j + 4);
      a[j + 4] = two_rows(j + 8, j + 12);
    }
    // Then, as load_t4's a[]: 128-bit lane L = 16 bytes of row j + 4L.
    VI lo[4], hi[4];
    for (int j = 0; j < 4; ++j) {
      lo[j] = _mm512_shuffle_i32x4(a[j], a[j + 4], _MM_SHUFFLE(2, 0, 2, 0));
      hi[j] = _mm512_shuffle_i32x4(a[j], a[j + 4], _MM_SHUFFLE(3, 1, 3, 1));
    }
    transpose_words(lo, t);
    transpose_words(hi, t + 4);
  }

  // 4x4 transpose of 32-bit words inside each 128-bit lane: word k of lane
  // L of a[j] becomes word j of lane L of t[k].
  [[gnu::always_inline]] static void transpose_words(const VI a[4], VI t[4]) {
    const VI t01lo = _mm512_unpacklo_epi32(a[0], a[1]);
    const VI t01hi = _mm512_unpackhi_epi32(a[0], a[1]);
    const VI t23lo = _mm512_unpacklo_epi32(a[2], a[3]);
    const VI t23hi = _mm512_unpackhi_epi32(a[2], a[3]);
    t[0] = _mm512_unpacklo_epi64(t01lo, t23lo);
    t[1] = _mm512_unpackhi_epi64(t01lo, t23lo);
    t[2] = _mm512_unpacklo_epi64(t01hi, t23hi);
    t[3] = _mm512_unpackhi_epi64(t01hi, t23hi);
  }

  // y[r] = lane r for r < n.
  static void store_rows(float* y, VF v, int n) {
    _mm512_mask_storeu_ps(y, static_cast<__mmask16>((1u << n) - 1u), v);
  }
  // All 16 rows to a 64-byte-aligned y, non-temporal (StripArgs::stream_y).
  static void stream_rows(float* y, VF v) { _mm512_stream_ps(y, v); }

  // ---------------------------------------------------------------- floats
  // For the float-weight dots: 16 consecutive values per vector, lane i %
  // 16, as the reference's LaneSum.
  static constexpr int kFloatLanes = 16;
  using V16 = VF;
  static V16 zero16() { return _mm512_setzero_ps(); }
  static __mmask16 tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static VF load_f32(const uint8_t* p) { return _mm512_loadu_ps(p); }
  static VF load_f32_tail(const uint8_t* p, int64_t n) { return _mm512_maskz_loadu_ps(tail_mask(n), p); }
  static VF load_f16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static VF load_f16_tail(const uint8_t* p, int64_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(n), p));
  }
  static VF load_bf16(const uint8_t* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static VF load_bf16_tail(const uint8_t* p, int64_t n) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(tail_mask(n), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  // acc + a * b in the first n lanes only (the others keep acc exactly).
  static VF add_tail(VF acc, VF prod, int64_t n) { return _mm512_mask_add_ps(acc, tail_mask(n), acc, prod); }
  static V16 splat16(float v) { return _mm512_set1_ps(v); }
  static void store_f32(uint8_t* p, V16 v) { _mm512_storeu_ps(p, v); }
  static void store_f32_tail(uint8_t* p, V16 v, int64_t n) { _mm512_mask_storeu_ps(p, tail_mask(n), v); }
  // The reference's final combination: lanes l and l + w for w = 8, 4, 2, 1.
  static float pairwise_sum(VF v) {
    const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    const __m128 d = _mm_add_ss(c, _mm_movehdup_ps(c));
    return _mm_cvtss_f32(d);
  }
};

}  // namespace
}  // namespace kazeia::kernels::x86
