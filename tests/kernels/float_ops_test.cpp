// The float ops built on the kernels' exp: exp_approx against std::exp; the
// online-softmax row of the tiled attention against a double-precision
// softmax, its tiles combined against one pass over the whole row; silu and
// swiglu against double formulas; and every kernel table bit for bit against
// the references (odd lengths, masked tails, -inf start, misaligned starts).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/scratch.h"
#include "kernels/dispatch.h"
#include "kernels/ref/vec_dot.h"
#include "kernel_test_util.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using testing::random_floats;

TEST(SoftmaxOnline, ExpApproxIsWithinThreeTenMillionthsOfStdExp) {
  float worst = 0.0f;
  for (float x = -86.0f; x <= 88.0f; x += 0.00731f) {
    const double want = std::exp(static_cast<double>(x));
    const float rel = static_cast<float>(std::fabs(ref::exp_approx(x) - want) / want);
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, 3e-7f);
  EXPECT_EQ(ref::exp_approx(0.0f), 1.0f);
  EXPECT_EQ(ref::exp_approx(-INFINITY), 0.0f);
  EXPECT_EQ(ref::exp_approx(-100.0f), 0.0f);
  EXPECT_EQ(ref::exp_approx(std::nanf("")), 0.0f);
}

TEST(SoftmaxOnline, TilesCombineToTheSoftmaxOfTheWholeRow) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  const int64_t n = 150, tile = 64;
  const float scale = 0.125f;
  std::vector<float> s(n);
  for (auto& v : s) v = dist(rng);
  // Reference in double.
  double mx = -INFINITY;
  for (float v : s) mx = std::max(mx, static_cast<double>(v) * scale);
  double total = 0.0;
  for (float v : s) total += std::exp(static_cast<double>(v) * scale - mx);
  // Online: o accumulates p * value with value = j (a closed-form check of
  // the weights' combination).
  float m = -INFINITY, l = 0.0f, o = 0.0f;
  std::vector<float> p(tile);
  for (int64_t j0 = 0; j0 < n; j0 += tile) {
    const int64_t k = std::min(tile, n - j0);
    float alpha;
    const float sum = ref::softmax_online_row(s.data() + j0, k, tile, scale, &m, &alpha, p.data());
    l = l * alpha + sum;
    o *= alpha;
    for (int64_t j = 0; j < tile; ++j) o += p[j] * static_cast<float>(j0 + j);
    for (int64_t j = k; j < tile; ++j) EXPECT_EQ(p[j], 0.0f);  // masked tail
  }
  EXPECT_FLOAT_EQ(m, static_cast<float>(mx));
  double want = 0.0;
  for (int64_t j = 0; j < n; ++j) want += std::exp(static_cast<double>(s[j]) * scale - mx) / total * j;
  EXPECT_NEAR(o / l, want, 1e-4 * std::fabs(want));
}

TEST(SoftmaxOnline, EveryTableEqualsTheReferenceBitForBit) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->softmax_online_row, nullptr) << table->name;
    for (int64_t n : {1, 7, 16, 17, 63, 64}) {
      for (int64_t valid : {int64_t{1}, n / 2 + 1, n}) {
        for (float m0 : {-INFINITY, 3.0f, 100.0f}) {
          std::vector<float> s(static_cast<size_t>(n) + 1);
          for (auto& v : s) v = dist(rng);
          std::vector<float> p_ref(static_cast<size_t>(n), -1.0f), p_got = p_ref;
          float m_ref = m0, m_got = m0, a_ref, a_got;
          // s + 1: a misaligned start.
          const float sum_ref = ref::softmax_online_row(s.data() + 1, valid, n, 0.0884f, &m_ref, &a_ref, p_ref.data());
          const float sum_got = table->softmax_online_row(s.data() + 1, valid, n, 0.0884f, &m_got, &a_got, p_got.data());
          const auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; };
          EXPECT_TRUE(same(sum_ref, sum_got)) << table->name << " n=" << n << " valid=" << valid << " m0=" << m0;
          EXPECT_TRUE(same(m_ref, m_got)) << table->name;
          EXPECT_TRUE(same(a_ref, a_got)) << table->name;
          EXPECT_EQ(0, std::memcmp(p_ref.data(), p_got.data(), p_ref.size() * sizeof(float))) << table->name << " n=" << n;
        }
      }
    }
  }
}

TEST(SiluSwiglu, ReferenceMatchesDoubleFormulas) {
  std::vector<float> x, up;
  for (float v = -30.0f; v <= 30.0f; v += 0.013f) x.push_back(v);
  for (size_t i = 0; i < x.size(); ++i) up.push_back(0.5f + static_cast<float>(i % 7) * 0.25f);
  std::vector<float> s(x.size()), g(x.size());
  ref::silu_approx(x.data(), static_cast<int64_t>(x.size()), s.data());
  ref::swiglu_approx(x.data(), up.data(), static_cast<int64_t>(x.size()), g.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = x[i] / (1.0 + std::exp(-static_cast<double>(x[i])));
    EXPECT_NEAR(s[i], want, 5e-7 * std::fabs(want) + 1e-30) << x[i];
    EXPECT_NEAR(g[i], want * up[i], 6e-7 * std::fabs(want * up[i]) + 1e-30) << x[i];
  }
  // sigmoid_mul: up * sigmoid(x), to the same accuracy as silu.
  std::vector<float> sm(x.size());
  ref::sigmoid_mul_approx(x.data(), up.data(), static_cast<int64_t>(x.size()), sm.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = up[i] / (1.0 + std::exp(-static_cast<double>(x[i])));
    EXPECT_NEAR(sm[i], want, 5e-7 * std::fabs(want) + 1e-30) << x[i];
  }
  // Extremes: silu(x) -> x for large x, -> -0 for very negative x; no NaN.
  const float ext[4] = {100.0f, -100.0f, 0.0f, -87.5f};
  float out[4];
  ref::silu_approx(ext, 4, out);
  EXPECT_EQ(out[0], 100.0f);
  EXPECT_LE(std::fabs(out[1]), 1e-35f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_TRUE(std::isfinite(out[3]));
}

// swiglu over rows (the fused feed-forward's combine): every table equals
// the reference row by row, with and without the streaming hint, for widths
// that are and are not whole lines, into line-aligned and shifted outputs.
TEST(SiluSwiglu, RowsEqualTheReferenceInEveryTable) {
  std::mt19937 rng(10);
  std::normal_distribution<float> dist(0.0f, 6.0f);
  const int64_t n_rows = 9;
  const size_t ld_in = 40, ld_out = 48;
  std::vector<float> g(n_rows * ld_in), u(g.size());
  for (auto& v : g) v = dist(rng);
  for (auto& v : u) v = dist(rng);
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->swiglu_rows, nullptr) << table->name;
    for (int64_t width : {13, 16, 32, 40}) {
      for (size_t shift : {size_t{0}, size_t{3}}) {
        for (bool stream : {false, true}) {
          std::vector<float, CacheLineAllocator<float>> want(n_rows * ld_out + shift, -1.0f), got(want.size(), -1.0f);
          for (int64_t r = 0; r < n_rows; ++r)
            ref::swiglu_approx(g.data() + r * ld_in, u.data() + r * ld_in, width, want.data() + shift + r * ld_out);
          table->swiglu_rows(g.data(), u.data(), n_rows, width, ld_in, got.data() + shift, ld_out, stream);
          // Equal outputs, and nothing written between the rows.
          EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
              << table->name << " width " << width << " shift " << shift << (stream ? " stream" : "");
        }
      }
    }
  }
}

TEST(SiluSwiglu, EveryTableEqualsTheReferenceBitForBit) {
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 6.0f);
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->silu, nullptr) << table->name;
    ASSERT_NE(table->swiglu, nullptr) << table->name;
    for (int64_t n : {1, 5, 16, 17, 100, 1031}) {
      std::vector<float> x(static_cast<size_t>(n) + 1), up(x.size());
      for (auto& v : x) v = dist(rng);
      for (auto& v : up) v = dist(rng);
      std::vector<float> a(static_cast<size_t>(n)), b(a.size());
      ref::silu_approx(x.data() + 1, n, a.data());
      table->silu(x.data() + 1, n, b.data());
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << table->name << " silu n=" << n;
      ref::swiglu_approx(x.data() + 1, up.data() + 1, n, a.data());
      table->swiglu(x.data() + 1, up.data() + 1, n, b.data());
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << table->name << " swiglu n=" << n;
      ref::sigmoid_mul_approx(x.data() + 1, up.data() + 1, n, a.data());
      table->sigmoid_mul(x.data() + 1, up.data() + 1, n, b.data());
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << table->name << " sigmoid_mul n=" << n;
      // In place (out aliases the input), as the forward passes call it.
      std::vector<float> inplace(x.begin() + 1, x.end());
      table->silu(inplace.data(), n, inplace.data());
      ref::silu_approx(x.data() + 1, n, a.data());
      EXPECT_EQ(0, std::memcmp(a.data(), inplace.data(), a.size() * sizeof(float))) << table->name << " in place";
    }
  }
}

// conv_silu: the reference against a double-precision conv + silu, then
// every table bit for bit (odd channel counts, misaligned rows and taps, a
// tap stride wider than the row, 1 to 4 taps).
TEST(ConvSilu, ReferenceMatchesDoubleFormula) {
  const int64_t n = 37, k = 4;
  const size_t stride = 41;
  const auto taps = random_floats(stride * k, 4, -3, 3), x = random_floats(static_cast<size_t>(n * k), 5, -3, 3);
  const float* rows[4];
  for (int64_t t = 0; t < k; ++t) rows[t] = x.data() + t * n;
  std::vector<float> out(static_cast<size_t>(n));
  ref::conv_silu(rows, taps.data(), stride, k, n, out.data());
  for (int64_t c = 0; c < n; ++c) {
    double sum = 0.0;
    for (int64_t t = 0; t < k; ++t) sum += static_cast<double>(taps[t * stride + c]) * rows[t][c];
    const double want = sum / (1.0 + std::exp(-sum));
    EXPECT_NEAR(out[static_cast<size_t>(c)], want, 2e-6 * (std::fabs(want) + 1.0)) << c;
  }
}

TEST(ConvSilu, EveryTableEqualsTheReferenceBitForBit) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->conv_silu, nullptr) << table->name;
    for (int64_t n : {1, 7, 16, 17, 100, 1031}) {
      for (int64_t k : {1, 2, 4}) {
        const size_t stride = static_cast<size_t>(n) + 3;
        const auto seed = static_cast<uint32_t>(n * 8 + k);
        const auto taps = random_floats(stride * static_cast<size_t>(k) + 1, seed, -4, 4);
        const auto x = random_floats(static_cast<size_t>(n * k) + 1, seed + 1, -4, 4);
        const float* rows[4];
        for (int64_t t = 0; t < k; ++t) rows[t] = x.data() + 1 + t * n;  // misaligned
        std::vector<float> a(static_cast<size_t>(n)), b(a.size());
        ref::conv_silu(rows, taps.data() + 1, stride, k, n, a.data());
        table->conv_silu(rows, taps.data() + 1, stride, k, n, b.data());
        EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
            << table->name << " n=" << n << " taps=" << k;
      }
    }
  }
}

// abs_range: against a plain loop over |x| (no NaN), with NaN and
// infinities, and every table against the reference (odd lengths,
// misaligned starts).
TEST(AbsRange, ReferenceIsTheMinAndMaxMagnitude) {
  for (int64_t n : {1, 8, 9, 100}) {
    const auto x = random_floats(static_cast<size_t>(n), static_cast<uint32_t>(n), -6, 6);
    float want_min = INFINITY, want_max = 0.0f;
    for (float v : x) want_min = std::min(want_min, std::fabs(v)), want_max = std::max(want_max, std::fabs(v));
    float mn, mx;
    ref::abs_range(x.data(), n, &mn, &mx);
    EXPECT_EQ(mn, want_min) << n;
    EXPECT_EQ(mx, want_max) << n;
  }
  const float special[5] = {-0.0f, 2.0f, -INFINITY, 1e-30f, -3.0f};
  float mn, mx;
  ref::abs_range(special, 5, &mn, &mx);
  EXPECT_EQ(mn, 0.0f);
  EXPECT_EQ(mx, INFINITY);
  const float with_nan[3] = {1.0f, NAN, -5.0f};
  ref::abs_range(with_nan, 3, &mn, &mx);
  EXPECT_EQ(mn, 1.0f);
  EXPECT_TRUE(std::isnan(mx));
}

TEST(AbsRange, EveryTableEqualsTheReference) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->abs_range, nullptr) << table->name;
    for (int64_t n : {1, 5, 16, 17, 31, 100, 16384 + 3}) {
      auto x = random_floats(static_cast<size_t>(n) + 1, static_cast<uint32_t>(n), -8, 8);
      if (n > 20) x[17] = NAN;  // a NaN: max is a NaN in every table
      float a_min, a_max, b_min, b_max;
      ref::abs_range(x.data() + 1, n, &a_min, &a_max);
      table->abs_range(x.data() + 1, n, &b_min, &b_max);
      EXPECT_EQ(std::bit_cast<uint32_t>(a_min), std::bit_cast<uint32_t>(b_min)) << table->name << " n=" << n;
      EXPECT_EQ(std::bit_cast<uint32_t>(a_max), std::bit_cast<uint32_t>(b_max)) << table->name << " n=" << n;
    }
  }
}

// scale: the reference is x * s per element; every table gives the same
// bits (odd lengths, misaligned starts, in place), tails left untouched.
TEST(Scale, EveryTableEqualsTheReferenceBitForBit) {
  const auto probe = random_floats(4, 1, -1, 1);
  float want_one;
  ref::scale(probe.data(), 0.375f, 1, &want_one);
  EXPECT_EQ(want_one, probe[0] * 0.375f);
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->scale, nullptr) << table->name;
    for (int64_t n : {1, 5, 15, 16, 17, 33, 128, 1031}) {
      const auto x = random_floats(static_cast<size_t>(n) + 1, static_cast<uint32_t>(n), -10, 10);
      const float s = 0.1f + 0.01f * static_cast<float>(n);
      std::vector<float> want(static_cast<size_t>(n) + 2, -7.0f), got(static_cast<size_t>(n) + 2, -7.0f);
      ref::scale(x.data() + 1, s, n, want.data() + 1);
      table->scale(x.data() + 1, s, n, got.data() + 1);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(want[i]), std::bit_cast<uint32_t>(got[i])) << table->name << " n=" << n << " i=" << i;
      std::vector<float> in_place(x.begin() + 1, x.end());
      table->scale(in_place.data(), s, n, in_place.data());
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(want[static_cast<size_t>(i) + 1]), std::bit_cast<uint32_t>(in_place[static_cast<size_t>(i)]))
            << table->name << " in place, n=" << n;
    }
  }
}

// out = (x * s) op y for scale_mul and scale_add: every table gives the
// reference's bits, with out aliasing x and with out aliasing y, and leaves
// the values around out alone.
void expect_scale_combine_equals_reference(ScaleCombineFn ref_fn, ScaleCombineFn KernelTable::*field,
                                           const char* name) {
  for (const KernelTable* table : available_kernel_tables()) {
    const ScaleCombineFn fn = table->*field;
    ASSERT_NE(fn, nullptr) << table->name << " " << name;
    for (int64_t n : {1, 5, 15, 16, 17, 33, 128, 1031}) {
      const auto x = random_floats(static_cast<size_t>(n) + 1, static_cast<uint32_t>(n), -10, 10);
      const auto y = random_floats(static_cast<size_t>(n) + 3, static_cast<uint32_t>(n + 7), -2, 2);
      const float s = -0.3f + 0.01f * static_cast<float>(n);
      std::vector<float> want(static_cast<size_t>(n) + 2, -7.0f), got(static_cast<size_t>(n) + 2, -7.0f);
      ref_fn(x.data() + 1, s, y.data() + 3, n, want.data() + 1);
      fn(x.data() + 1, s, y.data() + 3, n, got.data() + 1);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(want[i]), std::bit_cast<uint32_t>(got[i]))
            << table->name << " " << name << " n=" << n << " i=" << i;
      std::vector<float> onto_x(x.begin() + 1, x.end()), onto_y(y.begin() + 3, y.end());
      fn(onto_x.data(), s, y.data() + 3, n, onto_x.data());
      fn(x.data() + 1, s, onto_y.data(), n, onto_y.data());
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t w = std::bit_cast<uint32_t>(want[static_cast<size_t>(i) + 1]);
        ASSERT_EQ(w, std::bit_cast<uint32_t>(onto_x[static_cast<size_t>(i)])) << table->name << " " << name << " onto x, n=" << n;
        ASSERT_EQ(w, std::bit_cast<uint32_t>(onto_y[static_cast<size_t>(i)])) << table->name << " " << name << " onto y, n=" << n;
      }
    }
  }
}

// scale_mul (RMSNorm's scaling): the reference is (x * s) * w per element.
TEST(ScaleMul, EveryTableEqualsTheReferenceBitForBit) {
  const auto probe = random_floats(4, 2, -1, 1);
  float want_one;
  ref::scale_mul(probe.data(), 0.375f, probe.data() + 1, 1, &want_one);
  EXPECT_EQ(want_one, (probe[0] * 0.375f) * probe[1]);
  expect_scale_combine_equals_reference(ref::scale_mul, &KernelTable::scale_mul, "scale_mul");
}

// scale_add (the delta rule's row updates): the reference is x * s + y per
// element, two roundings.
TEST(ScaleAdd, EveryTableEqualsTheReferenceBitForBit) {
  const auto probe = random_floats(4, 3, -1, 1);
  float want_one;
  ref::scale_add(probe.data(), -0.375f, probe.data() + 1, 1, &want_one);
  const float product = probe[0] * -0.375f;  // rounded on its own
  EXPECT_EQ(want_one, product + probe[1]);
  expect_scale_combine_equals_reference(ref::scale_add, &KernelTable::scale_add, "scale_add");
}

// transpose_f32: the reference against the definition, then every table
// bit for bit over sizes around the 16 x 16 block, leading dimensions wider
// than the rows, misaligned starts; what lies between dst's rows stays.
TEST(TransposeF32, EveryTableEqualsTheReference) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->transpose_f32, nullptr) << table->name;
    for (int64_t rows : {1, 2, 3, 4, 6, 13, 15, 16, 17, 33}) {
      for (int64_t cols : {1, 7, 16, 31, 128, 130}) {
        const size_t ld_src = static_cast<size_t>(cols) + 3, ld_dst = static_cast<size_t>(rows) + 5;
        const auto src = random_floats(1 + static_cast<size_t>(rows) * ld_src, static_cast<uint32_t>(rows * 131 + cols), -4, 4);
        std::vector<float> want(2 + static_cast<size_t>(cols) * ld_dst, -9.0f), got(want.size(), -9.0f);
        ref::transpose_f32(src.data() + 1, ld_src, rows, cols, want.data() + 2, ld_dst);
        for (int64_t j = 0; j < rows; ++j)
          for (int64_t x = 0; x < cols; ++x)
            ASSERT_EQ(want[2 + static_cast<size_t>(x) * ld_dst + static_cast<size_t>(j)],
                      src[1 + static_cast<size_t>(j) * ld_src + static_cast<size_t>(x)]);
        table->transpose_f32(src.data() + 1, ld_src, rows, cols, got.data() + 2, ld_dst);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
            << table->name << " rows=" << rows << " cols=" << cols;
      }
    }
  }
}

// sum_squares (RMSNorm's sum): the reference against a long double sum of
// the float-rounded squares, then every table bit for bit (odd lengths,
// misaligned starts).
TEST(SumSquares, ReferenceMatchesALongDoubleSum) {
  for (int64_t n : {1, 7, 8, 9, 1024, 3001}) {
    const auto x = random_floats(static_cast<size_t>(n), static_cast<uint32_t>(n), -4, 4);
    long double want = 0;
    for (float v : x) want += static_cast<long double>(v * v);
    EXPECT_NEAR(static_cast<double>(ref::sum_squares(x.data(), n)), static_cast<double>(want),
                1e-14 * static_cast<double>(want))
        << n;
  }
}

TEST(SumSquares, EveryTableEqualsTheReferenceBitForBit) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->sum_squares, nullptr) << table->name;
    for (int64_t n : {1, 3, 8, 15, 16, 17, 64, 128, 1031}) {
      const auto x = random_floats(static_cast<size_t>(n) + 1, static_cast<uint32_t>(n), -10, 10);
      const double a = ref::sum_squares(x.data() + 1, n), b = table->sum_squares(x.data() + 1, n);
      EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)) << table->name << " n=" << n;
    }
  }
}

TEST(ReadStream, SumsTheWordsInEveryTable) {
  // Words 1, 2, 3, ...: the sum of the first k is k (k + 1) / 2.
  std::vector<uint64_t> words(1000);
  for (size_t i = 0; i < words.size(); ++i) words[i] = i + 1;
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  EXPECT_EQ(ref::read_stream(bytes, 1000 * 8), 1000u * 1001u / 2u);
  EXPECT_EQ(ref::read_stream(bytes, 37 * 8 + 5), 37u * 38u / 2u);  // a partial last word is ignored
  std::mt19937_64 rng(2);
  std::vector<uint8_t> buf(9000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->read_stream, nullptr) << table->name;
    for (size_t n : {size_t{0}, size_t{7}, size_t{8}, size_t{255}, size_t{256}, size_t{1000}, size_t{8191}}) {
      for (size_t offset : {size_t{0}, size_t{3}}) {
        EXPECT_EQ(table->read_stream(buf.data() + offset, n), ref::read_stream(buf.data() + offset, n))
            << table->name << " n=" << n << " offset=" << offset;
      }
    }
  }
}

// read_into_cache reads every line of its two ranges and nothing outside
// them: each range starts right after an inaccessible page or ends right
// before one (a read past either edge is a SIGSEGV), over sizes that leave
// every position within a line, misaligned starts and empty ranges.
TEST(ReadIntoCache, ReadsNothingOutsideItsRanges) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* const base = static_cast<char*>(map);
  ASSERT_EQ(0, mprotect(base, page, PROT_NONE));
  ASSERT_EQ(0, mprotect(base + 2 * page, page, PROT_NONE));
  char* const begin = base + page;
  char* const end = base + 2 * page;
  for (size_t n = 0; n <= 300; ++n) {
    for (size_t m : {size_t{0}, size_t{1}, n / 2, n}) {
      read_into_cache(end - n, n, begin, m);   // a ends at the guard page, b starts after the other
      read_into_cache(begin, n, end - m, m);
      read_into_cache(begin + 5, n, end - m - 3, m);
    }
  }
  read_into_cache(begin, page, begin, page);  // the whole page, twice
  munmap(map, 3 * page);
  SUCCEED();
}

// Every half, and floats over the whole bit space (ties, the overflow edge
// at 65520, subnormal halves, NaN payloads, infinities), through every
// table's row conversions, bit for bit against the reference; lengths that
// leave every tail size, from misaligned starts.
TEST(HalfRows, EveryTableEqualsTheReferenceBitForBit) {
  std::vector<uint16_t> halves(65536 + 3);
  for (uint32_t i = 0; i < 65536; ++i) halves[i + 3] = static_cast<uint16_t>(i);
  std::vector<float> floats;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4093) floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (uint32_t h = 0; h < 65536; ++h) {
    // Each half's neighbourhood in float: the value, the ties either side.
    const uint32_t f = std::bit_cast<uint32_t>(fp16_to_fp32(static_cast<uint16_t>(h)));
    for (uint32_t d : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u}) {
      floats.push_back(std::bit_cast<float>(f + d));
      floats.push_back(std::bit_cast<float>(f - d));
    }
  }
  for (float v : {65504.0f, 65519.99f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, INFINITY, -INFINITY})
    floats.push_back(v);
  const int64_t nh = 65536, nf = static_cast<int64_t>(floats.size());
  std::vector<float> want_f(static_cast<size_t>(nh)), got_f(static_cast<size_t>(nh) + 1);
  std::vector<uint16_t> want_h(static_cast<size_t>(nf)), got_h(static_cast<size_t>(nf) + 1);
  ref::fp16_to_fp32_row(halves.data() + 3, nh, want_f.data());
  ref::fp32_to_fp16_row(floats.data(), nf, want_h.data());
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->fp16_to_fp32_row, nullptr) << table->name;
    ASSERT_NE(table->fp32_to_fp16_row, nullptr) << table->name;
    table->fp16_to_fp32_row(halves.data() + 3, nh, got_f.data() + 1);
    EXPECT_EQ(0, std::memcmp(want_f.data(), got_f.data() + 1, want_f.size() * sizeof(float))) << table->name;
    table->fp32_to_fp16_row(floats.data(), nf, got_h.data() + 1);
    for (int64_t i = 0; i < nf; ++i) {
      if (want_h[static_cast<size_t>(i)] != got_h[static_cast<size_t>(i) + 1]) {
        ADD_FAILURE() << table->name << " float bits " << std::hex << std::bit_cast<uint32_t>(floats[static_cast<size_t>(i)])
                      << ": " << got_h[static_cast<size_t>(i) + 1] << " != " << want_h[static_cast<size_t>(i)];
        break;
      }
    }
    // Short rows leave every tail length; nothing past n is written.
    for (int64_t n = 0; n <= 37; ++n) {
      std::vector<float> f(static_cast<size_t>(n) + 1, -7.0f);
      std::vector<uint16_t> h(static_cast<size_t>(n) + 1, 0xABCD);
      table->fp16_to_fp32_row(halves.data() + 3 + 15360, n, f.data());
      table->fp32_to_fp16_row(floats.data() + 1000, n, h.data());
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(std::bit_cast<uint32_t>(f[static_cast<size_t>(i)]), std::bit_cast<uint32_t>(want_f[static_cast<size_t>(15360 + i)]))
            << table->name << " n=" << n;
        EXPECT_EQ(h[static_cast<size_t>(i)], want_h[static_cast<size_t>(1000 + i)]) << table->name << " n=" << n;
      }
      EXPECT_EQ(f[static_cast<size_t>(n)], -7.0f) << table->name << " n=" << n;
      EXPECT_EQ(h[static_cast<size_t>(n)], 0xABCD) << table->name << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace kazeia::kernels
