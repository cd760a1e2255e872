// AVX2 + AVX-VNNI (VEX-encoded vpdpbusd / vpdpwssd on 256-bit vectors): the
// Avx2 policy with exact 4-byte dots. Include only from *_avxvnni.cpp.
#pragma once

#include <immintrin.h>

#include "kernels/x86/simd_avx2.h"

namespace kazeia::kernels::x86 {
namespace {

struct AvxVnni : Avx2 {
  static constexpr bool kVnni = true;
  static constexpr bool kRowKernels = false;  // not measured on an AVX-VNNI core
  static VI dot4(VI acc, VI w, const void* x) { return _mm256_dpbusd_avx_epi32(acc, w, bcst32(x)); }
  static VI dot2x16(VI acc, VI a, const void* p) { return _mm256_dpwssd_avx_epi32(acc, a, bcst32(p)); }
};

}  // namespace
}  // namespace kazeia::kernels::x86
