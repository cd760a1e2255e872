// Sampler against closed-form distributions.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/sampler.h"

namespace kazeia {
namespace {

SamplerParams plain(float temp) {
  SamplerParams p;
  p.temperature = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

TEST(Sampler, GreedyPicksArgmaxWithTiesToLowestId) {
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  Sampler s(plain(0.0f));
  EXPECT_EQ(s.sample(logits, {}), 1);
  EXPECT_EQ(argmax(logits), 1);
}

TEST(Sampler, TemperatureScalesTheSoftmax) {
  // logits ln(1), ln(2), ln(4): p = 1/7, 2/7, 4/7 at T = 1.
  std::vector<float> logits = {0.0f, std::log(2.0f), std::log(4.0f)};
  auto d = Sampler(plain(1.0f)).distribution(logits, {});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].id, 2);
  EXPECT_NEAR(d[0].p, 4.0 / 7, 1e-6);
  EXPECT_NEAR(d[1].p, 2.0 / 7, 1e-6);
  EXPECT_NEAR(d[2].p, 1.0 / 7, 1e-6);
  // T = 2: weights 1, sqrt 2, 2.
  auto d2 = Sampler(plain(2.0f)).distribution(logits, {});
  const double z = 1 + std::sqrt(2.0) + 2;
  EXPECT_NEAR(d2[0].p, 2 / z, 1e-6);
  EXPECT_NEAR(d2[1].p, std::sqrt(2.0) / z, 1e-6);
}

TEST(Sampler, TopKTopPMinPTruncate) {
  // p = 0.5, 0.3, 0.2
  std::vector<float> logits = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
  auto k = plain(1.0f);
  k.top_k = 2;
  auto dk = Sampler(k).distribution(logits, {});
  ASSERT_EQ(dk.size(), 2u);
  EXPECT_NEAR(dk[0].p, 0.5 / 0.8, 1e-6);
  auto p = plain(1.0f);
  p.top_p = 0.75f;  // 0.5 < 0.75 <= 0.8: two survive
  EXPECT_EQ(Sampler(p).distribution(logits, {}).size(), 2u);
  p.top_p = 0.4f;  // the first alone reaches it
  EXPECT_EQ(Sampler(p).distribution(logits, {}).size(), 1u);
  auto m = plain(1.0f);
  m.min_p = 0.5f;  // threshold 0.25: 0.5 and 0.3 survive
  auto dm = Sampler(m).distribution(logits, {});
  ASSERT_EQ(dm.size(), 2u);
  EXPECT_EQ(dm[0].id, 1);
  EXPECT_EQ(dm[1].id, 2);
}

TEST(Sampler, PenaltiesFollowTheirFormulas) {
  std::vector<float> logits = {4.0f, -2.0f, 3.0f, 1.0f};
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  // Token 0 (4 -> 2) and token 1 (-2 -> -4) were seen: argmax becomes token 2.
  std::vector<int32_t> history = {0, 1, 0};
  EXPECT_EQ(Sampler(p).sample(logits, history), 2);
  // Frequency: token 2 seen twice at 0.8 each -> 3 - 1.6 = 1.4 < ... ; presence 1 -> 0.4.
  SamplerParams f = plain(0.0f);
  f.frequency_penalty = 0.8f;
  f.presence_penalty = 1.0f;
  std::vector<float> l2 = {2.0f, 1.0f, 3.0f};
  std::vector<int32_t> h2 = {2, 2};
  EXPECT_EQ(Sampler(f).sample(l2, h2), 0);  // 3 - 1.6 - 1 = 0.4 < 2
  // repeat_last_n = 1 looks only at the last token.
  SamplerParams r = plain(0.0f);
  r.repeat_penalty = 100.0f;
  r.repeat_last_n = 1;
  std::vector<float> l3 = {5.0f, 4.0f};
  std::vector<int32_t> h3 = {0, 1};  // token 0 is outside the window
  EXPECT_EQ(Sampler(r).sample(l3, h3), 0);
}

TEST(Sampler, SameSeedSameTokensAndFrequenciesMatchTheDistribution) {
  std::vector<float> logits = {0.0f, std::log(2.0f), std::log(4.0f), std::log(1.0f)};
  SamplerParams p = plain(1.0f);
  p.seed = 42;
  Sampler a(p), b(p);
  std::vector<int> counts(4, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    int32_t ta = a.sample(logits, {});
    ASSERT_EQ(ta, b.sample(logits, {}));
    counts[static_cast<size_t>(ta)]++;
  }
  const double probs[4] = {1.0 / 8, 2.0 / 8, 4.0 / 8, 1.0 / 8};
  for (int i = 0; i < 4; ++i) {
    const double sd = std::sqrt(n * probs[i] * (1 - probs[i]));
    EXPECT_NEAR(counts[static_cast<size_t>(i)], n * probs[i], 4 * sd) << "token " << i;
  }
  p.seed = 43;
  Sampler c(p), d(SamplerParams{plain(1.0f)});
  int same = 0;
  Sampler a2(SamplerParams{[] { auto q = plain(1.0f); q.seed = 42; return q; }()});
  for (int i = 0; i < 200; ++i) same += (a2.sample(logits, {}) == c.sample(logits, {}));
  EXPECT_LT(same, 200);
}

TEST(Sampler, ValidateRejectsBadParameters) {
  SamplerParams p;
  p.top_p = 0.0f;
  EXPECT_FALSE(p.validate().ok());
  p.top_p = 1.5f;  // the message says (0, 1]: so does the check
  EXPECT_FALSE(p.validate().ok());
  p.top_p = std::nanf("");
  EXPECT_FALSE(p.validate().ok());
  p.top_p = 1.0f;
  EXPECT_TRUE(p.validate().ok());
  p = SamplerParams{};
  p.min_p = 1.5f;
  EXPECT_FALSE(p.validate().ok());
  p = SamplerParams{};
  p.repeat_penalty = -1.0f;
  EXPECT_FALSE(p.validate().ok());
  EXPECT_TRUE(SamplerParams{}.validate().ok());
}

}  // namespace
}  // namespace kazeia
