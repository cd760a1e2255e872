#include "agent/tool_registry.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "agent/json_schema.h"
#include "agent/text_util.h"
#include "base/log.h"

namespace kazeia::agent {

using Clock = std::chrono::steady_clock;

void CancelFlag::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool CancelFlag::wait_for(std::chrono::nanoseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, duration, [this] { return cancelled_.load(std::memory_order_acquire); });
}

json ToolResult::to_message() const {
  return json{{"role", "tool"}, {"tool_call_id", call_id}, {"name", name}, {"content", content}};
}

namespace {

bool valid_tool_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

bool default_retryable(const Status& error) {
  return error.code() == ErrorCode::kIo || error.code() == ErrorCode::kTimeout;
}

// Runs the handler, converting exceptions into Status values: a throwing tool
// must look like a failing tool, not take the thread (and process) down.
Result<json> invoke_handler(const Tool& tool, const json& args, const ToolContext& ctx, bool& threw) {
  threw = true;
  try {
    Result<json> result = tool.handler(args, ctx);
    threw = false;
    return result;
  } catch (const std::exception& e) {
    return Internal("tool '" + tool.name + "' threw an exception: " + e.what());
  } catch (...) {
    return Internal("tool '" + tool.name + "' threw an unknown exception");
  }
}

// Result of one attempt, handed from the handler thread to the dispatcher.
struct AttemptState {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<json>> result;
  bool threw = false;
};

// Parses the OpenAI wire form (arguments as a JSON string) into an object.
Result<json> normalise_arguments(const json& arguments) {
  if (arguments.is_null()) return json::object();
  if (!arguments.is_string()) return arguments;
  const std::string& text = arguments.get_ref<const std::string&>();
  if (trim(text).empty()) return json::object();
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return InvalidArgument("arguments are not valid JSON: " + std::string(utf8_prefix(text, 120)));
  }
  return parsed;
}

std::string render_content(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string truncate_content(std::string content, size_t max_bytes) {
  if (max_bytes == 0 || content.size() <= max_bytes) return content;
  const size_t total = content.size();
  std::string out(utf8_prefix(content, max_bytes));
  out += "\n[truncated: " + std::to_string(out.size()) + " of " + std::to_string(total) +
         " bytes shown]";
  return out;
}

}  // namespace

ToolRegistry::ToolRegistry(ToolRegistryOptions options) : options_(std::move(options)) {
  options_.max_parallel = std::max(1, options_.max_parallel);
}

Status ToolRegistry::register_tool(Tool tool) {
  if (!valid_tool_name(tool.name)) {
    return InvalidArgument("tool name '" + tool.name +
                           "' is invalid: use 1 to 64 characters from [A-Za-z0-9_-]");
  }
  if (!tool.handler) return InvalidArgument("tool '" + tool.name + "' has no handler");
  if (tool.max_retries < 0) return InvalidArgument("tool '" + tool.name + "': max_retries < 0");
  KZ_RETURN_IF_ERROR(check_schema(tool.parameters).with_context("tool '" + tool.name + "' parameters"));
  auto type_it = tool.parameters.find("type");
  if (!tool.parameters.is_object() || type_it == tool.parameters.end() || *type_it != "object") {
    return InvalidArgument("tool '" + tool.name + "' parameters: root schema must have type \"object\"");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& existing : tools_) {
    if (existing->name == tool.name) return InvalidArgument("tool '" + tool.name + "' is already registered");
  }
  tools_.push_back(std::make_shared<const Tool>(std::move(tool)));
  return OkStatus();
}

bool ToolRegistry::contains(const std::string& name) const { return find(name) != nullptr; }

std::vector<std::string> ToolRegistry::tool_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  names.reserve(tools_.size());
  for (const auto& tool : tools_) names.push_back(tool->name);
  return names;
}

json ToolRegistry::tools_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  json list = json::array();
  for (const auto& tool : tools_) {
    list.push_back(json{{"type", "function"},
                        {"function",
                         {{"name", tool->name},
                          {"description", tool->description},
                          {"parameters", tool->parameters}}}});
  }
  return list;
}

std::shared_ptr<const Tool> ToolRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& tool : tools_) {
    if (tool->name == name) return tool;
  }
  return nullptr;
}

std::string ToolRegistry::available_list() const {
  std::string out;
  for (const std::string& name : tool_names()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "(none)" : out;
}

int ToolRegistry::running_handlers() const {
  std::lock_guard<std::mutex> lock(activity_->mu);
  return activity_->running;
}

bool ToolRegistry::wait_idle(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(activity_->mu);
  return activity_->cv.wait_for(lock, timeout, [this] { return activity_->running == 0; });
}

Result<json> ToolRegistry::run_attempt(const std::shared_ptr<const Tool>& tool, const json& args,
                                       const ToolContext& ctx, bool& threw) const {
  threw = false;
  auto state = std::make_shared<AttemptState>();
  {
    std::lock_guard<std::mutex> lock(activity_->mu);
    ++activity_->running;
  }
  try {
    // Everything the thread touches is owned by it (shared_ptr or copies):
    // after a timeout nobody waits for it any more.
    std::thread([state, tool, args, ctx, activity = activity_] {
      bool handler_threw = false;
      Result<json> result = invoke_handler(*tool, args, ctx, handler_threw);
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->result.emplace(std::move(result));
        state->threw = handler_threw;
      }
      state->cv.notify_all();
      {
        std::lock_guard<std::mutex> lock(activity->mu);
        --activity->running;
      }
      activity->cv.notify_all();
    }).detach();
  } catch (const std::system_error& e) {  // no thread available
    std::lock_guard<std::mutex> lock(activity_->mu);
    --activity_->running;
    return IoError("could not start a thread for tool '" + tool->name + "': " + e.what());
  }

  std::unique_lock<std::mutex> lock(state->mu);
  auto finished = [&] { return state->result.has_value(); };
  if (tool->timeout.count() <= 0) {
    state->cv.wait(lock, finished);
  } else if (!state->cv.wait_until(lock, ctx.deadline, finished)) {
    lock.unlock();
    ctx.cancel_flag->cancel();
    KZ_LOG_DEBUG("tool '%s' (call %s) timed out; handler abandoned", tool->name.c_str(),
                 ctx.call_id.c_str());
    return Status(ErrorCode::kTimeout, "tool '" + tool->name + "' timed out after " +
                                           std::to_string(tool->timeout.count()) + " ms");
  }
  threw = state->threw;
  return std::move(*state->result);
}

ToolResult ToolRegistry::dispatch(const ToolCall& call, const DispatchOptions& options) const {
  const auto start = Clock::now();
  ToolResult result;
  result.call_id = call.id;
  result.name = call.name;
  auto finish = [&](Result<json> outcome) {
    result.duration = Clock::now() - start;
    if (outcome.ok()) {
      result.ok = true;
      result.status = OkStatus();
      result.content = truncate_content(render_content(*outcome), options_.max_content_bytes);
    } else {
      result.ok = false;
      result.status = outcome.status();
      std::string text = "error: " + outcome.status().message();
      if (result.attempts > 1) text += " (gave up after " + std::to_string(result.attempts) + " attempts)";
      result.content = truncate_content(std::move(text), options_.max_content_bytes);
    }
    return result;
  };

  std::shared_ptr<const Tool> tool = find(call.name);
  if (tool == nullptr) {
    return finish(NotFound("unknown tool '" + call.name + "'; available: " + available_list()));
  }
  Result<json> args = normalise_arguments(call.arguments);
  if (!args.ok()) return finish(args.status());
  if (Status valid = validate_arguments(tool->parameters, *args); !valid.ok()) return finish(valid);

  const auto base_delay = tool->retry_base_delay.value_or(options_.retry_base_delay);
  const int max_attempts = 1 + tool->max_retries;
  for (int attempt = 1;; ++attempt) {
    ToolContext ctx;
    ctx.call_id = call.id;
    ctx.tool_name = tool->name;
    ctx.conversation_id = options.conversation_id;
    ctx.attempt = attempt;
    if (tool->timeout.count() > 0) ctx.deadline = Clock::now() + tool->timeout;
    result.attempts = attempt;
    bool threw = false;
    Result<json> outcome = run_attempt(tool, *args, ctx, threw);
    if (outcome.ok() || attempt >= max_attempts) return finish(std::move(outcome));
    const Status& error = outcome.status();
    const bool retryable = tool->is_retryable ? tool->is_retryable(error) : default_retryable(error);
    // Exceptions are bugs in the tool, not transient conditions.
    if (!retryable || threw) return finish(std::move(outcome));
    // Exponential backoff: base, 2*base, 4*base, ... capped.
    auto delay = base_delay * (int64_t{1} << std::min(attempt - 1, 20));
    delay = std::min<std::chrono::milliseconds>(delay, options_.retry_max_delay);
    KZ_LOG_DEBUG("tool '%s' attempt %d failed (%s); retrying in %lld ms", tool->name.c_str(), attempt,
                 error.message().c_str(), static_cast<long long>(delay.count()));
    std::this_thread::sleep_for(delay);
  }
}

std::vector<ToolResult> ToolRegistry::dispatch_all(const std::vector<ToolCall>& calls,
                                                   const DispatchOptions& options) const {
  std::vector<ToolResult> results(calls.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < calls.size(); i = next.fetch_add(1)) {
      results[i] = dispatch(calls[i], options);
    }
  };
  const size_t n_threads = std::min(calls.size(), static_cast<size_t>(options_.max_parallel));
  std::vector<std::thread> helpers;
  // The caller is one of the workers; helpers are best effort (if a thread
  // cannot be created the remaining workers simply take more calls).
  for (size_t t = 1; t < n_threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  return results;
}

}  // namespace kazeia::agent
