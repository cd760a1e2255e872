// Q4_0 and Q8_0 strips (any number of tokens) with SDOT, rows in the lanes
// (compiled with +dotprod, only called when the CPU has it).
//
// The row dots (int8_dot_kernels.h) give one (row, token) per call: per
// block they unpack the row, load the token's 32 activations, and SDOT them
// into a vector whose four lanes must then be summed. Here four rows meet
// up to four tokens per block. The four rows' quants are transposed in
// 4-byte groups (two TRN levels), so vector k holds group k (elements
// 4k .. 4k + 3) of row r in lane r; SDOT by element (vdotq_laneq_s32)
// multiplies it by the token's group k, and after the block's eight groups
// lane r of the accumulator is row r's exact block sum: no lane reduction,
// and the rows' unpacking and the token's loads are shared by four dot
// products each.
//
// Instructions executed per (row, token, 32 weights), 1024-input rows, 16
// rows (tools/arm_instruction_count.sh under qemu; no aarch64 hardware here
// to time them), strip / row dot: 1 token Q4_0 15.3 / 20.4, Q8_0 14.2 /
// 17.3; 4 tokens Q4_0 7.9 / 20.2, Q8_0 7.3 / 17.1. At i8mm, two tokens and
// more take the SMMLA tiles (strip_i8mm.cpp), one token these.
//
// Float update per block, as the reference (ref/vec_dot_legacy.cpp):
//   Q4_0: acc = fma(sumi * d_w, d_x, acc)   Q8_0: acc = fma(d_w * d_x, sumi, acc)
// lane by lane: every output is the reference dot of its row and token, bit
// for bit (given no contraction, cmake/ArmCrossBuild.cmake).
#include <arm_neon.h>

#include <cstddef>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::dotprod {
namespace {

struct Q4_0Rows {
  static constexpr size_t kBytes = sizeof(BlockQ4_0);
  static constexpr ScaleOrder kOrder = ScaleOrder::kWeightFirst;
  // Groups 0..7 of the block at `at` of the four rows (elements j < 16: low
  // nibbles of qs[j], j + 16: high; minus 8).
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    int8x16_t t[4];
    load_transposed(rows, at + offsetof(BlockQ4_0, qs), t);
    for (int k = 0; k < 4; ++k) {
      const uint8x16_t b = vreinterpretq_u8_s8(t[k]);
      g[k] = low_nibbles(b, 8);
      g[k + 4] = high_nibbles(b, 8);
    }
  }
};

struct Q8_0Rows {
  static constexpr size_t kBytes = sizeof(BlockQ8_0);
  static constexpr ScaleOrder kOrder = ScaleOrder::kProductOfScales;
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    for (int h = 0; h < 2; ++h) load_transposed(rows, at + offsetof(BlockQ8_0, qs) + 16 * h, g + 4 * h);
  }
};

// Four rows (the last ones may repeat a real row: n_real of them are
// stored) times tokens [t0, t0 + C) of a.
template <class F>
struct LegacyTile {
  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      const uint8_t* x[C];
      for (int c = 0; c < C; ++c) x[c] = a.x.q + static_cast<size_t>(t0 + c) * a.x.q_stride;
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
      const int64_t nb = a.n_in / kQK;
      for (int64_t b = 0; b < nb; ++b) {
        const size_t at = F::kBytes * static_cast<size_t>(b);
        int8x16_t g[8];
        F::groups(rows, at, g);
        const float32x4_t dw = row_halves(rows, at);  // d is every block's first field
        for (int c = 0; c < C; ++c) {
          const uint8_t* xb = x[c] + sizeof(BlockQ8_0) * static_cast<size_t>(b);
          const int8x16_t x0 = load_s8x16(xb + offsetof(BlockQ8_0, qs));
          const int8x16_t x1 = load_s8x16(xb + offsetof(BlockQ8_0, qs) + 16);
          // Two chains of four (groups 0-3, 4-7), joined: exact int32 either way.
          const int32x4_t s = vaddq_s32(dot16(vdupq_n_s32(0), g, x0), dot16(vdupq_n_s32(0), g + 4, x1));
          const ScaledSums t = scale_sums<F::kOrder>(vcvtq_f32_s32(s), dw, vdupq_n_f32(half_to_float(load_u16(xb))));
          acc[c] = vfmaq_f32(acc[c], t.a, t.b);
        }
      }
      for (int c = 0; c < C; ++c) store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, acc[c], n_real);
    }
  };
};

}  // namespace

void strip_q4_0(const StripArgs& a) { tile_strip<LegacyTile<Q4_0Rows>::Of>(a); }
void strip_q8_0(const StripArgs& a) { tile_strip<LegacyTile<Q8_0Rows>::Of>(a); }

}  // namespace kazeia::kernels::arm::dotprod
