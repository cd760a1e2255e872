// The attention tiles' and the gated delta rule's float matrix products
// with NEON: C += A * B (ref::gemm_f32_acc), C = A * B (ref::gemm_f32: the
// same chains started from 0), C = s * C + A * B with the range of |C|
// (ref::gemm_f32_scaled_acc), and the first two with B in IEEE half
// (ref::gemm_f32_f16b(_acc), B converted exactly as it is loaded).
//
// Register tiles of R rows x NV 4-float vectors of C. Four consecutive
// values of an A row come in one load and feed four k steps through FMLA
// by element (vfmaq_laneq_f32), so a 4 x 4 tile (16 accumulators) costs
// 4 loads of A and 16 of B for 64 multiply-adds. Every C element is the
// same chain of fused multiply-adds over k = 0, 1, ... as the reference:
// bit-identical whatever the tiling. Columns past the last whole vector
// (n % 4) run the reference's scalar chain.
#include <arm_neon.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/arm/level_kernels.h"
#include "kernels/arm/neon_util.h"

namespace kazeia::kernels::arm::neon {
namespace {

// What a tile does with C before the products.
enum class Mode { kZero, kAcc, kScaledAcc };

// Rows x vectors of the tiles: 4 x 4 (16 accumulators, 4 A vectors, 4 of
// B: 24 of the 32 registers). Products of one or two rows (a decoded
// token's GQA group against the K / V tiles, the delta rule's state
// update in decode) take up to 8 vectors across: B's rows read in one
// pass of 32 columns instead of two of 16.
constexpr int kRows = 4;
constexpr int kVecs = 4;
constexpr int kFewRows = 2;
constexpr int kFewVecs = 8;

inline float32x4_t load_b(const float* p) { return vld1q_f32(p); }
inline float32x4_t load_b(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
inline float scalar_b(const float* p) { return *p; }
inline float scalar_b(const uint16_t* p) { return half_to_float(*p); }

// min / max of |C| as sign-cleared bit patterns (ref::abs_range's order),
// four lanes each, carried across tiles.
struct Range {
  uint32x4_t lo = vdupq_n_u32(0x7fffffffu), hi = vdupq_n_u32(0u);
  void track(float32x4_t v) {
    const uint32x4_t m = vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7fffffffu));
    lo = vminq_u32(lo, m);
    hi = vmaxq_u32(hi, m);
  }
};

template <int R, int NV, Mode kMode, class BT>
void tile(int64_t k, const float* a, size_t lda, const BT* b, size_t ldb, float* c, size_t ldc, float scale,
          Range* range) {
  float32x4_t acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) {
      if constexpr (kMode == Mode::kZero) {
        acc[r][v] = vdupq_n_f32(0.0f);
      } else {
        acc[r][v] = vld1q_f32(c + r * ldc + 4 * v);
        if constexpr (kMode == Mode::kScaledAcc) acc[r][v] = vmulq_n_f32(acc[r][v], scale);
      }
    }
  }
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    float32x4_t av[R];
    for (int r = 0; r < R; ++r) av[r] = vld1q_f32(a + r * lda + static_cast<size_t>(kk));
    // Step q of the four: B's row kk + q times lane q of each A vector.
    auto step = [&]<int q>(std::integral_constant<int, q>) {
      const BT* brow = b + static_cast<size_t>(kk + q) * ldb;
      float32x4_t bv[NV];
      for (int v = 0; v < NV; ++v) bv[v] = load_b(brow + 4 * v);
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = vfmaq_laneq_f32(acc[r][v], bv[v], av[r], q);
    };
    step(std::integral_constant<int, 0>{});
    step(std::integral_constant<int, 1>{});
    step(std::integral_constant<int, 2>{});
    step(std::integral_constant<int, 3>{});
  }
  for (; kk < k; ++kk) {
    const BT* brow = b + static_cast<size_t>(kk) * ldb;
    float32x4_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load_b(brow + 4 * v);
    for (int r = 0; r < R; ++r) {
      const float32x4_t ar = vdupq_n_f32(a[r * lda + static_cast<size_t>(kk)]);
      for (int v = 0; v < NV; ++v) acc[r][v] = vfmaq_f32(acc[r][v], bv[v], ar);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) {
      vst1q_f32(c + r * ldc + 4 * v, acc[r][v]);
      if constexpr (kMode == Mode::kScaledAcc) range->track(acc[r][v]);
    }
  }
}

template <Mode kMode, class BT>
using TileFn = void (*)(int64_t, const float*, size_t, const BT*, size_t, float*, size_t, float, Range*);

// table[r][v] = tile<r + 1, v + 1>.
template <Mode kMode, class BT, int W, int... Rs, int... Vs>
constexpr void fill_tiles(TileFn<kMode, BT> (*table)[W], std::integer_sequence<int, Rs...>,
                          std::integer_sequence<int, Vs...> vs) {
  auto row = [&]<int r>(std::integral_constant<int, r>) { ((table[r][Vs] = &tile<r + 1, Vs + 1, kMode, BT>), ...); };
  (row(std::integral_constant<int, Rs>{}), ...);
  (void)vs;
}

// Columns [n0, n) of every row: the reference's scalar chains.
template <Mode kMode, class BT>
void tail_columns(int64_t m, int64_t n0, int64_t n, int64_t k, const float* a, size_t lda, const BT* b, size_t ldb,
                  float* c, size_t ldc, float scale, uint32_t* lo, uint32_t* hi) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = n0; j < n; ++j) {
      float* cij = c + static_cast<size_t>(i) * ldc + static_cast<size_t>(j);
      float sum = kMode == Mode::kZero ? 0.0f : kMode == Mode::kScaledAcc ? *cij * scale : *cij;
      for (int64_t kk = 0; kk < k; ++kk)
        sum = std::fma(a[static_cast<size_t>(i) * lda + static_cast<size_t>(kk)],
                       scalar_b(b + static_cast<size_t>(kk) * ldb + static_cast<size_t>(j)), sum);
      *cij = sum;
      if constexpr (kMode == Mode::kScaledAcc) {
        uint32_t bits;
        std::memcpy(&bits, &sum, sizeof bits);
        bits &= 0x7fffffffu;
        *lo = bits < *lo ? bits : *lo;
        *hi = bits > *hi ? bits : *hi;
      }
    }
  }
}

template <Mode kMode, class BT>
void run(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const BT* b, size_t ldb, float* c, size_t ldc,
         float scale, float* abs_min, float* abs_max) {
  static const auto tiles = [] {
    struct Table { TileFn<kMode, BT> f[kRows][kVecs]; } t{};
    fill_tiles<kMode, BT, kVecs>(t.f, std::make_integer_sequence<int, kRows>{}, std::make_integer_sequence<int, kVecs>{});
    return t;
  }();
  static const auto few = [] {
    struct Table { TileFn<kMode, BT> f[kFewRows][kFewVecs]; } t{};
    fill_tiles<kMode, BT, kFewVecs>(t.f, std::make_integer_sequence<int, kFewRows>{},
                                    std::make_integer_sequence<int, kFewVecs>{});
    return t;
  }();
  Range range;
  const int64_t n_vec = m > 0 ? n / 4 * 4 : 0;  // columns the tiles cover
  const bool few_rows = m <= kFewRows;
  const int64_t step = 4 * (few_rows ? kFewVecs : kVecs);
  for (int64_t n0 = 0; n0 < n_vec; n0 += step) {
    const int64_t nv = (n_vec - n0 < step ? n_vec - n0 : step) / 4;
    if (few_rows) {
      few.f[m - 1][nv - 1](k, a, lda, b + n0, ldb, c + n0, ldc, scale, &range);
      continue;
    }
    for (int64_t m0 = 0; m0 < m; m0 += kRows) {
      const int64_t mr = m - m0 < kRows ? m - m0 : kRows;
      tiles.f[mr - 1][nv - 1](k, a + static_cast<size_t>(m0) * lda, lda, b + n0, ldb,
                              c + static_cast<size_t>(m0) * ldc + n0, ldc, scale, &range);
    }
  }
  uint32_t lo = 0, hi = 0;  // the range (kScaledAcc only)
  if constexpr (kMode == Mode::kScaledAcc) lo = vminvq_u32(range.lo), hi = vmaxvq_u32(range.hi);
  if (n_vec < n) tail_columns<kMode, BT>(m, n_vec, n, k, a, lda, b, ldb, c, ldc, scale, &lo, &hi);
  if constexpr (kMode == Mode::kScaledAcc) {
    std::memcpy(abs_min, &lo, sizeof lo);
    std::memcpy(abs_max, &hi, sizeof hi);
  }
}

}  // namespace

void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                  size_t ldc) {
  run<Mode::kAcc, float>(m, n, k, a, lda, b, ldb, c, ldc, 1.0f, nullptr, nullptr);
}
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc) {
  run<Mode::kZero, float>(m, n, k, a, lda, b, ldb, c, ldc, 1.0f, nullptr, nullptr);
}
void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc) {
  run<Mode::kAcc, uint16_t>(m, n, k, a, lda, b, ldb, c, ldc, 1.0f, nullptr, nullptr);
}
void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc) {
  run<Mode::kZero, uint16_t>(m, n, k, a, lda, b, ldb, c, ldc, 1.0f, nullptr, nullptr);
}
void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max) {
  run<Mode::kScaledAcc, float>(m, n, k, a, lda, b, ldb, c, ldc, scale, abs_min, abs_max);
}

}  // namespace kazeia::kernels::arm::neon
