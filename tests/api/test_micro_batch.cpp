// A prompt longer than EngineOptions::n_ubatch runs as several forward
// passes; its logits must be those of one pass. Micro-batches that start on
// the attention tiles' and the delta rule's 64-position grid share every
// operation with the single pass, so those logits are bit-identical; odd
// micro-batches (7) change only the order of the Qwen3.5 recurrence's float
// sums (the chunked-prefill tolerance of tests/models).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "api_test_util.h"

namespace kazeia {
namespace {

std::vector<float> all_logits(const std::string& model, int64_t n_ubatch, const std::vector<int32_t>& prompt) {
  auto engine = testing::load_engine(model, 512, n_ubatch);
  if (!engine) return {};
  auto s = engine->new_session();
  if (!s.ok()) return {};
  std::vector<float> out(prompt.size() * static_cast<size_t>(engine->n_vocab()));
  const Status st = (*s)->eval(prompt, out.data(), /*all=*/true);
  EXPECT_TRUE(st.ok()) << st.to_string();
  // The last row alone (all = false) is the same row.
  auto s2 = engine->new_session();
  std::vector<float> last(static_cast<size_t>(engine->n_vocab()));
  EXPECT_TRUE((*s2)->eval(prompt, last.data(), /*all=*/false).ok());
  EXPECT_TRUE(std::equal(last.begin(), last.end(), out.end() - static_cast<std::ptrdiff_t>(last.size())));
  return out;
}

std::vector<int32_t> prompt_ids(int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<int32_t>(3 + (i * 211) % 4000));
  return v;
}

// max |a - b| over max |b|.
double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return diff / scale;
}

void check_model(const std::string& model, double odd_tolerance) {
  ASSERT_FALSE(model.empty());
  const auto prompt = prompt_ids(200);
  const auto one = all_logits(model, 4096, prompt);
  ASSERT_EQ(one.size() % prompt.size(), 0u);
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(all_logits(model, 64, prompt), one) << "micro-batches of 64";
  EXPECT_EQ(all_logits(model, 128, prompt), one) << "micro-batches of 128";
  const auto odd = all_logits(model, 7, prompt);
  ASSERT_EQ(odd.size(), one.size());
  EXPECT_LE(max_rel_diff(odd, one), odd_tolerance) << "micro-batches of 7";
}

TEST(MicroBatch, DenseModelLogitsEqualOnePass) { check_model(testing::tiny_qwen3_model(), 0.0); }

TEST(MicroBatch, RecurrentModelLogitsMatchOnePass) { check_model(testing::tiny_qwen35_model(), 2e-5); }

TEST(MicroBatch, NonPositiveSizeIsRefused) {
  ASSERT_FALSE(testing::tiny_qwen3_model().empty());
  EngineOptions eo;
  eo.n_ubatch = 0;
  auto engine = Engine::load(testing::tiny_qwen3_model(), eo);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().to_string().find("micro-batch"), std::string::npos) << engine.status().to_string();
}

// A bad id or too long an input in a later micro-batch is refused before
// the first one runs: the session is left as it was, and a good input then
// evaluates from there.
TEST(MicroBatch, BadInputIsRefusedBeforeAnyMicroBatchRuns) {
  auto engine = testing::load_engine(testing::tiny_qwen3_model(), 16, 4);
  ASSERT_NE(engine, nullptr);
  auto s = engine->new_session();
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> ids = prompt_ids(10);
  for (int32_t bad : {static_cast<int32_t>(engine->n_vocab()), -1}) {
    ids[9] = bad;
    const Status st = (*s)->eval(ids, nullptr);
    EXPECT_EQ(st.code(), ErrorCode::kOutOfRange) << st.to_string();
    EXPECT_NE(st.message().find("at index 9"), std::string::npos) << st.message();
    EXPECT_EQ((*s)->n_past(), 0);
  }
  const Status full = (*s)->eval(prompt_ids(17), nullptr);
  EXPECT_EQ(full.code(), ErrorCode::kOutOfRange) << full.to_string();
  EXPECT_NE(full.message().find("context full"), std::string::npos) << full.message();
  EXPECT_EQ((*s)->n_past(), 0);
  EXPECT_TRUE((*s)->eval(prompt_ids(16), nullptr).ok());
  EXPECT_EQ((*s)->n_past(), 16);
}

}  // namespace
}  // namespace kazeia
