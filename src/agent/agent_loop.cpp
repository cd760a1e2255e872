#include "agent/agent_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "agent/reasoning_budget.h"
#include "agent/tool_prompt.h"
#include "text/detokenizer.h"

namespace kazeia::agent {

namespace {

using ojson = nlohmann::ordered_json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* agent_event_type_name(AgentEventType type) {
  switch (type) {
    case AgentEventType::kThink: return "think";
    case AgentEventType::kAnswer: return "answer";
    case AgentEventType::kToolCall: return "tool_call";
    case AgentEventType::kToolResult: return "tool_result";
    case AgentEventType::kError: return "error";
    case AgentEventType::kDone: return "done";
  }
  return "unknown";
}

namespace {

// "2 h 5 min", "3 min 12 s", "40 s": whole seconds, the largest unit and the
// next one when it is not zero.
std::string whole_duration(std::chrono::nanoseconds d) {
  int64_t rest = std::max<int64_t>(0, std::chrono::round<std::chrono::seconds>(d).count());
  if (rest == 0) return "0 s";
  static const std::pair<int64_t, const char*> kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "min"}, {1, "s"}};
  std::string out;
  for (const auto& [size, name] : kUnits) {
    const int64_t n = rest / size;
    rest %= size;
    if (!out.empty()) {
      if (n > 0) out += " " + std::to_string(n) + " " + name;
      break;
    }
    if (n > 0) out = std::to_string(n) + " " + name;
  }
  return out;
}

}  // namespace

std::string timer_notice(const std::vector<TimerEvent>& fired) {
  std::string notice;
  for (const auto& t : fired) {
    const double secs = std::chrono::duration<double>(t.duration).count();
    char duration[64];
    if (secs >= 60.0 && std::fmod(secs, 60.0) == 0.0)
      std::snprintf(duration, sizeof duration, "%g min", secs / 60.0);
    else
      std::snprintf(duration, sizeof duration, "%g s", secs);
    notice += "[Timer notice: timer " + std::to_string(t.id) +
              (t.label.empty() ? std::string() : " " + nlohmann::json(t.label).dump()) + " (" + duration + ") " +
              (t.missed ? "fired late: its time came " + whole_duration(t.late_by()) +
                              " ago, while the agent was not running.]\n"
                        : std::string("has fired.]\n"));
  }
  return notice;
}

std::vector<int32_t> tokenize_chat_prompt(const text::Tokenizer& tokenizer, std::string_view prompt) {
  bool add_special = tokenizer.add_bos();
  if (add_special && tokenizer.valid_id(tokenizer.bos_id())) {
    const std::string_view bos = tokenizer.token_text(tokenizer.bos_id());
    if (!bos.empty() && prompt.starts_with(bos)) add_special = false;
  }
  return tokenizer.encode(prompt, /*parse_special=*/true, add_special);
}

// One round's output: the parsed calls and malformed calls in the order the
// model wrote them.
struct AgentLoop::Round {
  std::string reasoning;
  std::string content;
  std::vector<text::StreamEvent> calls;  // kToolCall and kError events
  bool cancelled = false;
};

AgentLoop::AgentLoop(AgentLoopDeps deps, AgentLoopOptions options)
    : deps_(std::move(deps)), options_(std::move(options)) {}

Result<AgentLoop> AgentLoop::create(AgentLoopDeps deps, AgentLoopOptions options) {
  if (deps.tokenizer == nullptr || deps.chat_template == nullptr || deps.generator == nullptr)
    return InvalidArgument("agent loop: tokenizer, chat template and generator are required");
  if (options.max_rounds < 1)
    return InvalidArgument("max_rounds must be at least 1, got " + std::to_string(options.max_rounds));
  if (!deps.tools) deps.tools = std::make_shared<ToolRegistry>();
  AgentLoop loop(std::move(deps), std::move(options));
  loop.format_ = loop.deps_.chat_template->family() == text::ChatTemplateFamily::kQwen35
                     ? text::ToolCallFormat::kQwen35
                     : text::ToolCallFormat::kHermes;
  loop.think_close_ = loop.deps_.tokenizer->encode(kThinkClose, /*parse_special=*/true, /*add_special=*/false);
  loop.tools_json_ = loop.deps_.tools->tools_json();
  for (const auto& t : loop.tools_json_) {
    const auto& fn = t["function"];
    // The parser's schema map is plain json; the registry's is ordered.
    loop.known_tools_[fn["name"].get<std::string>()] =
        fn.contains("parameters") ? nlohmann::json::parse(fn["parameters"].dump()) : nlohmann::json();
  }
  return loop;
}

void AgentLoop::reset() {
  messages_ = ojson::array();
  last_prompts_.clear();
}

Status AgentLoop::build_system_message(std::string_view first_user_message) {
  std::string system = options_.system_prompt;
  if (deps_.memory) {
    ContextOptions co;
    co.conversation_id = options_.conversation_id;
    const text::Tokenizer* tok = deps_.tokenizer;
    co.count_tokens = [tok](std::string_view s) { return tok->encode(s, false, false).size(); };
    KZ_ASSIGN_OR_RETURN(std::string context,
                        deps_.memory->context_prompt(first_user_message, options_.memory_token_budget, co));
    if (!context.empty()) system += (system.empty() ? "" : "\n\n") + context;
  }
  if (!system.empty()) messages_.push_back({{"role", "system"}, {"content", system}});
  return OkStatus();
}

Result<AgentLoop::Round> AgentLoop::generate_round(int round, const AgentEventCallback& emit, AgentUsage& usage) {
  // A template that does not write the tool list gets it (and the calls and
  // results) written into the messages instead.
  const bool inline_tools = !tools_json_.empty() && !deps_.chat_template->renders_tools();
  ojson request{{"messages", inline_tools ? inline_tools_in_messages(messages_, tools_json_) : messages_},
                {"add_generation_prompt", true},
                {"chat_template_kwargs", {{"enable_thinking", options_.enable_thinking}}}};
  if (!tools_json_.empty() && !inline_tools) request["tools"] = tools_json_;
  KZ_ASSIGN_OR_RETURN(std::string prompt, deps_.chat_template->render(request));
  last_prompts_.push_back(prompt);
  const std::vector<int32_t> ids = tokenize_chat_prompt(*deps_.tokenizer, prompt);
  struct FinishGuard {
    TokenGenerator* g;
    ~FinishGuard() { g->finish(); }
  } finish_guard{deps_.generator};
  KZ_ASSIGN_OR_RETURN(PromptStats ps, deps_.generator->start(ids));
  usage.prompt_tokens += ps.evaluated;
  usage.reused_tokens += ps.reused;
  usage.prompt_seconds += ps.seconds;

  const auto t0 = std::chrono::steady_clock::now();
  text::StreamParserOptions po;
  po.starts_in_think = prompt_opens_think(prompt);
  po.known_tools = known_tools_;
  text::StreamParser parser(format_, po);
  text::StreamingDetokenizer detok(*deps_.tokenizer);
  Round r;
  std::vector<text::StreamEvent> events;
  auto send = [&](AgentEvent ev) {
    ev.round = round;
    if (emit && !r.cancelled && !emit(ev)) r.cancelled = true;
  };
  auto handle = [&] {
    for (auto& e : events) {
      AgentEvent ev;
      switch (e.type) {
        case text::StreamEventType::kThink:
          r.reasoning += e.text;
          ev.type = AgentEventType::kThink;
          ev.text = e.text;
          break;
        case text::StreamEventType::kAnswer:
          r.content += e.text;
          ev.type = AgentEventType::kAnswer;
          ev.text = e.text;
          break;
        case text::StreamEventType::kToolCall:
          ev.type = AgentEventType::kToolCall;
          ev.arguments_json = e.arguments.dump();
          break;
        case text::StreamEventType::kError:
          ev.type = AgentEventType::kError;
          ev.text = e.message;
          if (!e.arguments.is_null()) ev.arguments_json = e.arguments.dump();
          break;
      }
      if (e.type == text::StreamEventType::kToolCall || e.type == text::StreamEventType::kError) {
        ev.id = e.id;
        ev.name = e.name;
        r.calls.push_back(std::move(e));
      }
      send(std::move(ev));
    }
    events.clear();
  };
  auto feed = [&](int32_t id) {
    parser.feed(detok.push(id), events);
    handle();
  };

  ReasoningBudget budget(options_.max_think_tokens);
  for (int32_t i = 0; options_.max_tokens_per_round < 0 || i < options_.max_tokens_per_round; ++i) {
    if (budget.due(parser)) {
      KZ_RETURN_IF_ERROR(deps_.generator->append(think_close_));
      for (int32_t id : think_close_) feed(id);
      ++usage.forced_think_closes;
      budget.spend();
    }
    auto token = deps_.generator->next();
    if (!token.ok()) {
      if (token.status().code() == ErrorCode::kOutOfRange) {
        AgentEvent ev;
        ev.type = AgentEventType::kError;
        ev.text = "context full: " + token.status().message();
        send(std::move(ev));
        break;
      }
      return token.status();
    }
    if (deps_.tokenizer->is_eog(*token)) break;
    ++usage.generated_tokens;
    budget.count(parser);
    feed(*token);
    if (r.cancelled) break;
  }
  parser.feed(detok.flush(), events);
  parser.finish(events);
  handle();
  usage.think_tokens += budget.used();
  usage.generation_seconds += seconds_since(t0);
  return r;
}

void AgentLoop::run_tools(int round, Round& r, const AgentEventCallback& emit, AgentUsage& usage, bool& cancelled) {
  std::vector<ToolCall> calls;
  for (const auto& c : r.calls)
    if (c.type == text::StreamEventType::kToolCall) calls.push_back(ToolCall{c.id, c.name, c.arguments});
  const auto t0 = std::chrono::steady_clock::now();
  DispatchOptions dopt;
  dopt.conversation_id = options_.conversation_id;
  std::vector<ToolResult> results = deps_.tools->dispatch_all(calls, dopt);
  usage.tool_seconds += seconds_since(t0);

  size_t next_result = 0;
  for (const auto& c : r.calls) {
    ToolResult res;
    if (c.type == text::StreamEventType::kToolCall) {
      res = std::move(results[next_result++]);
    } else {
      // A malformed call: the parser's message is its result.
      res.call_id = c.id;
      res.name = c.name.empty() ? "invalid_tool_call" : c.name;
      res.content = "error: " + c.message;
    }
    messages_.push_back(res.to_message());
    AgentEvent ev;
    ev.type = AgentEventType::kToolResult;
    ev.round = round;
    ev.id = res.call_id;
    ev.name = res.name;
    ev.text = res.content;
    ev.ok = res.ok;
    if (emit && !cancelled && !emit(ev)) cancelled = true;
  }
}

Result<AgentTurn> AgentLoop::run(std::string_view user_message, const AgentEventCallback& on_event) {
  last_prompts_.clear();
  if (messages_.empty()) KZ_RETURN_IF_ERROR(build_system_message(user_message));
  std::string content(user_message);
  // The model learns about fired timers with the next user message.
  if (deps_.timers) {
    const std::string notice = timer_notice(deps_.timers->poll());
    if (!notice.empty()) content = notice + "\n" + content;
  }
  messages_.push_back({{"role", "user"}, {"content", std::move(content)}});

  AgentTurn turn;
  AgentUsage& usage = turn.usage;
  auto finish = [&](std::string reason) {
    usage.stop_reason = std::move(reason);
    if (on_event) {
      AgentEvent done;
      done.type = AgentEventType::kDone;
      done.round = usage.rounds;
      done.usage = usage;
      on_event(done);
    }
  };
  for (int round = 1; round <= options_.max_rounds; ++round) {
    usage.rounds = round;
    auto generated = generate_round(round, on_event, usage);
    if (!generated.ok()) {
      if (on_event) {
        AgentEvent ev;
        ev.type = AgentEventType::kError;
        ev.round = round;
        ev.text = generated.status().to_string();
        on_event(ev);
      }
      finish("error");
      return generated.status();
    }
    Round& r = *generated;
    ojson assistant{{"role", "assistant"}, {"content", r.content}};
    if (!r.reasoning.empty()) assistant["reasoning_content"] = r.reasoning;
    if (!r.calls.empty()) {
      ojson calls = ojson::array();
      for (const auto& c : r.calls) {
        const bool valid = c.type == text::StreamEventType::kToolCall;
        ojson args = c.arguments.is_object() ? c.arguments : ojson::object();
        calls.push_back({{"id", c.id},
                         {"type", "function"},
                         {"function",
                          {{"name", valid || !c.name.empty() ? c.name : "invalid_tool_call"}, {"arguments", args}}}});
      }
      assistant["tool_calls"] = std::move(calls);
    }
    messages_.push_back(std::move(assistant));
    turn.answer = r.content;
    turn.reasoning = r.reasoning;
    if (r.cancelled) {
      finish("cancelled");
      return turn;
    }
    if (r.calls.empty()) {
      finish("answer");
      return turn;
    }
    bool cancelled = false;
    run_tools(round, r, on_event, usage, cancelled);
    if (cancelled) {
      finish("cancelled");
      return turn;
    }
  }
  finish("max_rounds");
  return turn;
}

}  // namespace kazeia::agent
