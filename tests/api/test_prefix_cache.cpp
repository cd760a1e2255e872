// The session's prefix cache on a model with recurrent state (Qwen3.5):
// a prompt that diverges from the history resumes from the checkpoint taken
// after an earlier prompt's prefill, evaluates only the rest, and generates
// exactly what a session that evaluated the same pieces from scratch does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <vector>

#include "api_test_util.h"

namespace kazeia {
namespace {

using testing::tiny_qwen35_model;

GenerateOptions greedy(int n) { return testing::greedy_options(n); }

std::vector<int32_t> ids(int first, int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<int32_t>(first + 37 * i % 3000));
  return v;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PrefixCache, ResumesARecurrentModelFromTheDeepestValidCheckpoint) {
  ASSERT_FALSE(tiny_qwen35_model().empty());
  auto engine = testing::load_engine(tiny_qwen35_model(), 512);
  ASSERT_TRUE(engine);
  const auto a = ids(100, 70), b = ids(900, 25), c = ids(1700, 9);

  auto s = engine->new_session();
  ASSERT_TRUE(s.ok());
  Session& session = **s;
  auto first = session.generate(a, greedy(6));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->reused_tokens, 0);
  EXPECT_GT(session.checkpoint_bytes(), 0u);

  // a + b diverges from the history (a + 5 generated tokens) right after a:
  // the checkpoint at |a| serves it.
  const auto ab = concat(a, b);
  auto second = session.generate(ab, greedy(6));
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(second->reused_tokens, static_cast<int64_t>(a.size()));
  EXPECT_EQ(second->prompt_tokens, static_cast<int64_t>(b.size()));

  // a + b + c: the deeper checkpoint at |a + b| wins over the one at |a|.
  const auto abc = concat(ab, c);
  auto third = session.generate(abc, greedy(6));
  ASSERT_TRUE(third.ok()) << third.status().to_string();
  EXPECT_EQ(third->reused_tokens, static_cast<int64_t>(ab.size()));

  // Back to a + c: only the checkpoint at |a| is within the common prefix.
  const auto ac = concat(a, c);
  auto fourth = session.generate(ac, greedy(6));
  ASSERT_TRUE(fourth.ok()) << fourth.status().to_string();
  EXPECT_EQ(fourth->reused_tokens, static_cast<int64_t>(a.size()));

  // The same pieces evaluated from scratch (a, then b, then c; and a, then
  // c) generate exactly the same tokens: a restored state is the state.
  // Greedy tokens after `prompt` in a fresh session that evaluated `pieces`.
  auto from_scratch = [&](std::initializer_list<std::vector<int32_t>> pieces, const std::vector<int32_t>& prompt,
                          int64_t want_reused) {
    auto fresh = engine->new_session();
    EXPECT_TRUE(fresh.ok());
    if (!fresh.ok()) return std::vector<int32_t>{};
    for (const auto& piece : pieces) EXPECT_TRUE((*fresh)->eval(piece, nullptr).ok());
    auto r = (*fresh)->generate(prompt, greedy(6));
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return std::vector<int32_t>{};
    EXPECT_EQ(r->reused_tokens, want_reused);
    return r->tokens;
  };
  EXPECT_EQ(from_scratch({a, b}, abc, static_cast<int64_t>(ab.size())), third->tokens);
  EXPECT_EQ(from_scratch({a}, ac, static_cast<int64_t>(a.size())), fourth->tokens);
  EXPECT_EQ(from_scratch({a}, ab, static_cast<int64_t>(a.size())), second->tokens);

  // reset() forgets the checkpoints too.
  session.reset();
  EXPECT_EQ(session.checkpoint_bytes(), 0u);
  auto again = session.generate(ab, greedy(2));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->reused_tokens, 0);
}

TEST(PrefixCache, DenseModelsTruncateWithoutCheckpoints) {
  ASSERT_FALSE(testing::tiny_qwen3_model().empty());
  auto engine = testing::load_engine(testing::tiny_qwen3_model(), 512);
  ASSERT_TRUE(engine);
  auto s = engine->new_session();
  ASSERT_TRUE(s.ok());
  const auto a = ids(100, 40), b = ids(900, 10);
  ASSERT_TRUE((*s)->generate(a, greedy(4)).ok());
  EXPECT_EQ((*s)->checkpoint_bytes(), 0u);
  auto second = (*s)->generate(concat(a, b), greedy(4));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->reused_tokens, static_cast<int64_t>(a.size()));
}

}  // namespace
}  // namespace kazeia
