// The x86 SIMD kernels, as seen from the dispatch table (dispatch.cpp).
//
// Each fill function overwrites the slots of `table` its ISA implements and
// leaves the rest (the scalar reference) alone. They live in files compiled
// with that ISA's flags (cmake/KazeiaLayer.cmake), so dispatch.cpp calls one
// only after checking the CPU; on non-x86 builds they do not exist.
//
// The aux rows below are what the strip kernels read next to each token's
// quantized activations, built once per matmul call: by aux.cpp (portable
// code), and StreamAux by stream_aux_avx2.h (on decode's critical path).
// All are arrays of 32-bit words, one entry per block:
//  - LegacyAux (Q4_0, Q5_0, Q8_0 weights x Q8_0 activations):
//      d = the activation's fp16 scale as float,
//      corr = -offset * (sum of the block's 32 quants), where offset is the
//      bias the kernel adds to make weight quants unsigned (8 for Q4_0, 16
//      for Q5_0, 128 for Q8_0 with VNNI; 0 where the kernel needs none).
//  - Legacy1Aux (Q4_1, Q5_1 x Q8_1): d and s of the block as floats.
//  - StreamAux (Q4_0, Q8_0 stream decoders, strip_legacy.h): per group of 8
//      blocks, their 8 LegacyAux, then for blocks 0, 2, 4, 6 of the group
//      the activations two bytes late, zero-padded: Q4_0 [0 0 x0..x15 0 0]
//      [0 0 x16..x31 0 0] (40 bytes), Q8_0 [0 0 x0..x31 0 0] (36 bytes).
//  - Pairs32 (Q4_K, Q5_K x Q8_K): per super-block 4 words; word p holds the
//      sums of quants 64p..64p+31 (low 16 bits) and 64p+32..64p+63 (high),
//      as int16 - the sub-block sums the mins multiply.
//  - Corr16 (Q3_K, Q6_K x Q8_K): per super-block 16 words,
//      -offset * bsums[g] (offset 4 for Q3_K, 32 for Q6_K).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"

namespace kazeia::kernels::x86 {

// kernels_avx2.cpp. row_kernels: Q4_0 / Q8_0 / Q6_K decode by the row
// kernels (rows_*_avx2.h), else by the strip runner (KAZEIA_ROW_KERNELS=0).
void fill_avx2_kernels(KernelTable& table, bool row_kernels);
void fill_avxvnni_kernels(KernelTable& table);  // kernels_avxvnni.cpp (AVX2 + AVX-VNNI)
void fill_avx512_kernels(KernelTable& table);   // kernels_avx512.cpp
void fill_avx512_float_ops(KernelTable& table);  // float_ops_avx512.cpp
void fill_avx2_float_ops(KernelTable& table);    // float_ops_avx2.cpp (F16C)
// kernels_amx.cpp: AMX-INT8 tile strips, added to an AVX-512 table.
void fill_amx_kernels(KernelTable& table);
// token_tiles_avx512.cpp: VNNI tile strips (tokens in lanes) for prefill,
// added to the AVX-512 table (AMX, where usable, replaces them).
void fill_avx512_token_tiles(KernelTable& table);
// token_tiles_avx2.cpp: the same for the AVX2 table (vpmaddubsw, no VNNI).
void fill_avx2_token_tiles(KernelTable& table);
bool amx_usable();  // CPUID, XCR0 and Linux's permission for the tile state

struct LegacyAux {
  float d;
  int32_t corr;
};
struct Legacy1Aux {
  float d;
  float s;
};

// aux.cpp. Sizes and builders; n_in is a multiple of the block size.
size_t legacy_aux_bytes(int64_t n_in);   // LegacyAux or Legacy1Aux per 32
size_t pairs32_aux_bytes(int64_t n_in);  // 4 words per 256
size_t corr16_aux_bytes(int64_t n_in);   // 16 words per 256

template <int kOffset>
void legacy_aux(int64_t n_in, const uint8_t* q8_0_row, uint8_t* aux_row);
void legacy1_aux(int64_t n_in, const uint8_t* q8_1_row, uint8_t* aux_row);
void pairs32_aux(int64_t n_in, const uint8_t* q8_K_row, uint8_t* aux_row);
template <int kOffset>
void corr16_aux(int64_t n_in, const uint8_t* q8_K_row, uint8_t* aux_row);
// StreamAux rows are built by stream_aux_avx2.h, in the per-ISA files.

extern template void legacy_aux<0>(int64_t, const uint8_t*, uint8_t*);
extern template void legacy_aux<8>(int64_t, const uint8_t*, uint8_t*);
extern template void legacy_aux<16>(int64_t, const uint8_t*, uint8_t*);
extern template void legacy_aux<128>(int64_t, const uint8_t*, uint8_t*);
extern template void corr16_aux<4>(int64_t, const uint8_t*, uint8_t*);
extern template void corr16_aux<32>(int64_t, const uint8_t*, uint8_t*);

}  // namespace kazeia::kernels::x86
