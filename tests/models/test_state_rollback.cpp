// Rollback for speculative decoding (ModelState::rollback): after a
// checkpoint and 16 more tokens, rolling back to any of the 17 positions and
// going on gives the logits of a state that evaluated only the kept tokens
// (one batch) - bit for bit, however they had been split - from the logged
// per-token inputs, with one state copy (the checkpoint) in all. Runs on a generated Qwen3.5 model (no
// reference data needed) in F32 and Q8_0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/test_data.h"
#include "format/gguf.h"
#include "models/model.h"
#include "models/shared_test_model.h"
#include "models/test_model_generator.h"

namespace kazeia {
namespace {

testing::LoadedModel generated_qwen35(gen::GenFileType type) {
  auto config = gen::gen_preset_config("tiny-qwen35");
  EXPECT_TRUE(config.has_value());
  if (!config) return {};
  config->file_type = type;
  config->seed = 11;
  const std::string dir = testing::scratch_dir() + "/rollback_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/qwen35-" + std::to_string(static_cast<int>(type)) + ".gguf";
  auto written = gen::write_test_model(*config, path);
  EXPECT_TRUE(written.ok()) << written.status().to_string();
  return testing::load_model_file(path);
}

std::vector<float> feed(const Model& m, ModelState& s, std::span<const int32_t> tokens) {
  std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
  ForwardRequest r;
  r.tokens = tokens;
  r.rows = LogitsRows::kLast;
  r.logits = logits.data();
  Status st = m.forward(s, r);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return logits;
}

// A fresh state that has evaluated `pieces` one forward pass each.
std::unique_ptr<ModelState> state_after(const Model& m, std::initializer_list<std::span<const int32_t>> pieces) {
  auto s = m.new_state({.n_ctx = 128});
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return nullptr;
  for (auto piece : pieces)
    if (!piece.empty()) feed(m, **s, piece);
  return std::move(*s);
}

std::vector<int32_t> tokens(int first, int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<int32_t>((first + 131 * i) % 3000 + 50));
  return v;
}

class StateRollback : public ::testing::TestWithParam<gen::GenFileType> {};

TEST_P(StateRollback, AnyOfTheLastSixteenPositionsEqualsNeverHavingGoneFurther) {
  testing::LoadedModel l = generated_qwen35(GetParam());
  ASSERT_NE(l.model, nullptr);
  const Model& m = *l.model;
  const auto prefix = tokens(7, 40), draft = tokens(1000, 16), next = tokens(2500, 3);
  for (int keep = 0; keep <= 16; ++keep) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    // Reference: the prefix, the kept draft tokens as one batch, then next.
    auto ref = state_after(m, {prefix, std::span<const int32_t>(draft.data(), static_cast<size_t>(keep))});
    ASSERT_NE(ref, nullptr);
    const auto expected = feed(m, *ref, next);

    auto s = state_after(m, {prefix});
    ASSERT_NE(s, nullptr);
    ModelState& st = *s;
    StateCheckpoint cp;
    st.save_checkpoint(cp);
    st.begin_recording();
    // The draft goes in as a batch of 10, then 6 single tokens (both paths).
    feed(m, st, std::span<const int32_t>(draft.data(), 10));
    for (size_t i = 10; i < 16; ++i) feed(m, st, std::span<const int32_t>(draft.data() + i, 1));
    ASSERT_EQ(st.n_past(), 56);
    ASSERT_TRUE(st.rollback(cp, 40 + keep).ok());
    EXPECT_EQ(st.n_past(), 40 + keep);
    EXPECT_TRUE(st.recording());
    EXPECT_GT(st.log_bytes(), 0u);
    const auto got = feed(m, st, next);
    ASSERT_EQ(got.size(), expected.size());
    float diff = 0.0f, peak = 0.0f;
    for (size_t i = 0; i < got.size(); ++i) {
      diff = std::max(diff, std::fabs(got[i] - expected[i]));
      peak = std::max(peak, std::fabs(expected[i]));
    }
    std::printf("[rollback] keep %2d  max|diff| %.3g (%.2g of max|logit|)\n", keep, diff, diff / peak);
    // Kept tokens fed in another batching than the reference's: the same
    // bits all the same (matmuls per row, attention tiles and delta-rule
    // chunks at fixed positions).
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
  }
}

TEST_P(StateRollback, RollsBackTwiceAndRefusesBadRequests) {
  testing::LoadedModel l = generated_qwen35(GetParam());
  ASSERT_NE(l.model, nullptr);
  const Model& m = *l.model;
  const auto prefix = tokens(3, 20), draft = tokens(900, 12);
  auto s = state_after(m, {prefix});
  ASSERT_NE(s, nullptr);
  ModelState& st = *s;
  StateCheckpoint cp;
  st.save_checkpoint(cp);
  // Not recording yet: refused.
  EXPECT_FALSE(st.rollback(cp, 20).ok());
  st.begin_recording();
  feed(m, st, draft);
  EXPECT_FALSE(st.rollback(cp, 19).ok());  // before the checkpoint
  EXPECT_FALSE(st.rollback(cp, 33).ok());  // past n_past
  ASSERT_TRUE(st.rollback(cp, 28).ok());   // keep 8
  // Then more tokens and a second rollback into the kept part.
  feed(m, st, std::span<const int32_t>(draft.data() + 8, 4));
  ASSERT_TRUE(st.rollback(cp, 25).ok());
  const auto got = feed(m, st, prefix);
  auto ref = state_after(m, {prefix, std::span<const int32_t>(draft.data(), 5)});
  ASSERT_NE(ref, nullptr);
  const auto expected = feed(m, *ref, prefix);
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
  // A checkpoint taken elsewhere is refused; restore_checkpoint stops the recording.
  StateCheckpoint other;
  st.save_checkpoint(other);
  EXPECT_FALSE(st.rollback(other, 25).ok());
  ASSERT_TRUE(st.restore_checkpoint(cp).ok());
  EXPECT_FALSE(st.recording());
}

TEST_P(StateRollback, AForwardPassRefusesAMismatchedTailBeforeTouchingTheState) {
  // The tail's rows belong to one chunk size: a pass that cannot continue
  // them must fail before the conv window or S of any layer changes.
  testing::LoadedModel l = generated_qwen35(GetParam());
  ASSERT_NE(l.model, nullptr);
  const Model& m = *l.model;
  const auto prefix = tokens(5, 7);
  auto s = state_after(m, {prefix});
  ASSERT_NE(s, nullptr);
  ASSERT_FALSE(s->recurrent().empty());
  RecurrentLayer& first = s->recurrent()[0];
  ASSERT_GT(first.tail.rows, 0);
  first.tail.chunk += 1;  // as if its rows came from another chunk size
  const std::vector<float> conv = first.conv, state(first.s.begin(), first.s.end());
  std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
  ForwardRequest r;
  const auto next = tokens(9, 1);
  r.tokens = next;
  r.rows = LogitsRows::kLast;
  r.logits = logits.data();
  EXPECT_EQ(m.forward(*s, r).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(first.conv, conv);
  EXPECT_EQ(std::vector<float>(first.s.begin(), first.s.end()), state);
  EXPECT_EQ(s->n_past(), 7);
}

INSTANTIATE_TEST_SUITE_P(Types, StateRollback, ::testing::Values(gen::GenFileType::kF32, gen::GenFileType::kQ8_0));

}  // namespace
}  // namespace kazeia
