#include "kazeia/agent.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "agent/agent_loop.h"
#include "agent/tools/builtin_tools.h"
#include "engine_impl.h"
#include "session_generator.h"

namespace kazeia {

namespace {

static_assert(static_cast<int>(AgentEventType::kDone) == static_cast<int>(agent::AgentEventType::kDone) &&
                  static_cast<int>(AgentEventType::kToolResult) == static_cast<int>(agent::AgentEventType::kToolResult),
              "the public and the agent-layer event types must match one to one");

constexpr const char* kToolNames[] = {"calculator", "timer", "clock", "memory", "web_search"};

AgentUsage to_public(const agent::AgentUsage& u) {
  AgentUsage r;
  r.rounds = u.rounds;
  r.prompt_tokens = u.prompt_tokens;
  r.reused_tokens = u.reused_tokens;
  r.generated_tokens = u.generated_tokens;
  r.think_tokens = u.think_tokens;
  r.forced_think_closes = u.forced_think_closes;
  r.prompt_seconds = u.prompt_seconds;
  r.generation_seconds = u.generation_seconds;
  r.tool_seconds = u.tool_seconds;
  r.stop_reason = u.stop_reason;
  return r;
}

AgentEvent to_public(const agent::AgentEvent& e) {
  AgentEvent r;
  r.type = static_cast<AgentEventType>(e.type);  // same enumerators, same order
  r.round = e.round;
  r.text = e.text;
  r.id = e.id;
  r.name = e.name;
  r.arguments_json = e.arguments_json;
  r.ok = e.ok;
  if (e.type == agent::AgentEventType::kDone) r.usage = to_public(e.usage);
  return r;
}

}  // namespace

const char* agent_event_type_name(AgentEventType type) {
  return agent::agent_event_type_name(static_cast<agent::AgentEventType>(type));
}

std::string agent_event_to_json(const AgentEvent& e) {
  using ojson = nlohmann::ordered_json;
  ojson j{{"type", agent_event_type_name(e.type)}, {"round", e.round}};
  auto arguments = [&] {
    ojson a = ojson::parse(e.arguments_json, nullptr, /*allow_exceptions=*/false);
    return a.is_discarded() ? ojson(e.arguments_json) : a;
  };
  switch (e.type) {
    case AgentEventType::kThink:
    case AgentEventType::kAnswer:
      j["text"] = e.text;
      break;
    case AgentEventType::kToolCall:
      j["id"] = e.id;
      j["name"] = e.name;
      j["arguments"] = arguments();
      break;
    case AgentEventType::kToolResult:
      j["id"] = e.id;
      j["name"] = e.name;
      j["ok"] = e.ok;
      j["content"] = e.text;
      break;
    case AgentEventType::kError:
      j["message"] = e.text;
      if (!e.id.empty()) j["id"] = e.id;
      if (!e.name.empty()) j["name"] = e.name;
      if (!e.arguments_json.empty()) j["arguments"] = arguments();
      break;
    case AgentEventType::kDone: {
      const AgentUsage& u = e.usage;
      j["usage"] = {{"rounds", u.rounds},
                    {"prompt_tokens", u.prompt_tokens},
                    {"reused_tokens", u.reused_tokens},
                    {"generated_tokens", u.generated_tokens},
                    {"think_tokens", u.think_tokens},
                    {"forced_think_closes", u.forced_think_closes},
                    {"prompt_seconds", u.prompt_seconds},
                    {"generation_seconds", u.generation_seconds},
                    {"tool_seconds", u.tool_seconds},
                    {"stop_reason", u.stop_reason}};
      break;
    }
  }
  // Model text may hold invalid UTF-8 (a cut multi-byte character): replace, never throw.
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

struct Agent::Impl {
  std::unique_ptr<Session> session;
  std::unique_ptr<agent::TokenGenerator> generator;
  std::shared_ptr<agent::ToolRegistry> tools;
  std::optional<agent::AgentLoop> loop;
};

Agent::Agent() : impl_(std::make_unique<Impl>()) {}
Agent::~Agent() = default;

Result<std::unique_ptr<Agent>> Agent::create(Engine& engine, const AgentOptions& options) {
  ApiAccess::EngineImpl& e = ApiAccess::engine(engine);
  if (!e.tokenizer) return NotFound("model '" + e.path + "' has no tokenizer; the agent needs one");
  auto wants = [&](std::string_view name) {
    return std::find(options.tools.begin(), options.tools.end(), name) != options.tools.end();
  };
  for (const auto& name : options.tools)
    if (std::find(std::begin(kToolNames), std::end(kToolNames), name) == std::end(kToolNames))
      return InvalidArgument("unknown tool '" + name + "': expected calculator, timer, clock, memory or web_search");

  agent::BuiltinTools builtin;
  builtin.calculator = wants("calculator");
  builtin.clock = wants("clock");
  std::shared_ptr<agent::MemoryStore> memory;
  if (!options.memory_path.empty()) {
    KZ_ASSIGN_OR_RETURN(std::unique_ptr<agent::MemoryStore> store, agent::MemoryStore::open(options.memory_path));
    memory = std::move(store);
  } else if (wants("memory")) {
    return InvalidArgument("the memory tools need a memory database (memory_path / --memory FILE.db)");
  }
  if (wants("timer")) {
    agent::TimerService::Callback on_fire;
    if (options.on_timer_fired)
      on_fire = [cb = options.on_timer_fired](const agent::TimerEvent& e) { cb(agent::timer_notice({e})); };
    if (options.memory_path.empty()) {
      builtin.timers = std::make_shared<agent::TimerService>(std::move(on_fire));
    } else {  // pending timers live in the memory database and outlive the process
      KZ_ASSIGN_OR_RETURN(std::unique_ptr<agent::TimerStore> store, agent::TimerStore::open(options.memory_path));
      KZ_ASSIGN_OR_RETURN(builtin.timers, agent::TimerService::open({std::move(store), {}}, std::move(on_fire)));
    }
  }
  if (wants("memory")) builtin.memory = memory;
  if (wants("web_search")) {
    agent::WebSearchCache cache;
    if (!options.web_search_cache.empty()) {
      KZ_ASSIGN_OR_RETURN(cache, agent::WebSearchCache::load(options.web_search_cache));
    }
    builtin.search_cache = std::make_shared<const agent::WebSearchCache>(std::move(cache));
  }

  std::unique_ptr<Agent> a(new Agent());
  Impl& impl = *a->impl_;
  impl.tools = std::make_shared<agent::ToolRegistry>();
  KZ_RETURN_IF_ERROR(agent::register_builtin_tools(*impl.tools, builtin));
  KZ_ASSIGN_OR_RETURN(impl.session, engine.new_session());
  KZ_ASSIGN_OR_RETURN(impl.generator, make_session_generator(*impl.session, options.sampling));

  agent::AgentLoopDeps deps;
  deps.tokenizer = &*e.tokenizer;
  deps.chat_template = &*e.chat_template;
  deps.generator = impl.generator.get();
  deps.tools = impl.tools;
  deps.memory = memory;
  deps.timers = builtin.timers;
  agent::AgentLoopOptions lo;
  lo.system_prompt = options.system_prompt;
  lo.max_rounds = options.max_rounds;
  lo.max_think_tokens = options.max_think_tokens;
  lo.max_tokens_per_round = options.max_tokens_per_round;
  lo.enable_thinking = options.enable_thinking;
  lo.memory_token_budget = options.memory_token_budget;
  lo.conversation_id = options.conversation_id;
  KZ_ASSIGN_OR_RETURN(agent::AgentLoop loop, agent::AgentLoop::create(std::move(deps), std::move(lo)));
  impl.loop.emplace(std::move(loop));
  return a;
}

Result<AgentReply> Agent::run(std::string_view user_message, const AgentEventCallback& on_event) {
  agent::AgentEventCallback cb;
  if (on_event) cb = [&on_event](const agent::AgentEvent& e) { return on_event(to_public(e)); };
  KZ_ASSIGN_OR_RETURN(agent::AgentTurn turn, impl_->loop->run(user_message, cb));
  AgentReply reply;
  reply.answer = std::move(turn.answer);
  reply.reasoning = std::move(turn.reasoning);
  reply.usage = to_public(turn.usage);
  return reply;
}

void Agent::reset() {
  impl_->loop->reset();
  impl_->session->reset();
}

std::string Agent::messages_json() const {
  return impl_->loop->messages().dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<std::string> Agent::tool_names() const { return impl_->tools->tool_names(); }

bool Agent::wait_tools_idle(int64_t timeout_ms) const {
  return impl_->tools->wait_idle(std::chrono::milliseconds(timeout_ms));
}

}  // namespace kazeia
