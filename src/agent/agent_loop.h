// The agent loop: chat template -> generator -> stream parser -> tools -> ...
//
// One run() is one user turn:
//   1. On the first turn the system message is built from the configured
//      system prompt plus, when a memory store is attached, its context block
//      for the first user message (kept fixed afterwards so later turns reuse
//      the evaluated prefix; the memory tools recall more on demand). The
//      tool list goes to the template as `tools`: the template writes it;
//      a template that does not (probed at load) gets the tools, calls and
//      results written into the messages instead (tool_prompt.h).
//   2. Each round renders the conversation, tokenizes it and streams tokens
//      from the generator through the detokenizer into the stream parser
//      (Hermes JSON calls, or the XML-parameter form for Qwen3.5 templates),
//      emitting think / answer / tool_call / error events as they come.
//   3. Reasoning budget: after max_think_tokens tokens inside <think>, the
//      loop appends the tokens of "\n</think>\n\n" (what the Qwen templates
//      write) and the model continues with the answer.
//   4. The round's assistant message (content, reasoning_content, tool_calls)
//      is appended; its calls run in parallel through the ToolRegistry, and
//      one tool message per call follows (a malformed call gets an error
//      message as its result, so the model can correct itself).
//   5. Timers of the `timer` tool that fired since the last turn are
//      announced to the model in a note before the user's text.
//   6. A round without calls ends the turn ("answer"); so do max_rounds
//      rounds ("max_rounds"), a cancelled callback ("cancelled") and a
//      generator failure ("error", also reported as an error event).
// A done event with the usage totals closes every turn.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/memory_store.h"
#include "agent/token_generator.h"
#include "agent/tools/timer_tool.h"
#include "agent/tool_registry.h"
#include "kazeia/status.h"
#include "text/chat_template.h"
#include "text/stream_parser.h"
#include "text/tokenizer.h"

namespace kazeia::agent {

enum class AgentEventType { kThink, kAnswer, kToolCall, kToolResult, kError, kDone };

const char* agent_event_type_name(AgentEventType type);  // "think", "answer", ...

struct AgentUsage {
  int rounds = 0;
  int64_t prompt_tokens = 0;     // evaluated, summed over rounds (reused ones excluded)
  int64_t reused_tokens = 0;     // served from the generator's earlier work
  int64_t generated_tokens = 0;  // sampled tokens (forced </think> tokens excluded)
  int64_t think_tokens = 0;      // sampled while inside <think>
  int forced_think_closes = 0;   // times the reasoning budget closed <think>
  double prompt_seconds = 0.0;
  double generation_seconds = 0.0;  // sampling, decoding and parsing
  double tool_seconds = 0.0;        // wall time of the tool dispatches
  std::string stop_reason;          // "answer", "max_rounds", "cancelled", "error"
};

struct AgentEvent {
  AgentEventType type = AgentEventType::kAnswer;
  int round = 0;                 // 1-based
  std::string text;              // think / answer piece; tool_result content; error message
  std::string id;                // tool_call / tool_result (and error, for a malformed call)
  std::string name;
  std::string arguments_json;    // tool_call: the arguments object
  bool ok = true;                // tool_result: the tool succeeded
  AgentUsage usage;              // done
};

// Return false to stop the turn (it ends with stop_reason "cancelled").
using AgentEventCallback = std::function<bool(const AgentEvent&)>;

struct AgentLoopOptions {
  std::string system_prompt;
  int max_rounds = 8;
  int32_t max_think_tokens = -1;        // < 0: no budget
  int32_t max_tokens_per_round = 2048;  // < 0: until end of generation
  bool enable_thinking = true;
  size_t memory_token_budget = 512;
  std::string conversation_id = "default";
};

// What the loop uses; everything must outlive it. memory and timers may be
// null; tools too (no tools). The tool list is read once, by create().
struct AgentLoopDeps {
  const text::Tokenizer* tokenizer = nullptr;
  const text::ChatTemplate* chat_template = nullptr;
  TokenGenerator* generator = nullptr;
  std::shared_ptr<const ToolRegistry> tools;
  std::shared_ptr<MemoryStore> memory;
  std::shared_ptr<TimerService> timers;  // may be null: no timer notes
};

struct AgentTurn {
  std::string answer;     // content of the last assistant message
  std::string reasoning;  // its reasoning
  AgentUsage usage;
};

// "[Timer notice: timer 1 \"tea\" (5 min) has fired.]" lines for fired
// timers; empty when none.
std::string timer_notice(const std::vector<TimerEvent>& fired);

// A rendered chat prompt -> ids: special tokens parsed, BOS added only when
// the vocabulary wants one and the template did not write it.
std::vector<int32_t> tokenize_chat_prompt(const text::Tokenizer& tokenizer, std::string_view prompt);

class AgentLoop {
 public:
  static Result<AgentLoop> create(AgentLoopDeps deps, AgentLoopOptions options);

  Result<AgentTurn> run(std::string_view user_message, const AgentEventCallback& on_event = nullptr);

  // Forgets the conversation (the next run builds a new system message).
  void reset();

  // The conversation so far, OpenAI-style.
  const nlohmann::ordered_json& messages() const { return messages_; }
  // The prompts rendered by the last run, one per round.
  const std::vector<std::string>& last_prompts() const { return last_prompts_; }

 private:
  struct Round;
  AgentLoop(AgentLoopDeps deps, AgentLoopOptions options);
  Status build_system_message(std::string_view first_user_message);
  Result<Round> generate_round(int round, const AgentEventCallback& emit, AgentUsage& usage);
  void run_tools(int round, Round& r, const AgentEventCallback& emit, AgentUsage& usage, bool& cancelled);

  AgentLoopDeps deps_;
  AgentLoopOptions options_;
  text::ToolCallFormat format_;
  std::vector<int32_t> think_close_;  // tokens of "\n</think>\n\n"
  std::map<std::string, nlohmann::json> known_tools_;
  nlohmann::ordered_json tools_json_;
  nlohmann::ordered_json messages_ = nlohmann::ordered_json::array();
  std::vector<std::string> last_prompts_;
};

}  // namespace kazeia::agent
