// Norms, rotary embedding, softmax and elementwise ops against closed forms
// evaluated in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace kazeia::kernels {
namespace {

using testing::random_floats;

// ------------------------------------------------------------------ RMSNorm

TEST(RmsNorm, MatchesClosedForm) {
  for (int64_t n : {1, 7, 64, 1000}) {
    const auto x = random_floats(static_cast<size_t>(n), 1, -3, 3);
    const auto w = random_floats(static_cast<size_t>(n), 2, 0.5, 1.5);
    std::vector<float> y(static_cast<size_t>(n));
    rms_norm(x.data(), w.data(), n, 1e-6f, y.data());
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
    for (int64_t i = 0; i < n; ++i) {
      const double expect = x[i] * inv * w[i];
      EXPECT_NEAR(y[i], expect, 1e-6 * std::fabs(expect) + 1e-7) << "n " << n << " i " << i;
    }
  }
}

TEST(RmsNorm, EpsDominatesForTinyInputAndNullWeightMeansOne) {
  const std::vector<float> x = {1e-6f, -2e-6f, 3e-6f};
  std::vector<float> y(3), y_w(3);
  const std::vector<float> ones(3, 1.0f);
  rms_norm(x.data(), nullptr, 3, 1e-2f, y.data());
  rms_norm(x.data(), ones.data(), 3, 1e-2f, y_w.data());
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(y[i], x[i] / std::sqrt(1e-2), 1e-9);
    EXPECT_EQ(y[i], y_w[i]);
  }
}

TEST(RmsNorm, PerHeadSharesTheWeightAndAllowsInPlace) {
  const int64_t heads = 3, dim = 16;
  auto x = random_floats(static_cast<size_t>(heads * dim), 3);
  const auto w = random_floats(static_cast<size_t>(dim), 4);
  std::vector<float> expect(x.size());
  for (int64_t h = 0; h < heads; ++h) rms_norm(x.data() + h * dim, w.data(), dim, 1e-6f, expect.data() + h * dim);
  rms_norm_heads(x.data(), w.data(), heads, dim, 1e-6f, x.data());  // in place
  EXPECT_EQ(0, std::memcmp(x.data(), expect.data(), x.size() * sizeof(float)));
}

TEST(L2Norm, MatchesClosedFormAndClampsAtEps) {
  const auto x = random_floats(50, 5, -2, 2);
  std::vector<float> y(50);
  l2_norm(x.data(), 50, 1e-6f, y.data());
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  for (int i = 0; i < 50; ++i) EXPECT_NEAR(y[i], x[i] / std::sqrt(ss), 1e-6);

  const std::vector<float> zero(8, 0.0f);
  std::vector<float> z(8, 1.0f);
  l2_norm(zero.data(), 8, 1e-6f, z.data());
  for (float v : z) EXPECT_EQ(v, 0.0f);
  // |x| below eps: divided by eps, not by |x|.
  const std::vector<float> tiny = {3e-7f, 4e-7f};
  std::vector<float> t(2);
  l2_norm(tiny.data(), 2, 1e-6f, t.data());
  EXPECT_NEAR(t[0], 0.3, 1e-6);
  EXPECT_NEAR(t[1], 0.4, 1e-6);
}

// --------------------------------------------------------------------- RoPE

// theta_i = pos * base^(-2i / n_rot), evaluated in double.
std::vector<double> rope_closed_form(const std::vector<float>& x, int64_t heads, int64_t dim,
                                     int64_t n_rot, int64_t pos, double base, bool neox) {
  std::vector<double> out(x.begin(), x.end());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      const double theta = pos * std::pow(base, -2.0 * i / n_rot);
      const int64_t a = h * dim + (neox ? i : 2 * i);
      const int64_t b = a + (neox ? n_rot / 2 : 1);
      out[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
      out[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
    }
  }
  return out;
}

// The float angle recurrence drifts from the exact angle by about
// (i + 1) float roundings of a value <= pos: allow that much.
double rope_tolerance(int64_t pos, int64_t n_rot) {
  return 1e-6 + 1.2e-7 * static_cast<double>(pos) * static_cast<double>(n_rot / 2 + 1);
}

TEST(Rope, NeoxAndNormMatchClosedForm) {
  for (bool neox : {true, false}) {
    for (int64_t pos : {1, 7, 100, 4000}) {
      for (auto [dim, n_rot] : {std::pair<int64_t, int64_t>{64, 64}, {32, 8}, {128, 128}}) {
        SCOPED_TRACE(::testing::Message() << (neox ? "neox" : "norm") << " pos " << pos << " dim "
                                          << dim << " n_rot " << n_rot);
        const int64_t heads = 3;
        auto x = random_floats(static_cast<size_t>(heads * dim), static_cast<uint32_t>(pos));
        const auto expect = rope_closed_form(x, heads, dim, n_rot, pos, 1e6, neox);
        Status st = neox ? rope_neox(x.data(), heads, dim, n_rot, pos, 1e6f)
                         : rope_norm(x.data(), heads, dim, n_rot, pos, 1e6f);
        ASSERT_TRUE(st.ok()) << st.to_string();
        for (size_t i = 0; i < x.size(); ++i) {
          EXPECT_NEAR(x[i], expect[i], rope_tolerance(pos, n_rot)) << "element " << i;
        }
      }
    }
  }
}

// ggml advances the angle by repeated float multiplication
// (ggml_rope_cache_init: theta *= theta_scale), not with a pow per pair; at
// large positions the two differ by ~1e-4 rad, which is visible in the
// logits. This pins the convention bit for bit (and checks that the
// alternative would indeed differ, so the test can fail).
TEST(Rope, AnglesFollowGgmlsFloatRecurrence) {
  const int64_t dim = 128, n_rot = 128, pos = 3999;
  const float base = 1e6f;
  const auto x0 = random_floats(dim, 18);
  auto x = x0;
  ASSERT_TRUE(rope_neox(x.data(), 1, dim, n_rot, pos, base).ok());
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(n_rot));
  float theta = static_cast<float>(pos);
  int differs_from_pow = 0;
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const float c = std::cos(theta), sn = std::sin(theta);
    const float a = x0[i], b = x0[i + n_rot / 2];
    EXPECT_EQ(x[i], a * c - b * sn) << i;
    EXPECT_EQ(x[i + n_rot / 2], a * sn + b * c) << i;
    const float theta_pow = static_cast<float>(pos) * std::pow(theta_scale, static_cast<float>(i));
    if (std::cos(theta_pow) != c || std::sin(theta_pow) != sn) ++differs_from_pow;
    theta *= theta_scale;
  }
  EXPECT_GT(differs_from_pow, 0);
}

TEST(Rope, PositionZeroIsTheIdentity) {
  const auto x0 = random_floats(4 * 64, 11);
  auto a = x0, b = x0;
  ASSERT_TRUE(rope_neox(a.data(), 4, 64, 64, 0, 1e4f).ok());
  ASSERT_TRUE(rope_norm(b.data(), 4, 64, 32, 0, 1e4f).ok());
  for (size_t i = 0; i < x0.size(); ++i) {
    EXPECT_EQ(a[i], x0[i]);
    EXPECT_EQ(b[i], x0[i]);
  }
}

TEST(Rope, RotatingByPThenQEqualsPPlusQ) {
  for (auto [p, q] : {std::pair<int64_t, int64_t>{3, 5}, {17, 100}, {250, 250}}) {
    const auto x0 = random_floats(2 * 64, 12);
    auto twice = x0, once = x0;
    ASSERT_TRUE(rope_neox(twice.data(), 2, 64, 64, p, 1e6f).ok());
    ASSERT_TRUE(rope_neox(twice.data(), 2, 64, 64, q, 1e6f).ok());
    ASSERT_TRUE(rope_neox(once.data(), 2, 64, 64, p + q, 1e6f).ok());
    for (size_t i = 0; i < x0.size(); ++i) {
      EXPECT_NEAR(twice[i], once[i], 2 * rope_tolerance(p + q, 64)) << "p " << p << " q " << q;
    }
  }
}

TEST(Rope, PartialRotaryLeavesTheTailUntouchedAndKeepsNorms) {
  const int64_t heads = 4, dim = 32, n_rot = 8;  // qwen35: first 8 of 32 dims
  const auto x0 = random_floats(static_cast<size_t>(heads * dim), 13);
  auto x = x0;
  ASSERT_TRUE(rope_neox(x.data(), heads, dim, n_rot, 29, 1e7f).ok());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = n_rot; i < dim; ++i) EXPECT_EQ(x[h * dim + i], x0[h * dim + i]);
    // A rotation keeps each pair's length.
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      const int64_t a = h * dim + i, b = a + n_rot / 2;
      EXPECT_NEAR(std::hypot(x[a], x[b]), std::hypot(x0[a], x0[b]), 1e-6);
    }
  }
}

TEST(Rope, NormPairingIsNeoxOnInterleavedDims) {
  // rope_norm on (x0, x1, x2, x3, ...) = rope_neox on the permutation that
  // puts the pair (2i, 2i+1) at (i, i + n_rot/2): same arithmetic, same bits.
  const int64_t dim = 16, n_rot = 16;
  const auto x = random_floats(dim, 14);
  std::vector<float> perm(dim);
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    perm[i] = x[2 * i];
    perm[i + n_rot / 2] = x[2 * i + 1];
  }
  auto a = x;
  ASSERT_TRUE(rope_norm(a.data(), 1, dim, n_rot, 42, 1e4f).ok());
  ASSERT_TRUE(rope_neox(perm.data(), 1, dim, n_rot, 42, 1e4f).ok());
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    EXPECT_EQ(a[2 * i], perm[i]);
    EXPECT_EQ(a[2 * i + 1], perm[i + n_rot / 2]);
  }
}

// The two steps apart (a model computes a position's angles once for all
// its layers) give rope_neox / rope_norm's bits, and the angles are the
// float recurrence's (pinned against ggml's convention above).
TEST(Rope, AnglesThenRotationEqualsRopeAtThePosition) {
  for (bool neox : {true, false}) {
    for (int64_t pos : {0, 5, 1234}) {
      for (auto [dim, n_rot] : {std::pair<int64_t, int64_t>{64, 64}, {32, 8}, {128, 128}, {256, 64}}) {
        SCOPED_TRACE(::testing::Message() << (neox ? "neox" : "norm") << " pos " << pos << " dim " << dim
                                          << " n_rot " << n_rot);
        const int64_t heads = 3;
        const auto x0 = random_floats(static_cast<size_t>(heads * dim), static_cast<uint32_t>(pos + dim));
        auto whole = x0, apart = x0;
        ASSERT_TRUE((neox ? rope_neox(whole.data(), heads, dim, n_rot, pos, 1e6f)
                          : rope_norm(whole.data(), heads, dim, n_rot, pos, 1e6f)).ok());
        std::vector<float> cs(static_cast<size_t>(n_rot / 2)), sn(cs.size());
        rope_angles(pos, n_rot, 1e6f, cs.data(), sn.data());
        float theta = static_cast<float>(pos);
        const float theta_scale = std::pow(1e6f, -2.0f / static_cast<float>(n_rot));
        for (size_t i = 0; i < cs.size(); ++i, theta *= theta_scale) {
          ASSERT_EQ(cs[i], std::cos(theta)) << i;
          ASSERT_EQ(sn[i], std::sin(theta)) << i;
        }
        ASSERT_TRUE((neox ? rope_neox_angles(apart.data(), heads, dim, n_rot, cs.data(), sn.data())
                          : rope_norm_angles(apart.data(), heads, dim, n_rot, cs.data(), sn.data())).ok());
        for (size_t i = 0; i < x0.size(); ++i) ASSERT_EQ(apart[i], whole[i]) << "element " << i;
        if (pos > 0) {
          EXPECT_NE(apart, x0);
        }
      }
    }
  }
  std::vector<float> x(64), cs(32), sn(32);
  EXPECT_EQ(rope_neox_angles(x.data(), 1, 64, 7, cs.data(), sn.data()).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rope_norm_angles(x.data(), 1, 64, 64, nullptr, sn.data()).code(), ErrorCode::kInvalidArgument);
}

TEST(Rope, RejectsBadRotaryDims) {
  std::vector<float> x(64);
  EXPECT_EQ(rope_neox(x.data(), 1, 64, 7, 1, 1e4f).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rope_neox(x.data(), 1, 32, 64, 1, 1e4f).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rope_norm(x.data(), 1, 64, 0, 1, 1e4f).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rope_norm(nullptr, 1, 64, 64, 1, 1e4f).code(), ErrorCode::kInvalidArgument);
}

// ------------------------------------------------------------------ softmax

TEST(Softmax, SumsToOneAndMatchesDouble) {
  for (int64_t n : {1, 5, 100, 4096}) {
    const auto x = random_floats(static_cast<size_t>(n), 15, -20, 20);
    std::vector<float> y(static_cast<size_t>(n));
    softmax(x.data(), n, y.data());
    double max = -INFINITY;
    for (float v : x) max = std::fmax(max, v);
    double z = 0;
    for (float v : x) z += std::exp(v - max);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double expect = std::exp(x[i] - max) / z;
      EXPECT_NEAR(y[i], expect, 2e-6 * expect + 1e-12) << "n " << n << " i " << i;
      sum += y[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(Softmax, ScaleAndMaskAsInAttention) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> mask = {0, 0, -INFINITY, 0};
  std::vector<float> y(4);
  softmax_ext(x.data(), mask.data(), 4, 0.5f, y.data());
  const double z = std::exp(0.5) + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(y[0], std::exp(0.5) / z, 1e-7);
  EXPECT_NEAR(y[1], std::exp(1.0) / z, 1e-7);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_NEAR(y[3], std::exp(2.0) / z, 1e-7);
  // Large inputs do not overflow (max subtraction), and in place works.
  std::vector<float> big = {1000, 1000};
  softmax(big.data(), 2, big.data());
  EXPECT_EQ(big[0], 0.5f);
  EXPECT_EQ(big[1], 0.5f);
}

// -------------------------------------------------------------- elementwise

TEST(Elementwise, MatchClosedForms) {
  const auto x = random_floats(200, 16, -30, 30);
  const auto u = random_floats(200, 17, -2, 2);
  std::vector<float> s(200), g(200), sg(200), sp(200), a(200), m(200), sc(200);
  silu(x.data(), 200, s.data());
  swiglu(x.data(), u.data(), 200, g.data());
  sigmoid(x.data(), 200, sg.data());
  softplus(x.data(), 200, sp.data());
  add(x.data(), u.data(), 200, a.data());
  mul(x.data(), u.data(), 200, m.data());
  scale(x.data(), 0.25f, 200, sc.data());
  for (int i = 0; i < 200; ++i) {
    const double v = x[i];
    const double sil = v / (1 + std::exp(-v));
    EXPECT_NEAR(s[i], sil, 1e-6 * std::fabs(sil) + 1e-30);
    EXPECT_NEAR(g[i], sil * u[i], 1e-6 * std::fabs(sil * u[i]) + 1e-30);
    EXPECT_NEAR(sg[i], 1 / (1 + std::exp(-v)), 1e-6);
    const double spl = std::log1p(std::exp(v));
    EXPECT_NEAR(sp[i], spl, 1e-6 * spl + 1e-7);
    EXPECT_EQ(a[i], x[i] + u[i]);
    EXPECT_EQ(m[i], x[i] * u[i]);
    EXPECT_EQ(sc[i], x[i] * 0.25f);
  }
  // softplus passes large inputs through unchanged (ggml's threshold 20).
  const float big = 25.0f;
  float out;
  softplus(&big, 1, &out);
  EXPECT_EQ(out, 25.0f);
}

}  // namespace
}  // namespace kazeia::kernels
