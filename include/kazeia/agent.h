// The agent: a model that thinks, calls tools and remembers (`kazeia agent`).
//
// An Agent wraps one Session of an Engine. run() takes a user message and
// loops: render the conversation with the model's chat template (the tool
// list goes in as the template's `tools`), generate while streaming events,
// run the round's tool calls in parallel, feed their results back, until the
// model answers without calling a tool or max_rounds rounds have run. Every
// turn ends with a done event carrying the usage.
//
// Built-in tools, by name: calculator, timer, clock, memory (memory_store /
// memory_recall / memory_forget; needs memory_path), web_search (answers from
// an offline JSONL cache, web_search_cache; without one every query is "not
// in cache"). With memory_path the memories most relevant to the first user
// message are also put into the system prompt, and pending timers are saved
// in that database: an agent created later on it lists them, fires them on
// time, and fires at creation those whose time came while none was running
// (announced as late, with how late).
//
// std-only types; errors are Status / Result values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/engine.h"
#include "kazeia/status.h"

namespace kazeia {

struct AgentOptions {
  std::vector<std::string> tools{"calculator", "timer", "clock"};
  std::string memory_path;       // SQLite database; "" = no memory
  std::string web_search_cache;  // JSONL cache for web_search; "" = empty cache
  std::string system_prompt;
  int max_rounds = 8;                   // generation rounds per run()
  int32_t max_think_tokens = -1;        // reasoning budget per round; < 0: none
  int32_t max_tokens_per_round = 2048;  // < 0: until end of generation
  bool enable_thinking = true;          // false: rendered with enable_thinking=false
  SamplingOptions sampling;
  size_t memory_token_budget = 512;     // memory context in the system prompt
  std::string conversation_id = "default";  // scopes memories
  // Called on the timer thread when a timer of the `timer` tool fires, with
  // the note the model gets at the start of its next turn. Keep it quick.
  std::function<void(const std::string& notice)> on_timer_fired;
};

enum class AgentEventType { kThink, kAnswer, kToolCall, kToolResult, kError, kDone };

struct AgentUsage {
  int rounds = 0;
  int64_t prompt_tokens = 0;     // evaluated prompt tokens (reused ones excluded)
  int64_t reused_tokens = 0;     // prompt tokens served from the session's history
  int64_t generated_tokens = 0;  // sampled tokens
  int64_t think_tokens = 0;      // of which inside <think>
  int forced_think_closes = 0;   // rounds whose reasoning the budget cut
  double prompt_seconds = 0.0;
  double generation_seconds = 0.0;
  double tool_seconds = 0.0;
  std::string stop_reason;       // "answer", "max_rounds", "cancelled", "error"
};

struct AgentEvent {
  AgentEventType type = AgentEventType::kAnswer;
  int round = 0;                // 1-based
  std::string text;             // think / answer piece; tool result; error message
  std::string id;               // tool call id (tool_call, tool_result, malformed-call errors)
  std::string name;             // tool name
  std::string arguments_json;   // tool_call: the arguments object as JSON
  bool ok = true;               // tool_result: the tool succeeded
  AgentUsage usage;             // done
};

// Return false to stop the turn.
using AgentEventCallback = std::function<bool(const AgentEvent&)>;

const char* agent_event_type_name(AgentEventType type);  // "think", "answer", ...
// One line of JSON, no newline: {"type":"think","round":1,"text":...},
// {"type":"tool_call","round":1,"id":...,"name":...,"arguments":{...}},
// {"type":"tool_result","round":1,"id":...,"name":...,"ok":true,"content":...},
// {"type":"error","round":1,"message":...[,"id","name"]},
// {"type":"done","round":N,"usage":{...}}.
std::string agent_event_to_json(const AgentEvent& event);

struct AgentReply {
  std::string answer;     // the final assistant message's content
  std::string reasoning;  // its reasoning
  AgentUsage usage;
};

class Agent {
 public:
  // The engine must outlive the agent. Fails on an unknown tool name, a
  // memory tool without memory_path, an unreadable database or cache.
  static Result<std::unique_ptr<Agent>> create(Engine& engine, const AgentOptions& options = {});
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // One user turn. A failure of the model or the template is returned (after
  // an error and a done event); tool failures are results the model sees.
  Result<AgentReply> run(std::string_view user_message, const AgentEventCallback& on_event = nullptr);

  // Starts a new conversation.
  void reset();

  // The conversation so far as an OpenAI-style messages JSON array.
  std::string messages_json() const;
  // The tool names the model is offered (memory expands to its three tools).
  std::vector<std::string> tool_names() const;

  // Tools that are still running (a timed-out handler finishing in the
  // background); waits up to `timeout_ms` for them, true when none is left.
  bool wait_tools_idle(int64_t timeout_ms) const;

 private:
  Agent();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kazeia
