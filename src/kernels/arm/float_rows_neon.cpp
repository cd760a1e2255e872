// F32, F16 and BF16 row dots and matmul strips with NEON (every ARM
// level): tiles of R rows x C tokens that share each loaded vector across
// the tile; the row dot is the 1 x 1 tile.
//
// The arithmetic is the reference's (ref::vec_dot_f32 / _f16 / _bf16):
// element i of a (row, token) dot goes to partial sum i % 16 (four
// float32x4 accumulators: the product rounded, then added), the last
// n % 16 elements zero-padded to a whole step, and the 16 sums combined
// pairwise (lanes l and l + 8, then + 4, + 2, + 1). So every output is the
// reference's, bit for bit. A tile walks its 16-element steps a quarter
// (4 elements) at a time: the C tokens' quarter and one row's at a time in
// registers, so 4 R C accumulators fit the 32 registers: 4 x 1 for one
// token (decode), 3 x 2 for two, 2 x 3 from three. F16 multiplies and adds
// in one instruction (its products are exact; kExactProducts below).
//
// Instructions executed per (row, token, 32 weights), 16 x 1024
// (tools/arm_instruction_count.sh), strip / row dot: 1 token F32 29.3 /
// 33.9, F16 37.4 / 55.8, BF16 39.3 / 47.9; 3 tokens F32 28.7 / 33.6, F16
// 25.3 / 55.5, BF16 35.6 / 47.6 (the row dot then its own loop, with
// 16-element loads; as the 1 x 1 tile it runs 36.4, 54.1 and 52.4, and
// only tests and strip-less callers take it: matmul uses the strips). F32
// and BF16 keep the reference's rounded products: two instructions per 4
// products, half of what remains.
#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/dispatch.h"

namespace kazeia::kernels::arm::neon {
namespace {

// Four values of a row type as floats.
// kExactProducts: the product of two values is exact in float, so a fused
// multiply-add gives the bits of the rounded product and the add: IEEE
// halves (11-bit significands, exponents far inside float's range). Not
// F32, and not BF16 either (products of values below 2^-63 underflow).
struct F32Quarter {
  static constexpr size_t kBytes = 4;
  static constexpr bool kExactProducts = false;
  static float32x4_t load(const uint8_t* p) { return load_f32x4(p); }
};
struct F16Quarter {
  static constexpr size_t kBytes = 2;
  static constexpr bool kExactProducts = true;
  static float32x4_t load(const uint8_t* p) { return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p))); }
};
// bfloat16 is the top half of a float: widen with a 16-bit left shift.
struct BF16Quarter {
  static constexpr size_t kBytes = 2;
  static constexpr bool kExactProducts = false;
  static float32x4_t load(const uint8_t* p) {
    return vreinterpretq_f32_u32(vshll_n_u16(vreinterpret_u16_u8(vld1_u8(p)), 16));
  }
};

constexpr int64_t kStep = 16;  // elements per step (the 16 partial sums)

// y[t * ldy + r] for rows w[0 .. R), tokens x[0 .. C).
template <class L, int R, int C>
void tile(int64_t n, const uint8_t* const w[R], const uint8_t* const x[C], float* y, size_t ldy) {
  float32x4_t acc[R][C][4];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      for (int q = 0; q < 4; ++q) acc[r][c][q] = vdupq_n_f32(0.0f);
  // One step of 16 elements at byte offset `at` of the rows and tokens.
  auto step = [&](const uint8_t* const* wr, const uint8_t* const* xt, size_t at) {
    for (int q = 0; q < 4; ++q) {
      const size_t off = at + static_cast<size_t>(4 * q) * L::kBytes;
      float32x4_t xv[C];
      for (int c = 0; c < C; ++c) xv[c] = L::load(xt[c] + off);
      for (int r = 0; r < R; ++r) {
        const float32x4_t wv = L::load(wr[r] + off);
        for (int c = 0; c < C; ++c) {
          if constexpr (L::kExactProducts) acc[r][c][q] = vfmaq_f32(acc[r][c][q], wv, xv[c]);
          else acc[r][c][q] = vaddq_f32(acc[r][c][q], vmulq_f32(wv, xv[c]));
        }
      }
    }
  };
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) step(w, x, static_cast<size_t>(i) * L::kBytes);
  if (i < n) {
    // The last n % 16 values, zero-padded to a full step (as the row dot:
    // each real value still goes to lane i % 16).
    uint8_t pad[R + C][kStep * L::kBytes] = {};
    const uint8_t* wp[R];
    const uint8_t* xp[C];
    const size_t at = static_cast<size_t>(i) * L::kBytes, bytes = static_cast<size_t>(n - i) * L::kBytes;
    for (int r = 0; r < R; ++r) std::memcpy(pad[r], w[r] + at, bytes), wp[r] = pad[r];
    for (int c = 0; c < C; ++c) std::memcpy(pad[R + c], x[c] + at, bytes), xp[c] = pad[R + c];
    step(wp, xp, 0);
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      const float32x4_t* v = acc[r][c];
      const float32x4_t s4 = vaddq_f32(vaddq_f32(v[0], v[2]), vaddq_f32(v[1], v[3]));
      const float32x2_t s2 = vadd_f32(vget_low_f32(s4), vget_high_f32(s4));
      y[static_cast<size_t>(c) * ldy + static_cast<size_t>(r)] = vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);
    }
  }
}

// Rows in groups of R, the last group's R' < R rows by tile<R'>; the
// tokens [t0, t0 + C) of a.
template <class L, int R, int C>
void rows_times(const StripArgs& a, int64_t t0) {
  const uint8_t* x[C];
  for (int c = 0; c < C; ++c) x[c] = a.x.q + static_cast<size_t>(t0 + c) * a.x.q_stride;
  float* y = a.y + static_cast<size_t>(t0) * a.ldy;
  int64_t r0 = 0;
  auto rows_at = [&](const uint8_t** w, int k) {
    for (int r = 0; r < k; ++r) w[r] = a.w + static_cast<size_t>(r0 + r) * a.w_stride;
  };
  for (; r0 + R <= a.n_rows; r0 += R) {
    const uint8_t* w[R];
    rows_at(w, R);
    tile<L, R, C>(a.n_in, w, x, y + r0, a.ldy);
  }
  const int64_t left = a.n_rows - r0;
  const uint8_t* w[R];
  rows_at(w, static_cast<int>(left));
  if constexpr (R > 3) if (left == 3) return tile<L, 3, C>(a.n_in, w, x, y + r0, a.ldy);
  if constexpr (R > 2) if (left == 2) return tile<L, 2, C>(a.n_in, w, x, y + r0, a.ldy);
  if (left == 1) tile<L, 1, C>(a.n_in, w, x, y + r0, a.ldy);
}

template <class L>
void float_strip(const StripArgs& a) {
  const int64_t n_tok = a.x.n_tokens;
  if (n_tok == 1) return rows_times<L, 4, 1>(a, 0);
  if (n_tok == 2) return rows_times<L, 3, 2>(a, 0);
  int64_t t = 0;
  for (; t + 3 <= n_tok; t += 3) rows_times<L, 2, 3>(a, t);
  if (n_tok - t == 2) rows_times<L, 3, 2>(a, t);
  if (n_tok - t == 1) rows_times<L, 4, 1>(a, t);
}

template <class L>
float row_dot(int64_t n, const uint8_t* w_row, const void* x_row) {
  const uint8_t* w[1] = {w_row};
  const uint8_t* x[1] = {static_cast<const uint8_t*>(x_row)};
  float y;
  tile<L, 1, 1>(n, w, x, &y, 1);
  return y;
}

}  // namespace

float vec_dot_f32(int64_t n, const uint8_t* w_row, const void* x_row) { return row_dot<F32Quarter>(n, w_row, x_row); }
float vec_dot_f16(int64_t n, const uint8_t* w_row, const void* x_row) { return row_dot<F16Quarter>(n, w_row, x_row); }
float vec_dot_bf16(int64_t n, const uint8_t* w_row, const void* x_row) { return row_dot<BF16Quarter>(n, w_row, x_row); }

void strip_f32(const StripArgs& a) { float_strip<F32Quarter>(a); }
void strip_f16(const StripArgs& a) { float_strip<F16Quarter>(a); }
void strip_bf16(const StripArgs& a) { float_strip<BF16Quarter>(a); }

}  // namespace kazeia::kernels::arm::neon
