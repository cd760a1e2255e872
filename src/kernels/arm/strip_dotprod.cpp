// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 strips (any number of tokens) with SDOT,
// rows in the lanes
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
// One token (decode) has nothing to share the transposition with: Q4_0,
// Q8_0 and Q4_1 take a row form there instead (one_token, below).
//
// Instructions executed per (row, token, 32 weights), 1024-input rows, 16
// rows (tools/arm_instruction_count.sh under qemu; no aarch64 hardware here
// to time them), strip / row dot: 1 token Q4_0 11.2 / 20.4 (the tile: 15.3),
// Q8_0 10.1 / 17.3 (14.2), Q4_1 14.9 / 22.4 (16.7), Q5_0 26.0 / 37.2,
// Q5_1 27.6 / 38.7 (Q5's row form: 28.9, 32.1); 4 tokens Q4_0 7.9 / 20.2,
// Q8_0 7.3 / 17.1, Q4_1 9.0 / 22.2, Q5_0 10.7 / 37.0, Q5_1 12.0 / 38.4.
// At i8mm, Q4_0 / Q8_0 batches of two tokens and more take the SMMLA tiles
// (strip_i8mm.cpp), one token these. Below i8mm, Q4_0 / Q8_0 batches of
// more than 7 tokens take token groups (group_strip, below).
//
// Float update per block, as the reference (LegacyRows::add): every output
// is the reference dot of its row and token, bit for bit (given no
// contraction, cmake/ArmCrossBuild.cmake).
#include <arm_neon.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"
#include "kernels/arm/tile_dotprod.h"
#include "kernels/dispatch.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"

namespace kazeia::kernels::arm::dotprod {
namespace {

// The rows' scales of one block: d (every block's first field) and, for
// Q4_1 / Q5_1, m (the second).
struct RowScales {
  float32x4_t d, m;
};

// Groups 0..7 of a block of the four rows whose element j < 16 is the low
// nibble of qs[j] and j + 16 the high one (Q4_0, Q4_1, Q5_0, Q5_1), as
// unsigned values 0..15.
template <size_t kQs>
inline void nibble_groups(const uint8_t* const rows[kTileRows], size_t at, uint8x16_t g[8]) {
  int8x16_t t[4];
  load_transposed(rows, at + kQs, t);
  for (int k = 0; k < 4; ++k) {
    const uint8x16_t b = vreinterpretq_u8_s8(t[k]);
    g[k] = vandq_u8(b, vdupq_n_u8(0x0F));
    g[k + 4] = vshrq_n_u8(b, 4);
  }
}

// Q5_0 / Q5_1: adds 16 to the elements whose bit in the rows' 32-bit qh is
// set (element j: bit j). Group G's elements 4G' .. 4G' + 3 (G' = G, or
// 16 / 4 + G - 4 for the high half) take their bits from qh byte e / 8 at
// shifts e % 8 .. + 3 (e = 4G'): the byte is spread over each row's lane
// by a table lookup, the bits picked by VTST.
template <size_t kQh>
inline void add_fifth_bits(const uint8_t* const rows[kTileRows], size_t at, uint8x16_t g[8]) {
  uint32_t qh[kTileRows];
  for (int r = 0; r < kTileRows; ++r) std::memcpy(&qh[r], rows[r] + at + kQh, sizeof(uint32_t));
  const uint8x16_t bytes = vreinterpretq_u8_u32(vld1q_u32(qh));
  static constexpr uint8_t kLaneBase[16] = {0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12};
  static constexpr uint8_t kBits[16] = {1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
  const uint8x16_t base = vld1q_u8(kLaneBase), low_bits = vld1q_u8(kBits), high_bits = vshlq_n_u8(low_bits, 4);
  for (int G = 0; G < 8; ++G) {
    const int e = G < 4 ? 4 * G : 16 + 4 * (G - 4);
    const uint8x16_t spread = vqtbl1q_u8(bytes, vaddq_u8(base, vdupq_n_u8(static_cast<uint8_t>(e / 8))));
    g[G] = vorrq_u8(g[G], bit_as_16(spread, e % 8 == 0 ? low_bits : high_bits));
  }
}

// The formats: block bytes, activation block (Q8_0, or Q8_1 for the formats
// with an offset m), the rows' groups as signed quants, and the reference's
// float update of a block (legacy_terms, neon_util.h), lane by lane.
template <size_t kBlockBytes, class XBlock, LegacyAdd kAdd, ScaleOrder kOrder>
struct LegacyRows {
  static constexpr size_t kBytes = kBlockBytes;
  using X = XBlock;
  static constexpr bool kMin = std::is_same_v<XBlock, ref::BlockQ8_1>;
  static RowScales scales(const uint8_t* const rows[kTileRows], size_t at) {
    return {row_halves(rows, at), kMin ? row_halves(rows, at + 2) : vdupq_n_f32(0.0f)};
  }
  static float32x4_t add(float32x4_t acc, float32x4_t sumi, const RowScales& w, const X& x) {
    const float32x4_t dx = vdupq_n_f32(half_to_float(x.d));
    float32x4_t sx = vdupq_n_f32(0.0f);
    if constexpr (kMin) sx = vdupq_n_f32(half_to_float(x.s));
    const LegacyTerms t = legacy_terms<kAdd, kOrder, kMin>(sumi, w.d, dx, w.m, sx);
    return kAdd == LegacyAdd::kFused ? vfmaq_f32(acc, t.a, t.b) : vaddq_f32(acc, t.a);
  }
};

// Q4_0 / Q4_1 (kQh 0: no fifth bits) and Q5_0 / Q5_1: the groups as
// signed quants, minus the format's offset.
template <size_t kQs, int8_t kOffset, size_t kQh = 0>
inline void nibble_quants(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
  uint8x16_t u[8];
  nibble_groups<kQs>(rows, at, u);
  if constexpr (kQh != 0) add_fifth_bits<kQh>(rows, at, u);
  for (int k = 0; k < 8; ++k) g[k] = vsubq_s8(vreinterpretq_s8_u8(u[k]), vdupq_n_s8(kOffset));
}

struct Q4_0Rows : LegacyRows<sizeof(BlockQ4_0), BlockQ8_0, LegacyAdd::kFused, ScaleOrder::kWeightFirst> {
  static constexpr bool kRowForm = true;
  static constexpr int8_t kOffset = 8;
  static BlockQuants row_quants(const uint8_t* block) { return q4_quants<offsetof(BlockQ4_0, qs), 0>(block); }
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    nibble_quants<offsetof(BlockQ4_0, qs), 8>(rows, at, g);
  }
};
struct Q8_0Rows : LegacyRows<sizeof(BlockQ8_0), BlockQ8_0, LegacyAdd::kFused, ScaleOrder::kProductOfScales> {
  static constexpr bool kRowForm = true;
  static constexpr int8_t kOffset = 0;
  static BlockQuants row_quants(const uint8_t* block) { return q8_0_quants(block); }
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    for (int h = 0; h < 2; ++h) load_transposed(rows, at + offsetof(BlockQ8_0, qs) + 16 * h, g + 4 * h);
  }
};
struct Q4_1Rows : LegacyRows<sizeof(BlockQ4_1), ref::BlockQ8_1, LegacyAdd::kPlain, ScaleOrder::kProductOfScales> {
  static constexpr bool kRowForm = true;
  static constexpr int8_t kOffset = 0;
  static BlockQuants row_quants(const uint8_t* block) { return q4_quants<offsetof(BlockQ4_1, qs), 0>(block); }
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    nibble_quants<offsetof(BlockQ4_1, qs), 0>(rows, at, g);
  }
};
// Q5_0 / Q5_1 keep the tile for one token too: spreading a row's fifth bits
// by itself cost more than the transposition saved (28.9 / 32.1
// instructions against 26.0 / 27.6).
struct Q5_0Rows : LegacyRows<sizeof(BlockQ5_0), BlockQ8_0, LegacyAdd::kPlain, ScaleOrder::kProductOfScales> {
  static constexpr bool kRowForm = false;
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    nibble_quants<offsetof(BlockQ5_0, qs), 16, offsetof(BlockQ5_0, qh)>(rows, at, g);
  }
};
struct Q5_1Rows : LegacyRows<sizeof(BlockQ5_1), ref::BlockQ8_1, LegacyAdd::kPlain, ScaleOrder::kProductOfScales> {
  static constexpr bool kRowForm = false;
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    nibble_quants<offsetof(BlockQ5_1, qs), 0, offsetof(BlockQ5_1, qh)>(rows, at, g);
  }
};

// one_token's kVectors results (vector v: rows 4v .. 4v + 3) into y, the
// first n_real rows.
template <int kVectors>
inline void store_row_groups(float* y, const float32x4_t (&acc)[kVectors], int n_real) {
  for (int v = 0; v < kVectors && kTileRows * v < n_real; ++v)
    store_rows(y + kTileRows * v, acc[v], n_real - kTileRows * v < kTileRows ? n_real - kTileRows * v : kTileRows);
}

// One token's strip in groups of 8 rows (the last group 4 when it has no
// more): run(kv, a_at, rows, n_real) with kv a std::integral_constant of
// the group's vectors of 4 rows (2 or 1), a_at's y at the group's first
// row, rows[] its 4 kv row pointers (past the last real row, repeats of it).
template <class Run>
void one_token_groups(const StripArgs& a, Run&& run) {
  for (int64_t r0 = 0; r0 < a.n_rows; r0 += 2 * kTileRows) {
    const uint8_t* rows[2 * kTileRows];
    const int n_real = group_rows(a, r0, rows);
    StripArgs at = a;
    at.y = a.y + r0;
    if (n_real > kTileRows) {
      run(std::integral_constant<int, 2>{}, at, rows, n_real);
    } else {
      run(std::integral_constant<int, 1>{}, at, rows, n_real);
    }
  }
}

// One token (decode) of 4 kVectors rows (the last ones may repeat a real
// row: n_real of them are stored): nothing to share a transposition with,
// so each row's block stays in its own two vectors, unsigned, and meets the
// activations as they lie (plain SDOT); each four rows' lane sums are
// reduced by three ADDP into lane r = row r. The format's offset,
// -offset * sum(x), is the rows' accumulators' start (two SDOTs a block for
// all rows instead of eight subtractions per four). The same exact
// integers as the tile's, the same float update. Per four row blocks: 3
// ADDP against the tile's 8 TRN and 8 SUB (Q4_0), and with 8 rows the
// activations, their offset term and scale serve twice as many.
template <class F, int kVectors>
void one_token(const StripArgs& a, const uint8_t* const rows[], int n_real, int64_t t0) {
  using X = typename F::X;
  const X* x[1];
  token_rows(a, t0, 1, x);
  float32x4_t acc[kVectors];
  for (int v = 0; v < kVectors; ++v) acc[v] = vdupq_n_f32(0.0f);
  const int64_t nb = a.n_in / kQK;
  for (int64_t b = 0; b < nb; ++b) {
    const size_t at = F::kBytes * static_cast<size_t>(b);
    const X& xb = x[0][b];
    const int8x16_t x_lo = vld1q_s8(xb.qs), x_hi = vld1q_s8(xb.qs + 16);
    int32x4_t start = vdupq_n_s32(0);
    if constexpr (F::kOffset != 0) {
      const int8x16_t minus_offset = vdupq_n_s8(static_cast<int8_t>(-F::kOffset));
      start = vdotq_s32(vdotq_s32(start, minus_offset, x_lo), minus_offset, x_hi);
    }
    for (int v = 0; v < kVectors; ++v) {
      const uint8_t* const* vr = rows + kTileRows * v;
      int32x4_t s[kTileRows];
      for (int r = 0; r < kTileRows; ++r) {
        const BlockQuants q = F::row_quants(vr[r] + at);
        s[r] = vdotq_s32(vdotq_s32(start, q.lo, x_lo), q.hi, x_hi);
      }
      acc[v] = F::add(acc[v], vcvtq_f32_s32(sum_lanes_4(s[0], s[1], s[2], s[3])), F::scales(vr, at), xb);
    }
  }
  store_row_groups(a.y + static_cast<size_t>(t0) * a.ldy, acc, n_real);
}

// Four rows (the last ones may repeat a real row: n_real of them are
// stored) times tokens [t0, t0 + C) of a.
template <class F>
struct LegacyTile {
  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      if constexpr (C == 1 && F::kRowForm) {
        one_token<F, 1>(a, rows, n_real, t0);
      } else {
        tile(a, rows, n_real, t0);
      }
    }
    static void tile(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, int64_t t0) {
      using X = typename F::X;
      const X* x[C];
      token_rows(a, t0, C, x);
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
      const int64_t nb = a.n_in / kQK;
      for (int64_t b = 0; b < nb; ++b) {
        const size_t at = F::kBytes * static_cast<size_t>(b);
        int8x16_t g[8];
        F::groups(rows, at, g);
        const RowScales w = F::scales(rows, at);
        for (int c = 0; c < C; ++c) {
          const X& xb = x[c][b];
          // Two chains of four (groups 0-3, 4-7), joined: exact int32 either way.
          const int32x4_t s = vaddq_s32(dot16(vdupq_n_s32(0), g, vld1q_s8(xb.qs)), dot16(vdupq_n_s32(0), g + 4, vld1q_s8(xb.qs + 16)));
          acc[c] = F::add(acc[c], vcvtq_f32_s32(s), w, xb);
        }
      }
      for (int c = 0; c < C; ++c) store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, acc[c], n_real);
    }
  };
};

// Tiles of up to 12 tokens for every legacy format: instructions per (row,
// token, 32 weights) at 24 tokens, 16 x 1024, widest tile 4 / 8 / 12 (16):
// Q4_0 7.78 / 6.25 / 6.24 (7.09), Q4_1 8.88 / 7.81 / 7.62, Q5_0 10.54 /
// 8.15 / 7.45, Q5_1 11.85 / 9.34 / 8.52, Q8_0 7.15 / 6.02 / 6.00 (7.01): 16
// tokens' accumulators and the unpacked block spill.
constexpr int kLegacyWide = 12;

// A strip of the formats with a row form: one token in groups of 8 rows,
// more tokens in tiles.
template <class F>
void legacy_strip(const StripArgs& a) {
  if (a.x.n_tokens != 1) return tile_strip<LegacyTile<F>::template Of, kLegacyWide>(a);
  one_token_groups(a, [](auto kv, const StripArgs& at, const uint8_t* const* rows, int n_real) {
    one_token<F, decltype(kv)::value>(at, rows, n_real, 0);
  });
}

// Prefill on token groups (Q4_0, Q8_0; matmul builds them once per call,
// WeightKernels::tile_acts): per block, the 16 tokens' quants as they lie,
// their scales as floats and (Q4_0) their -8 sum(x) as the block sums'
// start, so the rows are transposed as raw nibbles (no subtraction per
// row and block) and a token's scale is a lane of one vector per 4 tokens
// (the strip tiles convert each token's fp16 scale per block of 4 rows).
template <bool kOffsetStart>
struct DotGroupLayout {
  static constexpr size_t kScales = kGroupTokens * kQK;                  // float d of token t at 4 t
  static constexpr size_t kStart = kScales + 4 * kGroupTokens;           // int32 -8 sum(x) of token t
  static constexpr size_t kBlockBytes = kStart + (kOffsetStart ? 4 * kGroupTokens : 0);
};
struct Q4_0Group : Q4_0Rows {
  using Layout = DotGroupLayout<true>;
  static void groups(const uint8_t* const rows[kTileRows], size_t at, int8x16_t g[8]) {
    nibble_quants<offsetof(BlockQ4_0, qs), 0>(rows, at, g);
  }
  // fma(sumi * d_w, d_x, acc), d_x lane kL of dx.
  template <int kL>
  static float32x4_t add(float32x4_t acc, float32x4_t sumi, float32x4_t dw, float32x4_t dx) {
    return vfmaq_laneq_f32(acc, vmulq_f32(sumi, dw), dx, kL);
  }
};
struct Q8_0Group : Q8_0Rows {
  using Layout = DotGroupLayout<false>;
  // fma(d_w * d_x, sumi, acc), d_x lane kL of dx.
  template <int kL>
  static float32x4_t add(float32x4_t acc, float32x4_t sumi, float32x4_t dw, float32x4_t dx) {
    return vfmaq_f32(acc, vmulq_laneq_f32(dw, dx, kL), sumi);
  }
};

// Four rows times C (a multiple of 4) tokens c0 .. c0 + C - 1 of a group,
// the first n_tok real (stored from t0 on).
template <class F>
struct GroupTile {
  template <int C>
  struct Of {
    static void run(const StripArgs& a, const uint8_t* const rows[kTileRows], int n_real, const uint8_t* group,
                    int c0, int64_t t0, int n_tok) {
      using L = typename F::Layout;
      float32x4_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
      for (int64_t b = 0; b < a.n_in / kQK; ++b) {
        const size_t at = F::kBytes * static_cast<size_t>(b);
        int8x16_t g[8];
        F::groups(rows, at, g);
        const float32x4_t dw = row_halves(rows, at);
        const uint8_t* xb = group + static_cast<size_t>(b) * L::kBlockBytes;
        for (int q = 0; q < C / 4; ++q) {
          const float32x4_t dx = load_f32x4(xb + L::kScales + 4 * static_cast<size_t>(c0 + 4 * q));
          int32x4_t starts = vdupq_n_s32(0);
          if constexpr (L::kBlockBytes > L::kStart)
            starts = vreinterpretq_s32_u8(vld1q_u8(xb + L::kStart + 4 * static_cast<size_t>(c0 + 4 * q)));
          repeat<4, true>([&](auto l) {
            constexpr int kL = decltype(l)::value;
            const int c = 4 * q + kL;
            const uint8_t* xq = xb + static_cast<size_t>(c0 + c) * kQK;
            const int32x4_t s = vaddq_s32(dot16(vdupq_laneq_s32(starts, kL), g, load_s8x16(xq)),
                                          dot16(vdupq_n_s32(0), g + 4, load_s8x16(xq + 16)));
            acc[c] = F::template add<kL>(acc[c], vcvtq_f32_s32(s), dw, dx);
          });
        }
      }
      for (int c = 0; c < C && c < n_tok; ++c) store_rows(a.y + static_cast<size_t>(t0 + c) * a.ldy, acc[c], n_real);
    }
  };
};

// Rows in groups of 4, each times every token group in tiles of kWide, 8
// and 4 tokens (the last one possibly padding: zero tokens, not stored).
template <class F, int kWide>
void group_strip(const StripArgs& a) {
  for_token_groups(a, [](const StripArgs& at, const uint8_t* const* rows, int n_real, const uint8_t* group, int64_t g0,
                         int n_group) {
    int c = 0;
    auto tile = [&]<int C>(std::integral_constant<int, C>) {
      while (c < n_group && (C == 4 || c + C <= n_group)) {
        GroupTile<F>::template Of<C>::run(at, rows, n_real, group, c, g0 + c, n_group - c);
        c += C;
      }
    };
    tile(std::integral_constant<int, kWide>{});
    if constexpr (kWide > 8) tile(std::integral_constant<int, 8>{});
    tile(std::integral_constant<int, 4>{});
  });
}

template <class L>
void build_group(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  for (int t = 0; t < kGroupTokens; ++t) {
    const auto* x = t < n ? reinterpret_cast<const BlockQ8_0*>(q + static_cast<size_t>(t) * q_stride) : nullptr;
    for (int64_t b = 0; b < n_in / kQK; ++b) {
      uint8_t* p = out + static_cast<size_t>(b) * L::kBlockBytes;
      const int8x16_t lo = x != nullptr ? vld1q_s8(x[b].qs) : vdupq_n_s8(0);
      const int8x16_t hi = x != nullptr ? vld1q_s8(x[b].qs + 16) : vdupq_n_s8(0);
      vst1q_s8(reinterpret_cast<int8_t*>(p) + kQK * t, lo);
      vst1q_s8(reinterpret_cast<int8_t*>(p) + kQK * t + 16, hi);
      const float d = x != nullptr ? half_to_float(x[b].d) : 0.0f;
      std::memcpy(p + L::kScales + 4 * static_cast<size_t>(t), &d, sizeof(d));
      if constexpr (L::kBlockBytes > L::kStart) {
        const int32_t start = -8 * (vaddlvq_s8(lo) + vaddlvq_s8(hi));
        std::memcpy(p + L::kStart + 4 * static_cast<size_t>(t), &start, sizeof(start));
      }
    }
  }
}

}  // namespace

void strip_q4_0(const StripArgs& a) { legacy_strip<Q4_0Rows>(a); }
void strip_q8_0(const StripArgs& a) { legacy_strip<Q8_0Rows>(a); }
void strip_q4_1(const StripArgs& a) { legacy_strip<Q4_1Rows>(a); }
void strip_q5_0(const StripArgs& a) { tile_strip<LegacyTile<Q5_0Rows>::Of, kLegacyWide>(a); }
void strip_q5_1(const StripArgs& a) { tile_strip<LegacyTile<Q5_1Rows>::Of, kLegacyWide>(a); }

// Tiles of 16 tokens (a whole group): per (row, token, 32 weights), 32
// tokens, 16 x 1024, against tiles of 12: Q4_0 5.44 / 5.59, Q8_0 5.36 /
// 5.62; the strip tiles (12 wide) 6.27 / 6.01.
void group_strip_q4_0(const StripArgs& a) { group_strip<Q4_0Group, 16>(a); }
void group_strip_q8_0(const StripArgs& a) { group_strip<Q8_0Group, 16>(a); }
size_t token_group_bytes_q4_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q4_0Group::Layout::kBlockBytes; }
size_t token_group_bytes_q8_0(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * Q8_0Group::Layout::kBlockBytes; }
void build_token_group_q4_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q4_0Group::Layout>(n_in, q, q_stride, n, out);
}
void build_token_group_q8_0(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  build_group<Q8_0Group::Layout>(n_in, q, q_stride, n, out);
}

}  // namespace kazeia::kernels::arm::dotprod
