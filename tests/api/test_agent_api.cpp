// kazeia::Agent on real (random-weight) models: the event stream's shape,
// prefix reuse between turns, the reasoning budget on a Qwen3.5-template
// model (whose prompt opens <think>), option errors, and the JSON events.
// Content of a random model is arbitrary: only structure is asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/agent_test_util.h"
#include "api_test_util.h"
#include "kazeia/agent.h"

namespace kazeia {
namespace {

using testing::load_engine;

const std::string& tiny_qwen3() { return testing::tiny_qwen3_model(); }

std::unique_ptr<Engine> load(const std::string& path) { return load_engine(path); }

// Runs one turn, collecting its events.
Result<AgentReply> run_collecting(Agent& agent, std::string_view message, std::vector<AgentEvent>& events) {
  return agent.run(message, [&](const AgentEvent& e) {
    events.push_back(e);
    return true;
  });
}

AgentOptions small_options() {
  AgentOptions o;
  o.max_tokens_per_round = 12;
  o.max_rounds = 2;
  o.sampling.temperature = 0.0f;
  return o;
}

void expect_well_formed(const std::vector<AgentEvent>& events) {
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().type, AgentEventType::kDone);
  for (size_t i = 0; i + 1 < events.size(); ++i) EXPECT_NE(events[i].type, AgentEventType::kDone);
  for (const auto& e : events) {
    auto j = nlohmann::json::parse(agent_event_to_json(e), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << agent_event_to_json(e);
    EXPECT_EQ(j["type"], agent_event_type_name(e.type));
  }
}

TEST(AgentApi, RunsOnAGeneratedModel) {
  ASSERT_FALSE(tiny_qwen3().empty());
  auto engine = load(tiny_qwen3());
  ASSERT_TRUE(engine);
  auto agent = Agent::create(*engine, small_options());
  ASSERT_TRUE(agent.ok()) << agent.status().to_string();
  EXPECT_EQ((*agent)->tool_names(), (std::vector<std::string>{"calculator", "clock", "timer"}));
  std::vector<AgentEvent> events;
  auto reply = run_collecting(**agent, "Hello there", events);
  ASSERT_TRUE(reply.ok()) << reply.status().to_string();
  expect_well_formed(events);
  const AgentUsage& u = events.back().usage;
  EXPECT_GE(u.rounds, 1);
  EXPECT_GT(u.prompt_tokens, 0);
  EXPECT_GT(u.generated_tokens, 0);
  EXPECT_LE(u.generated_tokens, 12 * u.rounds);
  EXPECT_EQ(reply->usage.stop_reason, u.stop_reason);

  // The next turn re-uses the evaluated prefix (system, tools, first turn).
  auto second = (*agent)->run("And again");
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_GT(second->usage.reused_tokens, u.prompt_tokens / 2);
  auto messages = nlohmann::json::parse((*agent)->messages_json());
  ASSERT_GE(messages.size(), 4u);
  EXPECT_EQ(messages[0]["content"], "Hello there");

  (*agent)->reset();
  EXPECT_EQ((*agent)->messages_json(), "[]");
}

TEST(AgentApi, RejectsBadOptions) {
  ASSERT_FALSE(tiny_qwen3().empty());
  auto engine = load(tiny_qwen3());
  ASSERT_TRUE(engine);
  AgentOptions o;
  o.tools = {"calculator", "teleport"};
  auto a = Agent::create(*engine, o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("teleport"), std::string::npos);
  o.tools = {"memory"};
  a = Agent::create(*engine, o);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("memory"), std::string::npos);
  o.tools = {};
  o.max_rounds = 0;
  EXPECT_FALSE(Agent::create(*engine, o).ok());
  o = {};
  o.sampling.top_p = -1.0f;
  EXPECT_FALSE(Agent::create(*engine, o).ok());
  o = {};
  o.tools = {"web_search"};
  o.web_search_cache = "/nonexistent/cache.jsonl";
  EXPECT_FALSE(Agent::create(*engine, o).ok());
}

TEST(AgentApi, MemoryToolsWithADatabase) {
  ASSERT_FALSE(tiny_qwen3().empty());
  auto engine = load(tiny_qwen3());
  ASSERT_TRUE(engine);
  AgentOptions o = small_options();
  o.tools = {"memory", "web_search"};
  o.memory_path = testing::scratch_dir() + "/agent_api_memory_" + std::to_string(::getpid()) + ".db";
  auto agent = Agent::create(*engine, o);
  ASSERT_TRUE(agent.ok()) << agent.status().to_string();
  EXPECT_EQ((*agent)->tool_names(),
            (std::vector<std::string>{"memory_store", "memory_recall", "memory_forget", "web_search"}));
  EXPECT_TRUE((*agent)->run("Remember that I like tea").ok());
  std::remove(o.memory_path.c_str());
}

// Fixed SQL on its own connection; "" when it succeeds without a row.
std::string sql(const std::string& path, const std::string& statement) {
  return agent::testing::raw_query(path, statement.c_str());
}

// With a memory database, pending timers are saved there: an agent created
// later fires those whose time came in between (announced as late) and keeps
// the others.
TEST(AgentApi, PendingTimersLiveInTheMemoryDatabase) {
  ASSERT_FALSE(tiny_qwen3().empty());
  auto engine = load(tiny_qwen3());
  ASSERT_TRUE(engine);
  AgentOptions o = small_options();
  o.tools = {"timer"};
  o.memory_path = testing::scratch_dir() + "/agent_api_timers_" + std::to_string(::getpid()) + ".db";
  std::remove(o.memory_path.c_str());
  ASSERT_TRUE(Agent::create(*engine, o).ok());  // creates the database
  // What an earlier agent left behind: tea (5 min) was due 5 minutes ago,
  // bread (2 h) is due in an hour.
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string insert = "INSERT INTO timers(label, duration_ms, created_at, due_at) VALUES ";
  ASSERT_EQ(sql(o.memory_path, insert + "('tea', 300000, " + std::to_string(now - 600000) + ", " +
                                   std::to_string(now - 300000) + ")"), "");
  ASSERT_EQ(sql(o.memory_path, insert + "('bread', 7200000, " + std::to_string(now - 3600000) + ", " +
                                   std::to_string(now + 3600000) + ")"), "");

  std::vector<std::string> notices;  // fired inside create(), on this thread
  o.on_timer_fired = [&notices](const std::string& notice) { notices.push_back(notice); };
  auto agent = Agent::create(*engine, o);
  ASSERT_TRUE(agent.ok()) << agent.status().to_string();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("\"tea\" (5 min) fired late: its time came 5 min"), std::string::npos) << notices[0];
  EXPECT_EQ(sql(o.memory_path, "SELECT group_concat(label) FROM timers"), "bread");
  // The model hears about it with the next message.
  ASSERT_TRUE((*agent)->run("Anything new?").ok());
  auto messages = nlohmann::json::parse((*agent)->messages_json());
  EXPECT_EQ(messages[0]["content"], notices[0] + "\nAnything new?");
  agent->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((o.memory_path + suffix).c_str());
}

// The reasoning budget on a real model: Qwen3.5's generation prompt opens
// <think>, so everything a random model writes first is reasoning.
TEST(AgentApi, ThinkBudgetOnAQwen35Model) {
  KZ_REQUIRE_SHARED_DATA();
  auto engine = load(testing::shared_model("qwen35-mtp-f32.gguf"));
  ASSERT_TRUE(engine);
  for (int budget : {0, 4}) {
    AgentOptions o = small_options();
    o.tools = {};
    o.max_think_tokens = budget;
    o.max_tokens_per_round = 16;
    o.sampling.temperature = 0.0f;
    auto agent = Agent::create(*engine, o);
    ASSERT_TRUE(agent.ok()) << agent.status().to_string();
    std::vector<AgentEvent> events;
    auto reply = run_collecting(**agent, "Hi", events);
    ASSERT_TRUE(reply.ok()) << reply.status().to_string();
    expect_well_formed(events);
    const AgentUsage& u = reply->usage;
    EXPECT_EQ(u.think_tokens, budget) << "budget " << budget;
    EXPECT_EQ(u.forced_think_closes, 1) << "budget " << budget;
    // The rest of the round was answer text.
    EXPECT_GT(u.generated_tokens, budget);
    if (budget == 0) {
      EXPECT_TRUE(reply->reasoning.empty()) << reply->reasoning;
    }
  }
}

TEST(AgentApi, NoBudgetOnAQwen35ModelThinksOn) {
  KZ_REQUIRE_SHARED_DATA();
  auto engine = load(testing::shared_model("qwen35-mtp-f32.gguf"));
  ASSERT_TRUE(engine);
  AgentOptions o = small_options();
  o.tools = {};
  o.max_tokens_per_round = 8;
  auto agent = Agent::create(*engine, o);
  ASSERT_TRUE(agent.ok());
  auto reply = (*agent)->run("Hi");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->usage.forced_think_closes, 0);
  // Random text rarely writes </think>: most of the 8 tokens are reasoning.
  EXPECT_GT(reply->usage.think_tokens, 0);
}

TEST(AgentApi, EventJson) {
  AgentEvent call;
  call.type = AgentEventType::kToolCall;
  call.round = 1;
  call.id = "call_0";
  call.name = "calculator";
  call.arguments_json = R"({"expression":"234*567"})";
  EXPECT_EQ(agent_event_to_json(call),
            R"({"type":"tool_call","round":1,"id":"call_0","name":"calculator","arguments":{"expression":"234*567"}})");
  AgentEvent think;
  think.type = AgentEventType::kThink;
  think.text = "a\xff";  // invalid UTF-8 is replaced, not thrown on
  auto j = nlohmann::json::parse(agent_event_to_json(think));
  EXPECT_EQ(j["text"], "a\xEF\xBF\xBD");
  AgentEvent done;
  done.type = AgentEventType::kDone;
  done.usage.stop_reason = "answer";
  done.usage.rounds = 2;
  j = nlohmann::json::parse(agent_event_to_json(done));
  EXPECT_EQ(j["usage"]["stop_reason"], "answer");
  EXPECT_EQ(j["usage"]["rounds"], 2);
  AgentEvent result;
  result.type = AgentEventType::kToolResult;
  result.ok = false;
  result.text = "error: boom";
  j = nlohmann::json::parse(agent_event_to_json(result));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["content"], "error: boom");
}

}  // namespace
}  // namespace kazeia
