// Included first by every x86 SIMD kernel file: no fused multiply-adds
// unless written explicitly (the kernels reproduce the references'
// separately rounded products, bit for bit), and GCC 12's false
// uninitialized warnings about its own _mm*_undefined_* idiom in the
// intrinsics headers silenced.
#pragma once

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
