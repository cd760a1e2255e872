// State checkpoints: restoring one and continuing gives exactly the logits of
// a state that never went further; stale or foreign checkpoints are refused.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "models/model.h"
#include "models/shared_test_model.h"

namespace kazeia {
namespace {

std::vector<int32_t> prompt_tokens() {
  std::ifstream f(testing::shared_golden("logits/qwen35-tiny-f32.code200.json"));
  return nlohmann::json::parse(f)["token_ids"].get<std::vector<int32_t>>();
}

// Feeds tokens [begin, end) as one batch; returns every position's logits.
std::vector<float> feed(const Model& m, ModelState& s, const std::vector<int32_t>& tokens, size_t begin, size_t end) {
  std::vector<float> logits((end - begin) * static_cast<size_t>(m.config().n_vocab));
  ForwardRequest r;
  r.tokens = std::span<const int32_t>(tokens.data() + begin, end - begin);
  r.rows = LogitsRows::kAll;
  r.logits = logits.data();
  Status st = m.forward(s, r);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return logits;
}

// Loads the model and the prompt; each test runs on fresh states.
class StateCheckpoints : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    KZ_REQUIRE_SHARED_DATA();
    loaded_ = testing::load_shared_model(GetParam());
    ASSERT_NE(loaded_.model, nullptr);
    tokens_ = prompt_tokens();
  }
  std::unique_ptr<ModelState> new_state() const {
    auto s = loaded_.model->new_state({.n_ctx = 512});
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  testing::LoadedModel loaded_;
  std::vector<int32_t> tokens_;
};

TEST_P(StateCheckpoints, RestoreThenContinueEqualsNeverHavingGoneFurther) {
  const Model& m = *loaded_.model;
  const std::vector<int32_t>& t = tokens_;
  // Reference: 70 prompt tokens, then tokens 150..160 as the continuation.
  auto ref = new_state();
  ASSERT_NE(ref, nullptr);
  feed(m, *ref, t, 0, 70);
  std::vector<int32_t> cont(t.begin() + 150, t.begin() + 160);
  std::vector<int32_t> all(t.begin(), t.begin() + 70);
  all.insert(all.end(), cont.begin(), cont.end());
  const std::vector<float> expected = feed(m, *ref, all, 70, 80);

  auto s = new_state();
  ASSERT_NE(s, nullptr);
  feed(m, *s, t, 0, 70);
  StateCheckpoint cp;
  s->save_checkpoint(cp);
  EXPECT_EQ(cp.n_past, 70);
  // Go further: a batch, then single tokens (both DeltaNet paths).
  feed(m, *s, t, 70, 130);
  for (size_t i = 130; i < 135; ++i) feed(m, *s, t, i, i + 1);
  ASSERT_EQ(s->n_past(), 135);
  for (int round = 0; round < 2; ++round) {  // a checkpoint can be restored again
    SCOPED_TRACE(round);
    ASSERT_TRUE(s->restore_checkpoint(cp).ok());
    EXPECT_EQ(s->n_past(), 70);
    EXPECT_EQ(feed(m, *s, all, 70, 80), expected);  // the same arithmetic: bit-identical
  }
}

TEST_P(StateCheckpoints, RefusesStaleForeignAndEmptyCheckpoints) {
  const Model& m = *loaded_.model;
  const std::vector<int32_t>& t = tokens_;
  auto s = new_state();
  auto other = new_state();
  ASSERT_TRUE(s != nullptr && other != nullptr);
  StateCheckpoint empty, early, late;
  EXPECT_EQ(s->restore_checkpoint(empty).code(), ErrorCode::kInvalidArgument);
  feed(m, *s, t, 0, 10);
  s->save_checkpoint(early);
  feed(m, *s, t, 10, 40);
  s->save_checkpoint(late);
  EXPECT_EQ(other->restore_checkpoint(late).code(), ErrorCode::kInvalidArgument);
  // Back to 10 and a different continuation: `late` saw other rows 10..39.
  ASSERT_TRUE(s->restore_checkpoint(early).ok());
  feed(m, *s, t, 100, 130);
  ASSERT_EQ(s->n_past(), 40);
  EXPECT_EQ(s->restore_checkpoint(late).code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(s->n_past(), 40);  // a refused restore changes nothing
  // No rewind went below `early`: still valid. A reset (to 0) goes below it.
  ASSERT_TRUE(s->restore_checkpoint(early).ok());
  s->reset();
  EXPECT_EQ(s->restore_checkpoint(early).code(), ErrorCode::kOutOfRange);
  // Only recurrent layers are copied (qwen3 has none: an empty checkpoint).
  EXPECT_EQ(late.memory_bytes() > 0, m.config().ssm_n_v_heads > 0);
}

INSTANTIATE_TEST_SUITE_P(Models, StateCheckpoints, ::testing::Values("qwen35-tiny-f32.gguf", "qwen3-tiny-f32.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param).find("qwen35") == 0 ? std::string("qwen35")
                                                                           : std::string("qwen3");
                         });

}  // namespace
}  // namespace kazeia
