// A scripted "model" for the agent loop tests: each round emits the tokens
// of a fixed text through the real tokenizer (special tokens such as
// <tool_call> and <think> become their single ids), then the end-of-turn
// token. It records the prompts it was started with and the tokens the loop
// forced into it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agent/token_generator.h"
#include "text/tokenizer.h"

namespace kazeia::agent::testing {

struct ScriptedRound {
  ScriptedRound() = default;
  ScriptedRound(std::string t, std::string after = {}) : text(std::move(t)), after_forced_close(std::move(after)) {}
  std::string text;  // what the model writes this round
  // When the loop forces </think> (reasoning budget), the round continues
  // with this text instead of the rest of `text`.
  std::string after_forced_close;
};

class ScriptedGenerator final : public TokenGenerator {
 public:
  // Rounds past the last script repeat the last one.
  ScriptedGenerator(const text::Tokenizer& tokenizer, std::vector<ScriptedRound> rounds, int32_t end_id)
      : tok_(tokenizer), rounds_(std::move(rounds)), end_id_(end_id) {}

  Result<PromptStats> start(std::span<const int32_t> prompt) override {
    prompts.emplace_back(prompt.begin(), prompt.end());
    const size_t r = std::min(prompts.size() - 1, rounds_.size() - 1);
    current_ = rounds_[r];
    load(current_.text);
    PromptStats stats;
    stats.evaluated = static_cast<int64_t>(prompt.size());
    return stats;
  }

  Result<int32_t> next() override {
    const int32_t id = pos_ < tokens_.size() ? tokens_[pos_] : end_id_;
    ++pos_;
    emitted.push_back(id);
    return id;
  }

  Status append(std::span<const int32_t> tokens) override {
    appended.emplace_back(tokens.begin(), tokens.end());
    if (!current_.after_forced_close.empty()) load(current_.after_forced_close);
    return OkStatus();
  }

  void finish() override { ++finished; }

  std::vector<std::vector<int32_t>> prompts;   // one per round
  std::vector<std::vector<int32_t>> appended;  // forced token runs
  std::vector<int32_t> emitted;                // every token handed out
  int finished = 0;

 private:
  void load(const std::string& text) {
    tokens_ = tok_.encode(text, /*parse_special=*/true, /*add_special=*/false);
    tokens_.push_back(end_id_);
    pos_ = 0;
  }

  const text::Tokenizer& tok_;
  std::vector<ScriptedRound> rounds_;
  int32_t end_id_;
  ScriptedRound current_;
  std::vector<int32_t> tokens_;
  size_t pos_ = 0;
};

}  // namespace kazeia::agent::testing
