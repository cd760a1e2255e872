// Tool registry and dispatcher: the agent's side of function calling.
//
// A Tool is a C++ callable plus what the model needs to call it (a name, a
// description, a JSON-schema for its arguments). The registry
//   - exports the OpenAI-style `tools` list for the chat template,
//   - checks a call's arguments against the schema before running anything,
//   - runs the handler on its own thread with a per-attempt timeout,
//   - retries retryable failures with exponential backoff,
//   - runs the several calls of one turn in parallel,
// and turns every failure (unknown tool, bad arguments, error Status, thrown
// exception, timeout) into a ToolResult the model reads in the next turn.
// Nothing a tool does can crash or hang the agent loop.
//
// Timeouts and cancellation. C++ cannot stop a thread from the outside, so a
// timeout works like this: each attempt runs on a fresh detached thread; the
// dispatcher waits until the handler returns or the deadline passes. At the
// deadline it sets the attempt's cancel flag (ToolContext::cancelled(),
// ToolContext::sleep_for() wakes up early) and reports a timeout at once.
// A handler that ignores the flag keeps running in the background until it
// returns on its own; its result is then discarded ("detach and abandon").
// Consequences for handler authors:
//   - poll ctx.cancelled() in long loops and use ctx.sleep_for() for waits;
//   - own what you use (capture shared_ptr, not references to stack objects
//     of the caller): an abandoned handler may outlive the dispatch call and
//     even the registry;
//   - side effects of an abandoned attempt still happen; retried tools must
//     be idempotent.
// running_handlers() counts handler threads still alive (abandoned ones
// included) and wait_idle() waits for them, e.g. before process exit.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kazeia/status.h"

namespace kazeia::agent {

using json = nlohmann::ordered_json;

// Shared between the dispatcher and one running attempt.
class CancelFlag {
 public:
  void cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Waits up to `duration`; returns false if cancelled before it elapsed.
  bool wait_for(std::chrono::nanoseconds duration);

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

// What a handler knows about the call it is serving.
struct ToolContext {
  std::string call_id;
  std::string tool_name;
  std::string conversation_id;  // from DispatchOptions; empty if none
  int attempt = 1;              // 1-based
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::shared_ptr<CancelFlag> cancel_flag = std::make_shared<CancelFlag>();

  // True once the dispatcher gave up on this attempt (timeout).
  bool cancelled() const { return cancel_flag->cancelled(); }
  // Cancellation-aware sleep: false if cancelled before `duration` elapsed.
  bool sleep_for(std::chrono::nanoseconds duration) const { return cancel_flag->wait_for(duration); }
};

// A handler returns JSON. A JSON string is passed to the model verbatim as
// the tool message content; any other value is serialised compactly.
using ToolHandler = std::function<Result<json>(const json& args, const ToolContext& ctx)>;
using RetryPredicate = std::function<bool(const Status& error)>;

struct Tool {
  std::string name;         // [A-Za-z0-9_-]{1,64}, unique in a registry
  std::string description;  // for the model: what it does and when to use it
  // JSON schema of the arguments object; root "type" must be "object".
  json parameters = json{{"type", "object"}, {"properties", json::object()}};
  ToolHandler handler;
  // Per attempt; zero or negative: no limit.
  std::chrono::milliseconds timeout{10000};
  // Extra attempts after a retryable failure (0: no retry).
  int max_retries = 0;
  // Backoff before retry n (1-based) is base * 2^(n-1), capped by the
  // registry's retry_max_delay. Unset: the registry's retry_base_delay.
  std::optional<std::chrono::milliseconds> retry_base_delay;
  // Which failures are worth retrying. Unset: kIo and kTimeout errors.
  // Invalid arguments and thrown exceptions are never retried.
  RetryPredicate is_retryable;
};

// One call as emitted by the model. `arguments` may be an object or a string
// holding JSON (the OpenAI wire format); null or "" means no arguments.
struct ToolCall {
  std::string id;
  std::string name;
  json arguments = json::object();
};

struct ToolResult {
  std::string call_id;
  std::string name;
  bool ok = false;
  std::string content;  // what goes into the tool message
  int attempts = 0;     // handler runs; 0 when rejected before running
  std::chrono::nanoseconds duration{0};  // whole dispatch, retries and backoff included
  Status status;        // the failure when !ok (kTimeout for a timeout, ...)

  // {"role": "tool", "tool_call_id": ..., "name": ..., "content": ...}
  json to_message() const;
};

struct ToolRegistryOptions {
  std::chrono::milliseconds retry_base_delay{200};
  std::chrono::milliseconds retry_max_delay{5000};
  int max_parallel = 8;                    // concurrent calls in dispatch_all
  size_t max_content_bytes = 32 * 1024;    // longer content is cut (UTF-8 safe) with a note
};

struct DispatchOptions {
  std::string conversation_id;  // copied into ToolContext
};

class ToolRegistry {
 public:
  explicit ToolRegistry(ToolRegistryOptions options = {});
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // Fails on an invalid name, a duplicate, a missing handler or a schema
  // outside the supported subset (see json_schema.h).
  Status register_tool(Tool tool);

  bool contains(const std::string& name) const;
  std::vector<std::string> tool_names() const;  // registration order

  // [{"type": "function", "function": {"name", "description", "parameters"}}]
  json tools_json() const;

  // Runs one call to completion (success, failure or timeout). Thread-safe.
  ToolResult dispatch(const ToolCall& call, const DispatchOptions& options = {}) const;

  // Runs the calls concurrently (at most max_parallel at a time) and returns
  // their results in call order.
  std::vector<ToolResult> dispatch_all(const std::vector<ToolCall>& calls,
                                       const DispatchOptions& options = {}) const;

  // Handler threads still running, abandoned ones included.
  int running_handlers() const;
  // Waits until running_handlers() is 0 or the timeout passes; true if idle.
  bool wait_idle(std::chrono::milliseconds timeout) const;

  // Shared with handler threads, which may outlive the registry.
  struct Activity {
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
  };

 private:
  std::shared_ptr<const Tool> find(const std::string& name) const;
  Result<json> run_attempt(const std::shared_ptr<const Tool>& tool, const json& args,
                           const ToolContext& ctx, bool& threw) const;
  std::string available_list() const;

  ToolRegistryOptions options_;
  mutable std::mutex mu_;  // guards tools_
  std::vector<std::shared_ptr<const Tool>> tools_;
  std::shared_ptr<Activity> activity_ = std::make_shared<Activity>();
};

}  // namespace kazeia::agent
