// The C API (include/kazeia/kazeia.h) against the C++ API it wraps: error
// codes and messages, the caller-buffer convention, logits and greedy
// generations bit for bit equal to Session::eval / generate, callbacks,
// stop strings, and the lifetime and threading rules the header states.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "api_test_util.h"
#include "kazeia/engine.h"
#include "kazeia/kazeia.h"
#include "kazeia/version.h"

namespace kazeia {
namespace {

constexpr int64_t kCtx = 256;
const char* const kText = "The quick brown fox jumps over the lazy dog";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

kz_engine_options c_options(int64_t n_ctx = kCtx) {
  kz_engine_options o = kz_engine_options_default();
  o.n_threads = 1;
  o.n_ctx = n_ctx;
  return o;
}

kz_generate_options greedy_c(int32_t max_tokens) {
  kz_generate_options o = kz_generate_options_default();
  o.max_tokens = max_tokens;
  o.sampling.temperature = 0.0f;
  o.ignore_eos = 1;  // random weights: keep going past an early EOS
  return o;
}

GenerateOptions greedy_cpp(int32_t max_tokens) { return testing::greedy_options(max_tokens); }

std::vector<int32_t> result_tokens(const kz_generate_result& r) { return {r.tokens, r.tokens + r.n_tokens}; }
std::string result_text(const kz_generate_result& r) { return {r.text, r.text_len}; }

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::tiny_qwen3_model();
    ASSERT_FALSE(path_.empty());
    const kz_engine_options o = c_options();
    ASSERT_EQ(kz_engine_load(path_.c_str(), &o, &engine_), KZ_OK) << kz_last_error();
    ASSERT_NE(engine_, nullptr);
    cpp_ = testing::load_engine(path_, kCtx);
    ASSERT_TRUE(cpp_);
    auto ids = cpp_->tokenize(kText, true, false);
    ASSERT_TRUE(ids.ok());
    prompt_ = *ids;
  }
  void TearDown() override { kz_engine_free(engine_); }

  kz_session* c_session() {
    kz_session* s = nullptr;
    EXPECT_EQ(kz_session_new(engine_, &s), KZ_OK) << kz_last_error();
    return s;
  }
  std::unique_ptr<Session> cpp_session() {
    auto s = cpp_->new_session();
    EXPECT_TRUE(s.ok());
    return s.ok() ? std::move(s.value()) : nullptr;
  }
  // The tokens a fresh C++ session generates greedily after the prompt.
  std::vector<int32_t> cpp_greedy_tokens(int32_t n) {
    auto r = cpp_session()->generate(prompt_, greedy_cpp(n));
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? r->tokens : std::vector<int32_t>{};
  }

  std::string path_;
  kz_engine* engine_ = nullptr;
  std::unique_ptr<Engine> cpp_;
  std::vector<int32_t> prompt_;
};

TEST(CApi, VersionAndNames) {
  EXPECT_STREQ(kz_version(), version_string());
  EXPECT_STREQ(kz_status_name(KZ_OK), "ok");
  EXPECT_STREQ(kz_status_name(KZ_ERR_IO), "i/o error");
  EXPECT_STREQ(kz_status_name(KZ_ERR_BUFFER_TOO_SMALL), "buffer too small");
  EXPECT_STREQ(kz_status_name(-3), "unknown error");
  EXPECT_STREQ(kz_stop_reason_name(KZ_STOP_CANCELLED), "cancelled");
  EXPECT_STREQ(kz_stop_reason_name(99), "unknown");
  const kz_engine_options eo = kz_engine_options_default();
  EXPECT_EQ(eo.n_ctx, EngineOptions().n_ctx);
  EXPECT_EQ(eo.kv_type, KZ_KV_F16);
  EXPECT_EQ(eo.huge_pages, 1);
  const kz_generate_options go = kz_generate_options_default();
  EXPECT_EQ(go.max_tokens, GenerateOptions().max_tokens);
  EXPECT_EQ(go.sampling.top_k, SamplingOptions().top_k);
  EXPECT_EQ(go.sampling.seed, SamplingOptions().seed);
  EXPECT_EQ(go.n_stop, 0u);
  EXPECT_EQ(go.max_think_tokens, -1);
}

TEST(CApi, LoadErrorsAreCodesWithMessages) {
  kz_engine* e = reinterpret_cast<kz_engine*>(&e);  // not NULL: load must clear it
  EXPECT_EQ(kz_engine_load(nullptr, nullptr, &e), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(std::string(kz_last_error()), "kz_engine_load: path is NULL");
  EXPECT_EQ(kz_engine_load("x.gguf", nullptr, nullptr), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kz_last_error(), "out is NULL")) << kz_last_error();
  EXPECT_EQ(kz_engine_load("", nullptr, &e), KZ_ERR_INVALID_ARGUMENT);

  const std::string missing = testing::scratch_dir() + "/no_such_dir/missing_model.gguf";
  EXPECT_EQ(kz_engine_load(missing.c_str(), nullptr, &e), KZ_ERR_NOT_FOUND);
  EXPECT_EQ(e, nullptr);
  EXPECT_TRUE(contains(kz_last_error(), missing)) << kz_last_error();

  const std::string garbage = testing::scratch_dir() + "/c_api_garbage_" + std::to_string(::getpid()) + ".gguf";
  std::ofstream(garbage) << "this is not a GGUF file, just some text";
  EXPECT_EQ(kz_engine_load(garbage.c_str(), nullptr, &e), KZ_ERR_INVALID_FILE);
  EXPECT_TRUE(contains(kz_last_error(), garbage)) << kz_last_error();
  std::remove(garbage.c_str());

  // Options the C++ API or the C API refuses.
  const std::string& model = testing::tiny_qwen3_model();
  kz_engine_options o = c_options();
  o.n_ctx = 0;
  EXPECT_EQ(kz_engine_load(model.c_str(), &o, &e), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kz_last_error(), "n_ctx")) << kz_last_error();
  o = c_options();
  o.n_ctx = int64_t{1} << 40;
  EXPECT_EQ(kz_engine_load(model.c_str(), &o, &e), KZ_ERR_INVALID_ARGUMENT);
  o = c_options();
  o.kv_type = 7;
  EXPECT_EQ(kz_engine_load(model.c_str(), &o, &e), KZ_ERR_INVALID_ARGUMENT);
  o = c_options();
  o.n_threads = 100000;
  EXPECT_EQ(kz_engine_load(model.c_str(), &o, &e), KZ_ERR_INVALID_ARGUMENT);
  o = c_options();
  o.n_ubatch = 0;
  EXPECT_EQ(kz_engine_load(model.c_str(), &o, &e), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kz_last_error(), "micro-batch")) << kz_last_error();
  EXPECT_EQ(e, nullptr);
}

TEST(CApi, LastErrorIsPerThread) {
  kz_engine* e = nullptr;
  EXPECT_EQ(kz_engine_load(nullptr, nullptr, &e), KZ_ERR_INVALID_ARGUMENT);
  std::string other = "unset";
  std::thread([&] { other = kz_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(kz_last_error()), "");
}

TEST(CApi, NullHandlesAreReportedNotDereferenced) {
  kz_engine_free(nullptr);
  kz_session_free(nullptr);
  kz_string_free(nullptr);
  EXPECT_STREQ(kz_engine_architecture(nullptr), "");
  EXPECT_TRUE(contains(kz_last_error(), "kz_engine_architecture: engine is NULL")) << kz_last_error();
  EXPECT_STREQ(kz_engine_chat_template_family(nullptr), "");
  EXPECT_EQ(kz_engine_n_vocab(nullptr), -1);
  EXPECT_EQ(kz_engine_n_ctx(nullptr), -1);
  EXPECT_EQ(kz_engine_n_threads(nullptr), -1);
  EXPECT_EQ(kz_engine_file_size(nullptr), 0u);
  EXPECT_EQ(kz_is_end_of_generation(nullptr, 0), 0);
  EXPECT_EQ(kz_session_n_past(nullptr), -1);
  EXPECT_EQ(kz_session_n_ctx(nullptr), -1);
  EXPECT_EQ(kz_session_reset(nullptr), KZ_ERR_INVALID_ARGUMENT);
  int32_t t = 1;
  float logits[4];
  EXPECT_EQ(kz_session_eval(nullptr, &t, 1, logits), KZ_ERR_INVALID_ARGUMENT);
  kz_generate_result r;
  std::memset(&r, 0xAB, sizeof r);
  EXPECT_EQ(kz_session_generate(nullptr, &t, 1, nullptr, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(r.text, "");  // zeroed on failure
  EXPECT_EQ(r.n_tokens, 0u);
  size_t n = 7;
  EXPECT_EQ(kz_tokenize(nullptr, "a", 1, 0, 0, nullptr, 0, &n), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(kz_detokenize(nullptr, &t, 1, nullptr, 0, &n), KZ_ERR_INVALID_ARGUMENT);
  char* prompt = nullptr;
  EXPECT_EQ(kz_render_chat(nullptr, "{}", &prompt, nullptr), KZ_ERR_INVALID_ARGUMENT);
  kz_session* s = nullptr;
  EXPECT_EQ(kz_session_new(nullptr, &s), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
}

TEST_F(CApiTest, GettersMatchTheEngine) {
  EXPECT_EQ(std::string(kz_engine_architecture(engine_)), cpp_->architecture());
  EXPECT_EQ(std::string(kz_engine_chat_template_family(engine_)), cpp_->chat_template_family());
  EXPECT_EQ(kz_engine_n_vocab(engine_), cpp_->n_vocab());
  EXPECT_EQ(kz_engine_n_ctx(engine_), kCtx);
  EXPECT_EQ(kz_engine_n_threads(engine_), 1);
  EXPECT_EQ(kz_engine_file_size(engine_), cpp_->file_size());
  for (int32_t id = -2; id < cpp_->n_vocab() + 2; ++id)
    ASSERT_EQ(kz_is_end_of_generation(engine_, id) != 0, cpp_->is_end_of_generation(id)) << id;
}

TEST_F(CApiTest, TokenizeRoundTripAndBufferTooSmall) {
  const size_t len = std::strlen(kText);
  size_t n = 0;
  // Size query: NULL buffer, capacity 0.
  EXPECT_EQ(kz_tokenize(engine_, kText, len, 0, 1, nullptr, 0, &n), KZ_ERR_BUFFER_TOO_SMALL);
  ASSERT_EQ(n, prompt_.size());
  EXPECT_TRUE(contains(kz_last_error(), "kz_tokenize")) << kz_last_error();
  // One short: nothing written.
  std::vector<int32_t> ids(n, -7);
  EXPECT_EQ(kz_tokenize(engine_, kText, len, 0, 1, ids.data(), n - 1, &n), KZ_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, prompt_.size());
  EXPECT_EQ(ids, std::vector<int32_t>(n, -7));
  ASSERT_EQ(kz_tokenize(engine_, kText, len, 0, 1, ids.data(), ids.size(), &n), KZ_OK) << kz_last_error();
  EXPECT_EQ(ids, prompt_);

  size_t text_len = 0;
  EXPECT_EQ(kz_detokenize(engine_, ids.data(), ids.size(), nullptr, 0, &text_len), KZ_ERR_BUFFER_TOO_SMALL);
  ASSERT_EQ(text_len, len);
  std::vector<char> buf(len + 1, 'x');
  // Room for the text but not its NUL.
  EXPECT_EQ(kz_detokenize(engine_, ids.data(), ids.size(), buf.data(), len, &text_len), KZ_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(buf, std::vector<char>(len + 1, 'x'));
  ASSERT_EQ(kz_detokenize(engine_, ids.data(), ids.size(), buf.data(), buf.size(), &text_len), KZ_OK);
  EXPECT_EQ(text_len, len);
  EXPECT_STREQ(buf.data(), kText);
  EXPECT_EQ(std::string(buf.data()), cpp_->detokenize(ids));

  // Empty input, bad arguments.
  EXPECT_EQ(kz_tokenize(engine_, nullptr, 0, 0, 1, nullptr, 0, &n), KZ_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(kz_detokenize(engine_, nullptr, 0, buf.data(), buf.size(), &text_len), KZ_OK);
  EXPECT_EQ(text_len, 0u);
  EXPECT_STREQ(buf.data(), "");
  EXPECT_EQ(kz_tokenize(engine_, nullptr, 3, 0, 1, ids.data(), ids.size(), &n), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_tokenize(engine_, kText, len, 0, 1, nullptr, 5, &n), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_tokenize(engine_, kText, len, 0, 1, ids.data(), ids.size(), nullptr), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_detokenize(engine_, nullptr, 2, buf.data(), buf.size(), &text_len), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_detokenize(engine_, ids.data(), ids.size(), nullptr, 4, &text_len), KZ_ERR_INVALID_ARGUMENT);
  // Out-of-vocabulary ids render as nothing, as in the C++ API.
  const int32_t bad[2] = {-5, 1 << 30};
  EXPECT_EQ(kz_detokenize(engine_, bad, 2, buf.data(), buf.size(), &text_len), KZ_OK);
  EXPECT_EQ(text_len, 0u);
}

TEST_F(CApiTest, ChatRenderAndTokenize) {
  const char* request = R"({"messages": [{"role": "user", "content": "Hello there"}]})";
  char* prompt = nullptr;
  size_t prompt_len = 0;
  ASSERT_EQ(kz_render_chat(engine_, request, &prompt, &prompt_len), KZ_OK) << kz_last_error();
  auto expected = cpp_->render_chat(request);
  ASSERT_TRUE(expected.ok());
  ASSERT_NE(prompt, nullptr);
  EXPECT_EQ(std::string(prompt, prompt_len), *expected);
  EXPECT_EQ(std::strlen(prompt), prompt_len);

  auto expected_ids = cpp_->tokenize_chat_prompt(*expected);
  ASSERT_TRUE(expected_ids.ok());
  size_t n = 0;
  EXPECT_EQ(kz_tokenize_chat_prompt(engine_, prompt, prompt_len, nullptr, 0, &n), KZ_ERR_BUFFER_TOO_SMALL);
  std::vector<int32_t> ids(n);
  ASSERT_EQ(kz_tokenize_chat_prompt(engine_, prompt, prompt_len, ids.data(), ids.size(), &n), KZ_OK);
  EXPECT_EQ(ids, *expected_ids);
  kz_string_free(prompt);

  prompt = reinterpret_cast<char*>(&n);
  EXPECT_EQ(kz_render_chat(engine_, "{not json", &prompt, &prompt_len), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(prompt, nullptr);
  EXPECT_TRUE(contains(kz_last_error(), "not valid JSON")) << kz_last_error();
  EXPECT_EQ(kz_render_chat(engine_, nullptr, &prompt, &prompt_len), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_render_chat(engine_, request, nullptr, &prompt_len), KZ_ERR_INVALID_ARGUMENT);
}

TEST_F(CApiTest, EvalLogitsEqualTheCppSession) {
  kz_session* s = c_session();
  ASSERT_NE(s, nullptr);
  auto ref = cpp_session();
  const size_t n_vocab = static_cast<size_t>(cpp_->n_vocab());
  std::vector<float> c_logits(n_vocab), cpp_logits(n_vocab);
  ASSERT_EQ(kz_session_eval(s, prompt_.data(), prompt_.size(), c_logits.data()), KZ_OK) << kz_last_error();
  ASSERT_TRUE(ref->eval(prompt_, cpp_logits.data()).ok());
  EXPECT_EQ(std::memcmp(c_logits.data(), cpp_logits.data(), n_vocab * sizeof(float)), 0);
  // A decode step after it, and an eval without logits.
  const int32_t next[1] = {prompt_[1]};
  ASSERT_EQ(kz_session_eval(s, next, 1, c_logits.data()), KZ_OK);
  ASSERT_TRUE(ref->eval(next, cpp_logits.data()).ok());
  EXPECT_EQ(std::memcmp(c_logits.data(), cpp_logits.data(), n_vocab * sizeof(float)), 0);
  ASSERT_EQ(kz_session_eval(s, next, 1, nullptr), KZ_OK);
  EXPECT_EQ(kz_session_n_past(s), static_cast<int64_t>(prompt_.size()) + 2);
  EXPECT_EQ(kz_session_n_ctx(s), kCtx);

  ASSERT_EQ(kz_session_reset(s), KZ_OK);
  EXPECT_EQ(kz_session_n_past(s), 0);
  ASSERT_EQ(kz_session_eval(s, prompt_.data(), prompt_.size(), c_logits.data()), KZ_OK);
  ref->reset();
  ASSERT_TRUE(ref->eval(prompt_, cpp_logits.data()).ok());
  EXPECT_EQ(std::memcmp(c_logits.data(), cpp_logits.data(), n_vocab * sizeof(float)), 0);
  kz_session_free(s);
}

TEST_F(CApiTest, EvalRefusesBadInputBeforeEvaluatingAnything) {
  // Micro-batches of 4 tokens: a bad id in the third, or too long an input,
  // must be refused before the first runs (Session::eval checks up front).
  kz_engine_options o = c_options(16);
  o.n_ubatch = 4;
  kz_engine* e = nullptr;
  ASSERT_EQ(kz_engine_load(path_.c_str(), &o, &e), KZ_OK) << kz_last_error();
  kz_session* s = nullptr;
  ASSERT_EQ(kz_session_new(e, &s), KZ_OK);
  std::vector<int32_t> ids(10, prompt_[0]);
  ids[9] = static_cast<int32_t>(kz_engine_n_vocab(e));
  EXPECT_EQ(kz_session_eval(s, ids.data(), ids.size(), nullptr), KZ_ERR_OUT_OF_RANGE);
  EXPECT_TRUE(contains(kz_last_error(), "at index 9")) << kz_last_error();
  ids[9] = -1;
  EXPECT_EQ(kz_session_eval(s, ids.data(), ids.size(), nullptr), KZ_ERR_OUT_OF_RANGE);
  EXPECT_EQ(kz_session_n_past(s), 0);
  std::vector<int32_t> too_long(17, prompt_[0]);
  EXPECT_EQ(kz_session_eval(s, too_long.data(), too_long.size(), nullptr), KZ_ERR_OUT_OF_RANGE);
  EXPECT_TRUE(contains(kz_last_error(), "context full")) << kz_last_error();
  EXPECT_EQ(kz_session_n_past(s), 0);
  EXPECT_EQ(kz_session_eval(s, too_long.data(), 0, nullptr), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_session_eval(s, nullptr, 3, nullptr), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_session_eval(s, too_long.data(), 16, nullptr), KZ_OK);
  EXPECT_EQ(kz_session_eval(s, too_long.data(), 1, nullptr), KZ_ERR_OUT_OF_RANGE);
  EXPECT_EQ(kz_session_n_past(s), 16);
  kz_session_free(s);
  kz_engine_free(e);
}

TEST_F(CApiTest, GreedyGenerateEqualsTheCppSession) {
  kz_session* s = c_session();
  ASSERT_NE(s, nullptr);
  auto ref = cpp_session();
  std::string streamed;
  auto collect = [](const char* piece, size_t len, void* user) -> int {
    EXPECT_EQ(std::strlen(piece), len);  // NUL-terminated
    static_cast<std::string*>(user)->append(piece, len);
    return 1;
  };
  kz_generate_options o = greedy_c(16);
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, collect, &streamed, &r), KZ_OK)
      << kz_last_error();
  auto expected = ref->generate(prompt_, greedy_cpp(16));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(result_tokens(r), expected->tokens);
  EXPECT_EQ(result_text(r), expected->text);
  EXPECT_EQ(streamed, expected->text);
  EXPECT_EQ(r.n_tokens, 16u);
  EXPECT_EQ(r.stop_reason, KZ_STOP_LENGTH);
  EXPECT_EQ(r.prompt_tokens, static_cast<int64_t>(prompt_.size()));
  EXPECT_EQ(r.reused_tokens, 0);
  EXPECT_EQ(r.text[r.text_len], '\0');

  // The next turn reuses the prefix, as in C++; the result is the session's.
  std::vector<int32_t> turn2 = prompt_;
  turn2.insert(turn2.end(), expected->tokens.begin(), expected->tokens.end());
  turn2.push_back(prompt_[2]);
  ASSERT_EQ(kz_session_generate(s, turn2.data(), turn2.size(), &o, nullptr, nullptr, &r), KZ_OK);
  auto expected2 = ref->generate(turn2, greedy_cpp(16));
  ASSERT_TRUE(expected2.ok());
  EXPECT_EQ(result_tokens(r), expected2->tokens);
  EXPECT_EQ(result_text(r), expected2->text);
  EXPECT_EQ(r.reused_tokens, expected2->reused_tokens);
  EXPECT_GT(r.reused_tokens, 0);

  // Sampling with a seed is deterministic across the two APIs too.
  o.sampling.temperature = 0.9f;
  o.sampling.seed = 42;
  GenerateOptions go = greedy_cpp(16);
  go.sampling.temperature = 0.9f;
  go.sampling.seed = 42;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_OK);
  auto sampled = ref->generate(prompt_, go);
  ASSERT_TRUE(sampled.ok());
  EXPECT_EQ(result_tokens(r), sampled->tokens);
  kz_session_free(s);
}

TEST_F(CApiTest, ReasoningBudgetMatchesTheCppSession) {
  const char* request = R"({"messages": [{"role": "user", "content": "Think about foxes"}]})";
  auto rendered = cpp_->render_chat(request);
  ASSERT_TRUE(rendered.ok());
  const std::string prompt = *rendered + "<think>\n";
  auto ids = cpp_->tokenize_chat_prompt(prompt);
  ASSERT_TRUE(ids.ok());
  kz_session* s = c_session();
  kz_generate_options o = greedy_c(12);
  o.max_think_tokens = 3;
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s, ids->data(), ids->size(), &o, nullptr, nullptr, &r), KZ_OK) << kz_last_error();
  GenerateOptions go = greedy_cpp(12);
  go.max_think_tokens = 3;
  auto expected = cpp_session()->generate(*ids, go);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(result_tokens(r), expected->tokens);
  EXPECT_EQ(r.think_forced_closed, expected->think_forced_closed ? 1 : 0);
  EXPECT_EQ(r.think_tokens, expected->think_tokens);
  EXPECT_EQ(r.think_forced_closed, 1);
  kz_session_free(s);
}

TEST_F(CApiTest, CallbackStopsGenerationEarly) {
  kz_session* s = c_session();
  kz_generate_options o = greedy_c(32);
  kz_generate_result full;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &full), KZ_OK);
  const std::vector<int32_t> full_tokens = result_tokens(full);

  int calls = 0;
  auto stop_after_two = [](const char*, size_t, void* user) -> int { return ++*static_cast<int*>(user) < 2; };
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, stop_after_two, &calls, &r), KZ_OK);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r.stop_reason, KZ_STOP_CANCELLED);
  ASSERT_LT(r.n_tokens, full_tokens.size());
  EXPECT_EQ(result_tokens(r), std::vector<int32_t>(full_tokens.begin(), full_tokens.begin() + r.n_tokens));
  kz_session_free(s);
}

TEST_F(CApiTest, StopStrings) {
  kz_session* s = c_session();
  kz_generate_options o = greedy_c(24);
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_OK);
  const std::string full = result_text(r);
  ASSERT_GT(full.size(), 8u) << full;
  // A stop string from the middle of the greedy text: the text ends before
  // its first occurrence.
  const std::string stop = full.substr(full.size() / 2, 2);
  const size_t at = full.find(stop);
  const char* stops[2] = {"never appears \x01", stop.c_str()};
  o.stop = stops;
  o.n_stop = 2;
  std::string streamed;
  auto collect = [](const char* piece, size_t len, void* user) -> int {
    static_cast<std::string*>(user)->append(piece, len);
    return 1;
  };
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, collect, &streamed, &r), KZ_OK);
  EXPECT_EQ(r.stop_reason, KZ_STOP_STOP);
  EXPECT_EQ(result_text(r), full.substr(0, at));
  EXPECT_EQ(streamed, full.substr(0, at));  // the stop string is never streamed
  GenerateOptions go = greedy_cpp(24);
  go.stop = {stops[0], stops[1]};
  auto expected = cpp_session()->generate(prompt_, go);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(result_text(r), expected->text);
  EXPECT_EQ(result_tokens(r), expected->tokens);

  // Unusable stop lists.
  o.stop = nullptr;
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  const char* null_stop[1] = {nullptr};
  o.stop = null_stop;
  o.n_stop = 1;
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kz_last_error(), "stop[0] is NULL")) << kz_last_error();
  const char* empty_stop[1] = {""};
  o.stop = empty_stop;
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(r.text, "");
  kz_session_free(s);
}

TEST_F(CApiTest, GenerateErrors) {
  kz_session* s = c_session();
  kz_generate_result r;
  EXPECT_EQ(kz_session_generate(s, nullptr, 3, nullptr, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), 0, nullptr, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  kz_generate_options o = greedy_c(4);
  o.sampling.top_p = 0.0f;  // (0, 1]
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, nullptr, nullptr, &r), KZ_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kz_last_error(), "top_p")) << kz_last_error();
  const int32_t bad[2] = {prompt_[0], 1 << 30};
  o = greedy_c(4);
  EXPECT_EQ(kz_session_generate(s, bad, 2, &o, nullptr, nullptr, &r), KZ_ERR_OUT_OF_RANGE);
  EXPECT_EQ(r.n_tokens, 0u);
  // Defaults (NULL options) and no result: fine.
  EXPECT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), nullptr, nullptr, nullptr, nullptr), KZ_OK);
  kz_session_free(s);
}

// The callback calls back into its own session: refused, generation goes on.
TEST_F(CApiTest, ReentrantCallsAreRefused) {
  kz_session* s = c_session();
  struct Probe {
    kz_session* s;
    int eval = -1, reset = -1, generate = -1;
    int32_t token;
  } probe{s, -1, -1, -1, prompt_[0]};
  auto reenter = [](const char*, size_t, void* user) -> int {
    auto* p = static_cast<Probe*>(user);
    p->eval = kz_session_eval(p->s, &p->token, 1, nullptr);
    p->reset = kz_session_reset(p->s);
    p->generate = kz_session_generate(p->s, &p->token, 1, nullptr, nullptr, nullptr, nullptr);
    return 1;
  };
  kz_generate_options o = greedy_c(8);
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s, prompt_.data(), prompt_.size(), &o, reenter, &probe, &r), KZ_OK);
  EXPECT_EQ(probe.eval, KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(probe.reset, KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(probe.generate, KZ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r.n_tokens, 8u);
  EXPECT_EQ(result_tokens(r), cpp_greedy_tokens(8));
  kz_session_free(s);
}

// kz_engine_free before the session: the engine lives until the session goes.
TEST_F(CApiTest, EngineOutlivesItsHandleWhileSessionsExist) {
  kz_engine* e = nullptr;
  const kz_engine_options o = c_options();
  ASSERT_EQ(kz_engine_load(path_.c_str(), &o, &e), KZ_OK);
  kz_session* s1 = nullptr;
  kz_session* s2 = nullptr;
  ASSERT_EQ(kz_session_new(e, &s1), KZ_OK);
  ASSERT_EQ(kz_session_new(e, &s2), KZ_OK);
  kz_engine_free(e);
  kz_session_free(s1);
  kz_generate_options go = greedy_c(6);
  kz_generate_result r;
  ASSERT_EQ(kz_session_generate(s2, prompt_.data(), prompt_.size(), &go, nullptr, nullptr, &r), KZ_OK);
  EXPECT_EQ(result_tokens(r), cpp_greedy_tokens(6));
  kz_session_free(s2);
}

// Two sessions of one engine on two threads at once give what they give one
// after the other (the header's threading rule).
TEST_F(CApiTest, SessionsOfOneEngineRunOnTwoThreads) {
  kz_engine* e = nullptr;
  kz_engine_options o = c_options();
  o.n_threads = 2;
  ASSERT_EQ(kz_engine_load(path_.c_str(), &o, &e), KZ_OK);
  const std::vector<int32_t> prompts[2] = {prompt_, std::vector<int32_t>(prompt_.rbegin(), prompt_.rend())};
  std::vector<int32_t> alone[2], together[2];
  auto run = [&](int i, std::vector<int32_t>* out) {
    kz_session* s = nullptr;
    if (kz_session_new(e, &s) != KZ_OK) return;
    kz_generate_options go = greedy_c(12);
    kz_generate_result r;
    if (kz_session_generate(s, prompts[i].data(), prompts[i].size(), &go, nullptr, nullptr, &r) == KZ_OK)
      *out = result_tokens(r);
    kz_session_free(s);
  };
  run(0, &alone[0]);
  run(1, &alone[1]);
  std::thread t0(run, 0, &together[0]), t1(run, 1, &together[1]);
  t0.join();
  t1.join();
  ASSERT_EQ(alone[0].size(), 12u);
  ASSERT_EQ(alone[1].size(), 12u);
  EXPECT_EQ(together[0], alone[0]);
  EXPECT_EQ(together[1], alone[1]);
  kz_engine_free(e);
}

}  // namespace
}  // namespace kazeia
