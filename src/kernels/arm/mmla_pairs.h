// What the SMMLA kernels share (strip_i8mm.cpp, token_groups_i8mm.cpp):
// two rows' or two tokens' quants paired as SMMLA operands, the 2 x 2 block
// sums, and the legacy formats' unpacking, scale order and row pairs.
//
// SMMLA multiplies a 2x8 int8 matrix (rows in bytes 0-7 and 8-15) by an 8x2
// one (columns likewise) into a 2x2 int32 accumulator: 32 products an
// instruction. Include only from sources compiled with +i8mm (*_i8mm.cpp);
// like neon_util.h, everything is in an anonymous namespace.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm {
namespace {

inline int8x16_t zip_lo64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
inline int8x16_t zip_hi64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

// Two rows' (or tokens') 32 quants as SMMLA operands: piece e (elements
// 8e .. 8e + 7) of both, first in bytes 0-7, second in 8-15.
struct Pairs {
  int8x16_t piece[4];
};
inline Pairs pair_up(int8x16_t a_lo, int8x16_t a_hi, int8x16_t b_lo, int8x16_t b_hi) {
  return {{zip_lo64(a_lo, b_lo), zip_hi64(a_lo, b_lo), zip_lo64(a_hi, b_hi), zip_hi64(a_hi, b_hi)}};
}

// The exact block sums of a row pair times a token pair, lanes [r0.t0,
// r0.t1, r1.t0, r1.t1], plus `start`.
inline int32x4_t block_2x2(const Pairs& w, const Pairs& x, int32x4_t start = vdupq_n_s32(0)) {
  int32x4_t acc = vmmlaq_s32(start, w.piece[0], x.piece[0]);
  acc = vmmlaq_s32(acc, w.piece[1], x.piece[1]);
  acc = vmmlaq_s32(acc, w.piece[2], x.piece[2]);
  return vmmlaq_s32(acc, w.piece[3], x.piece[3]);
}

// The legacy formats: block bytes, unpacking (neon_util.h) and the
// reference's scale order.
struct Q4_0Mmla {
  static constexpr size_t kBytes = sizeof(BlockQ4_0);
  static constexpr ScaleOrder kOrder = ScaleOrder::kWeightFirst;
  static BlockQuants quants(const uint8_t* block) { return q4_quants<offsetof(BlockQ4_0, qs), 8>(block); }
};
struct Q8_0Mmla {
  static constexpr size_t kBytes = sizeof(BlockQ8_0);
  static constexpr ScaleOrder kOrder = ScaleOrder::kProductOfScales;
  static BlockQuants quants(const uint8_t* block) { return q8_0_quants(block); }
};

// Block b of a legacy format's 4 rows as SMMLA operands: rows 0 / 1 and
// 2 / 3 paired, and their scales in the accumulators' lane order (rows
// [2i, 2i, 2i+1, 2i+1]).
struct RowPairs {
  Pairs w[2];
  float32x4_t dw[2];
};
template <class F>
inline RowPairs row_pairs(const uint8_t* const rows[kTileRows], int64_t b) {
  const size_t at = F::kBytes * static_cast<size_t>(b);
  BlockQuants q[kTileRows];
  for (int r = 0; r < kTileRows; ++r) q[r] = F::quants(rows[r] + at);
  const float32x4_t dw4 = row_halves(rows, at);
  return {{pair_up(q[0].lo, q[0].hi, q[1].lo, q[1].hi), pair_up(q[2].lo, q[2].hi, q[3].lo, q[3].hi)},
          {vzip1q_f32(dw4, dw4), vzip2q_f32(dw4, dw4)}};
}

}  // namespace
}  // namespace kazeia::kernels::arm
