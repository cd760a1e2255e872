// The online-softmax row of the tiled attention: its exp against std::exp,
// one row against a double-precision softmax, the online combination of
// tiles against one pass over the whole row, and every kernel table bit
// for bit against the reference (odd lengths, masked tails, -inf start).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels {
namespace {

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

}  // namespace
}  // namespace kazeia::kernels
