// The reasoning budget: after N tokens inside <think>, the generator inserts
// the tokens of "\n</think>\n\n" (what the Qwen templates write between
// reasoning and answer) and the model goes on with its answer. Shared by
// the agent loop and Session::generate, which both track the think state
// with a StreamParser fed the decoded output.
#pragma once

#include <cstdint>
#include <string_view>

#include "text/stream_parser.h"

namespace kazeia::agent {

inline constexpr std::string_view kThinkClose = "\n</think>\n\n";

// The generation prompt already opened <think> (Qwen3.5 does; Qwen3 lets
// the model write it): the output starts as reasoning.
inline bool prompt_opens_think(std::string_view prompt) {
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ' || prompt.back() == '\r'))
    prompt.remove_suffix(1);
  return prompt.ends_with("<think>");
}

class ReasoningBudget {
 public:
  explicit ReasoningBudget(int64_t max_think_tokens) : max_(max_think_tokens) {}

  // Before a sampled token's text is fed to the parser: counts it when it
  // is reasoning.
  void count(const text::StreamParser& parser) {
    if (parser.in_think()) ++used_;
  }
  // True when </think> must be inserted before the next token: the budget is
  // used up, the output is in think, and not inside a tool call the model is
  // writing in its reasoning (the tag would land in the call's body; think
  // closes once the call is complete). Once per generation.
  bool due(const text::StreamParser& parser) const {
    return !spent_ && max_ >= 0 && used_ >= max_ && parser.in_think() && !parser.in_call();
  }
  void spend() { spent_ = true; }

  int64_t used() const { return used_; }

 private:
  int64_t max_;
  int64_t used_ = 0;
  bool spent_ = false;
};

}  // namespace kazeia::agent
