// What a per-ISA kernel file (kernels_avx2.cpp, kernels_avxvnni.cpp,
// kernels_avx512.cpp) includes before its SIMD policy: the x86 templates
// and fill_isa<Policy>(), which instantiates them and fills the kernel
// table (x86_kernels.h). Each including file is compiled with its ISA's
// flags and called by dispatch.cpp only when the CPU has that ISA.
//
// No fused multiply-adds unless written explicitly: the 32-element formats
// reproduce the reference's separately rounded products.
#pragma once

#include "kernels/x86/exact_float.h"
#include "kernels/x86/gemm_f32.h"
#include "kernels/x86/quantize_act_x86.h"
#include "kernels/x86/strip_float.h"
#include "kernels/x86/strip_kquants.h"
#include "kernels/x86/strip_legacy.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

// row_kernels: decode by the policy's row kernels where it has them
// (Policy::kRowKernels; false: the strip runner's strips, for comparisons).
template <class Policy>
void fill_isa(KernelTable& table, const char* isa, bool row_kernels = true) {
  fill_legacy<Policy>(table, isa, row_kernels);
  fill_float<Policy>(table, isa);
  fill_kquants<Policy>(table, isa, row_kernels);
  fill_quantizers<Policy>(table);
  table.gemm_f32_acc = &GemmF32<Policy>::template gemm<true>;
  table.gemm_f32 = &GemmF32<Policy>::template gemm<false>;
  table.gemm_f32_scaled_acc = &GemmF32<Policy>::scaled_acc;
  table.gemm_f32_f16b_acc = &GemmF32<Policy>::template gemm<true, uint16_t>;
  table.gemm_f32_f16b = &GemmF32<Policy>::template gemm<false, uint16_t>;
}

}  // namespace
}  // namespace kazeia::kernels::x86
