// The agent's TokenGenerator over a Session (src/api/session_generator.h):
// token-by-token generation equals Session::generate, the next round re-uses
// the evaluated prefix (prompt + generated tokens), forced tokens join the
// history, and a full context is an OutOfRange error, not a crash.
#include <gtest/gtest.h>

#include <vector>

#include "api/session_generator.h"
#include "api_test_util.h"

namespace kazeia {
namespace {

SamplingOptions greedy() {
  SamplingOptions s;
  s.temperature = 0.0f;
  return s;
}

class SessionGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::tiny_qwen3_model().empty());
    engine_ = testing::load_engine(testing::tiny_qwen3_model(), 64);
    ASSERT_TRUE(engine_);
    auto ids = engine_->tokenize("The quick brown fox jumps over the lazy dog", true, false);
    ASSERT_TRUE(ids.ok());
    prompt_ = *ids;
  }
  std::unique_ptr<Session> session() {
    auto s = engine_->new_session();
    EXPECT_TRUE(s.ok());
    return s.ok() ? std::move(s.value()) : nullptr;
  }

  std::unique_ptr<Engine> engine_;
  std::vector<int32_t> prompt_;
};

TEST_F(SessionGeneratorTest, MatchesGenerateAndReusesThePrefix) {
  auto reference_session = session();
  GenerateOptions go;
  go.max_tokens = 5;
  go.sampling = greedy();
  go.ignore_eos = true;
  auto reference = reference_session->generate(prompt_, go);
  ASSERT_TRUE(reference.ok());
  ASSERT_EQ(reference->tokens.size(), 5u);

  auto s = session();
  auto gen = make_session_generator(*s, greedy());
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  auto stats = (*gen)->start(prompt_);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->evaluated, static_cast<int64_t>(prompt_.size()));
  EXPECT_EQ(stats->reused, 0);
  std::vector<int32_t> out;
  for (int i = 0; i < 5; ++i) {
    auto t = (*gen)->next();
    ASSERT_TRUE(t.ok());
    out.push_back(*t);
  }
  EXPECT_EQ(out, reference->tokens);
  (*gen)->finish();

  // Round 2: prompt + the round's output + more. The last sampled token was
  // never evaluated, so everything before it is reused.
  std::vector<int32_t> round2 = prompt_;
  round2.insert(round2.end(), out.begin(), out.end());
  round2.insert(round2.end(), prompt_.begin(), prompt_.begin() + 3);
  stats = (*gen)->start(round2);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->reused, static_cast<int64_t>(prompt_.size() + 4));
  EXPECT_EQ(stats->evaluated, 4);
  EXPECT_EQ(s->history(), round2);
}

TEST_F(SessionGeneratorTest, AppendedTokensJoinTheHistory) {
  auto s = session();
  auto gen = make_session_generator(*s, greedy());
  ASSERT_TRUE(gen.ok());
  ASSERT_TRUE((*gen)->start(prompt_).ok());
  auto t = (*gen)->next();
  ASSERT_TRUE(t.ok());
  const std::vector<int32_t> forced = {prompt_[0], prompt_[1]};
  ASSERT_TRUE((*gen)->append(forced).ok());
  std::vector<int32_t> expected = prompt_;
  expected.push_back(*t);
  expected.insert(expected.end(), forced.begin(), forced.end());
  EXPECT_EQ(s->history(), expected);
  EXPECT_TRUE((*gen)->next().ok());
}

TEST_F(SessionGeneratorTest, FullContextIsAnError) {
  auto s = session();
  auto gen = make_session_generator(*s, greedy());
  ASSERT_TRUE(gen.ok());
  ASSERT_TRUE((*gen)->start(prompt_).ok());
  Status last;
  for (int i = 0; i < 100 && last.ok(); ++i) {
    auto t = (*gen)->next();
    if (!t.ok()) last = t.status();
  }
  EXPECT_EQ(last.code(), ErrorCode::kOutOfRange) << last.to_string();
  std::vector<int32_t> too_long(70, prompt_[0]);
  auto stats = (*gen)->start(too_long);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), ErrorCode::kOutOfRange);
  SamplingOptions bad;
  bad.top_p = 0.0f;
  EXPECT_FALSE(make_session_generator(*s, bad).ok());
  EXPECT_FALSE((*gen)->start({}).ok());
}

// Session::generate's reasoning budget (GenerateOptions::max_think_tokens).
GenerateResult generate_with_budget(Engine& engine, std::string_view prompt_text, int32_t budget) {
  auto session = engine.new_session();
  EXPECT_TRUE(session.ok());
  auto ids = engine.tokenize_chat_prompt(prompt_text);
  EXPECT_TRUE(ids.ok());
  GenerateOptions go;
  go.max_tokens = 10;
  go.sampling = greedy();
  go.ignore_eos = true;
  go.max_think_tokens = budget;
  std::string streamed;
  auto r = (*session)->generate(*ids, go, [&](std::string_view piece) {
    streamed += piece;
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  EXPECT_EQ(streamed, r->text);
  return std::move(r.value());
}

TEST_F(SessionGeneratorTest, GenerateClosesThinkAfterTheBudget) {
  const std::string opens = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n";
  const int32_t close_id = engine_->tokenize("</think>", true, false).value()[0];
  for (int32_t budget : {0, 3}) {
    GenerateResult r = generate_with_budget(*engine_, opens, budget);
    EXPECT_TRUE(r.think_forced_closed) << budget;
    EXPECT_EQ(r.think_tokens, budget);
    EXPECT_EQ(r.tokens.size(), 10u + 3u) << "10 sampled + the 3 forced tokens";
    // The forced tokens follow the budget's reasoning tokens.
    ASSERT_GT(r.tokens.size(), static_cast<size_t>(budget + 1));
    EXPECT_EQ(r.tokens[budget + 1], close_id) << budget;
    EXPECT_NE(r.text.find("\n</think>\n\n"), std::string::npos) << r.text;
  }
  // No budget, or a prompt that does not open <think>: nothing is inserted.
  GenerateResult free = generate_with_budget(*engine_, opens, -1);
  EXPECT_FALSE(free.think_forced_closed);
  EXPECT_EQ(free.tokens.size(), 10u);
  GenerateResult plain = generate_with_budget(*engine_, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", 0);
  EXPECT_FALSE(plain.think_forced_closed);
  EXPECT_EQ(plain.think_tokens, 0);
}

TEST(GenerateThinkBudget, OnAQwen35TemplateModel) {
  KZ_REQUIRE_SHARED_DATA();
  auto engine = testing::load_engine(testing::shared_model("qwen35-mtp-f32.gguf"));
  ASSERT_TRUE(engine);
  auto prompt = engine->render_chat(R"({"messages": [{"role": "user", "content": "Hi"}]})");
  ASSERT_TRUE(prompt.ok());
  ASSERT_TRUE(prompt->ends_with("<think>\n"));
  GenerateResult r = generate_with_budget(*engine, *prompt, 4);
  EXPECT_TRUE(r.think_forced_closed);
  EXPECT_EQ(r.think_tokens, 4);
  EXPECT_NE(r.text.find("\n</think>\n\n"), std::string::npos) << r.text;
}

}  // namespace
}  // namespace kazeia
