// The agent loop over a scripted model: the scripts go through the real
// tokenizer and chat template of a Qwen3-template model, a Qwen3.5-template
// model (XML tool calls, prompt opens <think>) from ../shared, and a model
// the project generates itself (its synthetic ChatML template), so the loop
// is tested even without the shared data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/agent_loop.h"
#include "agent/tools/builtin_tools.h"
#include "agent_test_util.h"
#include "common/test_data.h"
#include "format/gguf.h"
#include "models/test_model_generator.h"
#include "scripted_generator.h"

namespace kazeia::agent {
namespace {

using ojson = nlohmann::ordered_json;
using testing::ScriptedGenerator;
using testing::ScriptedRound;
using Clock = std::chrono::steady_clock;

enum class ModelKind { kGenerated, kSharedQwen3, kSharedQwen35 };

std::string kind_name(const ::testing::TestParamInfo<ModelKind>& info) {
  switch (info.param) {
    case ModelKind::kGenerated: return "generated";
    case ModelKind::kSharedQwen3: return "shared_qwen3";
    case ModelKind::kSharedQwen35: return "shared_qwen35";
  }
  return "unknown";
}

// A tiny-qwen3 model written once per process into the scratch folder.
const std::string& generated_model() {
  static const std::string path = [] {
    const std::string p = kazeia::testing::scratch_dir() + "/agent_loop_" + std::to_string(::getpid()) + ".gguf";
    auto config = gen::gen_preset_config("tiny-qwen3");
    if (!config) return std::string();
    auto written = gen::write_test_model(*config, p);
    return written.ok() ? p : std::string();
  }();
  return path;
}

// The tokenizer and chat template of one model file, read once per process
// and only read by the tests (the loop takes them as const pointers):
// building a 150k-250k-token vocabulary was nine tenths of each test's time
// under the sanitizers.
struct ModelText {
  text::Tokenizer tokenizer;
  text::ChatTemplate chat_template;
};

const ModelText* model_text(const std::string& path) {
  static std::map<std::string, std::unique_ptr<ModelText>> cache;
  if (auto it = cache.find(path); it != cache.end()) return it->second.get();
  auto file = gguf::File::open(path);
  if (!file.ok()) {
    ADD_FAILURE() << file.status().to_string();
    return nullptr;
  }
  auto tok = text::Tokenizer::from_gguf(*file);
  if (!tok.ok()) {
    ADD_FAILURE() << tok.status().to_string();
    return nullptr;
  }
  auto model = std::make_unique<ModelText>(ModelText{std::move(tok.value()), text::ChatTemplate::from_gguf(*file)});
  return cache.emplace(path, std::move(model)).first->second.get();
}

// Records when each tool ran, to check that one round's calls overlap.
struct Spans {
  std::mutex mu;
  std::map<std::string, std::pair<Clock::time_point, Clock::time_point>> by_tool;
};

Tool timed(Tool tool, std::shared_ptr<Spans> spans) {
  ToolHandler inner = tool.handler;
  tool.handler = [inner, spans, name = tool.name](const json& args, const ToolContext& ctx) -> Result<json> {
    const auto start = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto result = inner(args, ctx);
    std::lock_guard<std::mutex> lock(spans->mu);
    spans->by_tool[name] = {start, Clock::now()};
    return result;
  };
  return tool;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

class AgentLoopTest : public ::testing::TestWithParam<ModelKind> {
 protected:
  void SetUp() override {
    std::string path;
    if (GetParam() == ModelKind::kGenerated) {
      path = generated_model();
      ASSERT_FALSE(path.empty()) << "could not generate the tiny-qwen3 model";
    } else {
      KZ_REQUIRE_SHARED_DATA();
      path = kazeia::testing::shared_model(GetParam() == ModelKind::kSharedQwen3 ? "qwen3-kq-q4_k_m.gguf"
                                                                                  : "qwen35-chat-q8_0.gguf");
    }
    const ModelText* model = model_text(path);
    ASSERT_NE(model, nullptr);
    tokenizer_ = &model->tokenizer;
    chat_template_ = &model->chat_template;
    end_id_ = tokenizer_->find_token("<|im_end|>");
    ASSERT_GE(end_id_, 0);
    xml_ = chat_template_->family() == text::ChatTemplateFamily::kQwen35;
    qwen_template_ = chat_template_->family() != text::ChatTemplateFamily::kChatML;
    auto probe = chat_template_->render(ojson{{"messages", {{{"role", "user"}, {"content", "x"}}}}});
    ASSERT_TRUE(probe.ok()) << probe.status().to_string();
    opens_think_ = probe->ends_with("<think>\n");
    timers_ = std::make_shared<TimerService>();
    registry_ = std::make_shared<ToolRegistry>();
  }

  // A tool call written the way the template's family writes them.
  std::string call(const std::string& name, const ojson& args) const {
    if (!xml_) return "<tool_call>\n" + ojson{{"name", name}, {"arguments", args}}.dump() + "\n</tool_call>";
    std::string s = "<tool_call>\n<function=" + name + ">\n";
    for (const auto& [k, v] : args.items())
      s += "<parameter=" + k + ">\n" + (v.is_string() ? v.get<std::string>() : v.dump()) + "\n</parameter>\n";
    return s + "</function>\n</tool_call>";
  }
  // Reasoning as the model writes it (Qwen3.5's prompt already opened <think>).
  std::string think(const std::string& text) const {
    return (opens_think_ ? "" : "<think>\n") + text + "\n</think>\n\n";
  }

  void register_builtins(bool with_timer = true) {
    BuiltinTools b;
    b.clock = false;
    if (with_timer) b.timers = timers_;
    ASSERT_TRUE(register_builtin_tools(*registry_, b).ok());
  }

  Result<AgentLoop> make_loop(ScriptedGenerator& gen, AgentLoopOptions options = {},
                              std::shared_ptr<MemoryStore> memory = nullptr) {
    AgentLoopDeps deps;
    deps.tokenizer = tokenizer_;
    deps.chat_template = chat_template_;
    deps.generator = &gen;
    deps.tools = registry_;
    deps.memory = std::move(memory);
    return AgentLoop::create(std::move(deps), std::move(options));
  }

  ScriptedGenerator scripted(std::vector<ScriptedRound> rounds) const {
    return ScriptedGenerator(*tokenizer_, std::move(rounds), end_id_);
  }

  const text::Tokenizer* tokenizer_ = nullptr;
  const text::ChatTemplate* chat_template_ = nullptr;
  int32_t end_id_ = -1;
  bool xml_ = false;
  bool qwen_template_ = false;
  bool opens_think_ = false;
  std::shared_ptr<TimerService> timers_;
  std::shared_ptr<ToolRegistry> registry_;
};

struct Recorder {
  std::vector<AgentEvent> events;
  AgentEventCallback callback() {
    return [this](const AgentEvent& e) {
      events.push_back(e);
      return true;
    };
  }
  std::vector<AgentEvent> of(AgentEventType type) const {
    std::vector<AgentEvent> out;
    for (const auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
  std::string text_of(AgentEventType type) const {
    std::string s;
    for (const auto& e : of(type)) s += e.text;
    return s;
  }
};

TEST_P(AgentLoopTest, TwoParallelCallsThenAnswer) {
  auto spans = std::make_shared<Spans>();
  ASSERT_TRUE(registry_->register_tool(timed(make_calculator_tool(), spans)).ok());
  ASSERT_TRUE(registry_->register_tool(timed(make_timer_tool(timers_), spans)).ok());
  auto gen = scripted({
      {think("The user wants a product and a timer. I will call both tools.") +
       call("calculator", {{"expression", "234*567"}}) + "\n" +
       call("timer", {{"action", "create"}, {"minutes", 5}, {"label", "tea"}})},
      {think("Both tools answered.") + "234 × 567 = 132678, and your 5-minute timer is running."},
  });
  auto loop = make_loop(gen);
  ASSERT_TRUE(loop.ok()) << loop.status().to_string();
  Recorder rec;
  auto turn = loop->run("What's 234*567? Also, set a timer for 5 minutes.", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();

  // Both calls parsed in round 1 and dispatched.
  auto calls = rec.of(AgentEventType::kToolCall);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "calculator");
  EXPECT_EQ(calls[1].name, "timer");
  EXPECT_EQ(calls[0].round, 1);
  EXPECT_EQ(ojson::parse(calls[1].arguments_json).at("minutes"), 5);
  auto results = rec.of(AgentEventType::kToolResult);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok) << results[0].text;
  EXPECT_TRUE(results[1].ok) << results[1].text;
  EXPECT_NE(results[0].text.find("132678"), std::string::npos) << results[0].text;
  EXPECT_EQ(results[1].id, calls[1].id);
  ASSERT_EQ(timers_->list().size(), 1u);
  EXPECT_EQ(timers_->list()[0].label, "tea");

  // In parallel: each started before the other finished.
  ASSERT_EQ(spans->by_tool.size(), 2u);
  const auto& c = spans->by_tool["calculator"];
  const auto& t = spans->by_tool["timer"];
  EXPECT_LT(c.first, t.second);
  EXPECT_LT(t.first, c.second);

  // The tool list reached the prompt (written by the Qwen templates, by the
  // loop for the generated model's plain ChatML one); the results came back.
  ASSERT_EQ(loop->last_prompts().size(), 2u);
  const std::string& p1 = loop->last_prompts()[0];
  const std::string& p2 = loop->last_prompts()[1];
  EXPECT_EQ(chat_template_->renders_tools(), qwen_template_);
  EXPECT_NE(p1.find("<tools>"), std::string::npos) << p1;
  EXPECT_NE(p1.find("\"calculator\""), std::string::npos) << p1;
  EXPECT_NE(p1.find("\"expression\""), std::string::npos) << p1;  // its parameters
  EXPECT_EQ(count_of(p2, "<tool_response>"), 2u) << p2;
  EXPECT_NE(p2.find("234*567"), std::string::npos) << p2;  // round 1's calls are in the history
  EXPECT_NE(p2.find(results[0].text), std::string::npos) << p2;
  EXPECT_NE(p2.find(results[1].text), std::string::npos) << p2;
  EXPECT_EQ(gen.prompts.size(), 2u);

  // The final answer, and the conversation as the template will see it.
  EXPECT_NE(turn->answer.find("132678"), std::string::npos) << turn->answer;
  EXPECT_EQ(turn->reasoning, "Both tools answered.");
  EXPECT_EQ(rec.text_of(AgentEventType::kAnswer), turn->answer);
  const ojson& m = loop->messages();
  ASSERT_EQ(m.size(), 5u) << m.dump();  // user, assistant(calls), tool, tool, assistant
  EXPECT_EQ(m[1]["reasoning_content"], "The user wants a product and a timer. I will call both tools.");
  ASSERT_EQ(m[1]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["arguments"]["expression"], "234*567");
  EXPECT_EQ(m[2]["role"], "tool");
  EXPECT_EQ(m[3]["tool_call_id"], calls[1].id);

  ASSERT_FALSE(rec.events.empty());
  const AgentEvent& done = rec.events.back();
  EXPECT_EQ(done.type, AgentEventType::kDone);
  EXPECT_EQ(done.usage.stop_reason, "answer");
  EXPECT_EQ(done.usage.rounds, 2);
  EXPECT_EQ(done.usage.generated_tokens, static_cast<int64_t>(gen.emitted.size()) - 2);  // minus 2 end tokens
  EXPECT_GT(done.usage.tool_seconds, 0.15);
  EXPECT_EQ(gen.finished, 2);
}

TEST_P(AgentLoopTest, ToolErrorsReachTheModelAndTheLoopGoesOn) {
  register_builtins();
  auto gen = scripted({
      {think("Let me look.") + call("weather", {{"city", "Paris"}}) + "\n" + call("calculator", {{"expr", "1+"}}) + "\n" +
       "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": </tool_call>"},
      {think("The tools failed.") + "Sorry, I could not do that."},
  });
  auto loop = make_loop(gen);
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("Weather in Paris?", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();
  auto errors = rec.of(AgentEventType::kError);
  ASSERT_EQ(errors.size(), 2u);  // unknown tool, malformed JSON
  EXPECT_EQ(errors[0].name, "weather");
  auto results = rec.of(AgentEventType::kToolResult);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) EXPECT_FALSE(r.ok) << r.text;
  EXPECT_NE(results[0].text.find("weather"), std::string::npos) << results[0].text;
  EXPECT_NE(results[1].text.find("expression"), std::string::npos) << results[1].text;
  // The errors are in round 2's prompt, and the loop ended with the answer.
  ASSERT_EQ(loop->last_prompts().size(), 2u);
  for (const auto& r : results) EXPECT_NE(loop->last_prompts()[1].find(r.text), std::string::npos) << r.text;
  EXPECT_EQ(turn->answer, "Sorry, I could not do that.");
  EXPECT_EQ(turn->usage.stop_reason, "answer");
  EXPECT_EQ(turn->usage.rounds, 2);
}

TEST_P(AgentLoopTest, StopsAfterMaxRounds) {
  register_builtins(false);
  auto gen = scripted({{call("calculator", {{"expression", "1+1"}})}});
  AgentLoopOptions o;
  o.max_rounds = 3;
  auto loop = make_loop(gen, o);
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("Keep adding.", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();
  EXPECT_EQ(turn->usage.stop_reason, "max_rounds");
  EXPECT_EQ(turn->usage.rounds, 3);
  EXPECT_EQ(gen.prompts.size(), 3u);
  EXPECT_EQ(rec.of(AgentEventType::kToolResult).size(), 3u);
  EXPECT_EQ(rec.events.back().type, AgentEventType::kDone);
  EXPECT_EQ(rec.of(AgentEventType::kDone).size(), 1u);
}

TEST_P(AgentLoopTest, ThinkBudgetForcesTheCloseTag) {
  std::string long_reasoning;
  for (int i = 0; i < 40; ++i) long_reasoning += "hmm ";
  auto gen = scripted({{think(long_reasoning) + "Never reached.", "The answer is 42."}});
  AgentLoopOptions o;
  o.max_think_tokens = 5;
  auto loop = make_loop(gen, o);
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("Think briefly.", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();
  ASSERT_EQ(gen.appended.size(), 1u);
  EXPECT_EQ(tokenizer_->decode(gen.appended[0]), "\n</think>\n\n");
  EXPECT_EQ(turn->usage.think_tokens, 5);
  EXPECT_EQ(turn->usage.forced_think_closes, 1);
  EXPECT_EQ(turn->answer, "The answer is 42.");
  EXPECT_EQ(rec.text_of(AgentEventType::kAnswer), "The answer is 42.");
  // The reasoning is the first five tokens' worth of the script, cut short.
  EXPECT_FALSE(turn->reasoning.empty());
  EXPECT_LT(turn->reasoning.size(), 30u) << turn->reasoning;
  EXPECT_EQ(long_reasoning.rfind(turn->reasoning, 0), 0u) << turn->reasoning;
}

TEST_P(AgentLoopTest, ThinkBudgetWaitsForACallInsideTheReasoning) {
  register_builtins(false);
  const std::string in_think_call = call("calculator", {{"expression", "6*7"}});
  auto gen = scripted({{think("Let me compute " + in_think_call + " and then more thinking here"), "It is 42."},
                       {think("done") + "42."}});
  // The budget runs out two tokens into the call.
  const std::string before_call = (opens_think_ ? "" : "<think>\n") + std::string("Let me compute ");
  const auto n_before = tokenizer_->encode(before_call, true, false).size() - (opens_think_ ? 0 : 1);
  AgentLoopOptions o;
  o.max_think_tokens = static_cast<int32_t>(n_before) + 2;
  auto loop = make_loop(gen, o);
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("6*7?", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();
  // The call was written whole, then </think> came; the call ran.
  ASSERT_EQ(gen.appended.size(), 1u);
  auto calls = rec.of(AgentEventType::kToolCall);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(ojson::parse(calls[0].arguments_json)["expression"], "6*7");
  ASSERT_EQ(rec.of(AgentEventType::kToolResult).size(), 1u);
  EXPECT_TRUE(rec.of(AgentEventType::kToolResult)[0].ok);
  EXPECT_TRUE(rec.of(AgentEventType::kError).empty());
  EXPECT_GT(turn->usage.think_tokens, o.max_think_tokens);  // the call's tokens count as reasoning
}

TEST_P(AgentLoopTest, NoBudgetKeepsTheWholeReasoning) {
  auto gen = scripted({{think("step one, step two, step three") + "Done."}});
  auto loop = make_loop(gen);
  ASSERT_TRUE(loop.ok());
  auto turn = loop->run("Think.");
  ASSERT_TRUE(turn.ok());
  EXPECT_TRUE(gen.appended.empty());
  EXPECT_EQ(turn->reasoning, "step one, step two, step three");
  EXPECT_EQ(turn->answer, "Done.");
  EXPECT_GT(turn->usage.think_tokens, 5);
  EXPECT_EQ(turn->usage.forced_think_closes, 0);
}

TEST_P(AgentLoopTest, ZeroBudgetClosesBeforeAnyReasoning) {
  auto gen = scripted({{think("lots of thoughts") + "unused", "Straight answer."}});
  AgentLoopOptions o;
  o.max_think_tokens = 0;
  auto loop = make_loop(gen, o);
  ASSERT_TRUE(loop.ok());
  auto turn = loop->run("Quick.");
  ASSERT_TRUE(turn.ok());
  EXPECT_EQ(turn->usage.think_tokens, 0);
  EXPECT_EQ(turn->reasoning, "");
  EXPECT_EQ(turn->answer, "Straight answer.");
}

TEST_P(AgentLoopTest, NoThinkRendersThinkingOff) {
  auto gen = scripted({{"Plain answer."}});
  AgentLoopOptions o;
  o.enable_thinking = false;
  auto loop = make_loop(gen, o);
  ASSERT_TRUE(loop.ok());
  auto turn = loop->run("Hi");
  ASSERT_TRUE(turn.ok());
  ASSERT_EQ(loop->last_prompts().size(), 1u);
  EXPECT_TRUE(loop->last_prompts()[0].ends_with("<think>\n\n</think>\n\n")) << loop->last_prompts()[0];
  EXPECT_EQ(turn->answer, "Plain answer.");
  EXPECT_EQ(turn->usage.think_tokens, 0);
}

TEST_P(AgentLoopTest, CancelStopsTheTurn) {
  register_builtins(false);
  auto gen = scripted({{call("calculator", {{"expression", "2*2"}})}, {"unused"}});
  auto loop = make_loop(gen);
  ASSERT_TRUE(loop.ok());
  std::vector<AgentEvent> seen;
  auto turn = loop->run("x", [&](const AgentEvent& e) {
    seen.push_back(e);
    return e.type != AgentEventType::kToolCall;
  });
  ASSERT_TRUE(turn.ok());
  EXPECT_EQ(turn->usage.stop_reason, "cancelled");
  EXPECT_EQ(gen.prompts.size(), 1u);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().type, AgentEventType::kDone);
}

TEST_P(AgentLoopTest, MemoryContextGoesIntoTheSystemPrompt) {
  agent::testing::TempDir dir;
  auto store = MemoryStore::open(dir.file("memory.db"));
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  std::shared_ptr<MemoryStore> memory = std::move(store.value());
  ASSERT_TRUE(memory->store("user-name", "The user's name is Ada Lovelace").ok());
  auto gen = scripted({{"Hello Ada."}, {"Still Ada."}});
  AgentLoopOptions o;
  o.system_prompt = "You are helpful.";
  auto loop = make_loop(gen, o, memory);
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(loop->run("What is my name?").ok());
  const ojson& m = loop->messages();
  ASSERT_EQ(m[0]["role"], "system");
  const std::string system = m[0]["content"];
  EXPECT_EQ(system.rfind("You are helpful.", 0), 0u);
  EXPECT_NE(system.find("Ada Lovelace"), std::string::npos) << system;
  EXPECT_NE(loop->last_prompts()[0].find("Ada Lovelace"), std::string::npos);
  // The second turn keeps the same system message (so the prefix is reusable).
  ASSERT_TRUE(loop->run("And again?").ok());
  EXPECT_EQ(loop->messages()[0]["content"], system);
  // Round 2 starts with round 1's prompt up to its generation prompt.
  const auto& a = gen.prompts[0];
  const auto& b = gen.prompts[1];
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  EXPECT_GE(common + 4, a.size());
}

TEST_P(AgentLoopTest, MemoryToolCallsStoreInTheConversation) {
  agent::testing::TempDir dir;
  auto store = MemoryStore::open(dir.file("memory.db"));
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  std::shared_ptr<MemoryStore> memory = std::move(store.value());
  BuiltinTools b;
  b.calculator = b.clock = false;
  b.memory = memory;
  ASSERT_TRUE(register_builtin_tools(*registry_, b).ok());
  auto gen = scripted({{think("Store it.") + call("memory_store", {{"key", "drink"}, {"value", "The user likes green tea"}})},
                       {think("Stored.") + "I will remember that."}});
  AgentLoopOptions o;
  o.conversation_id = "conv-7";
  auto loop = make_loop(gen, o, memory);
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("Remember that I like green tea.", rec.callback());
  ASSERT_TRUE(turn.ok()) << turn.status().to_string();
  auto results = rec.of(AgentEventType::kToolResult);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok) << results[0].text;
  auto stored = memory->get("drink");
  ASSERT_TRUE(stored.ok()) << stored.status().to_string();
  EXPECT_EQ(stored->value, "The user likes green tea");
  EXPECT_EQ(stored->conversation_id, std::optional<std::string>("conv-7"));
  EXPECT_EQ(turn->answer, "I will remember that.");
}

TEST_P(AgentLoopTest, FiredTimersAreAnnouncedWithTheNextMessage) {
  auto gen = scripted({{think("ok") + "Noted."}});
  AgentLoopDeps deps;
  deps.tokenizer = tokenizer_;
  deps.chat_template = chat_template_;
  deps.generator = &gen;
  deps.timers = timers_;
  auto loop = AgentLoop::create(std::move(deps), {});
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE(timers_->create(std::chrono::milliseconds(5), "tea").ok());
  ASSERT_TRUE(timers_->create(std::chrono::minutes(5), "pasta").ok());
  for (int i = 0; i < 200 && timers_->list().size() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(loop->run("Anything new?").ok());
  const std::string user = loop->messages()[0]["content"];
  EXPECT_EQ(user, "[Timer notice: timer 1 \"tea\" (0.005 s) has fired.]\n\nAnything new?");
  EXPECT_NE(loop->last_prompts()[0].find("has fired"), std::string::npos);
  // Announced once.
  ASSERT_TRUE(loop->run("And now?").ok());
  EXPECT_EQ(loop->messages()[2]["content"], "And now?");
}

TEST(AgentLoop, TimerNoticeWording) {
  TimerEvent e;
  e.id = 3;
  e.duration = std::chrono::minutes(5);
  EXPECT_EQ(timer_notice({e}), "[Timer notice: timer 3 (5 min) has fired.]\n");
  e.label = "tea \"green\"";
  e.duration = std::chrono::seconds(90);
  EXPECT_EQ(timer_notice({e}), "[Timer notice: timer 3 \"tea \\\"green\\\"\" (90 s) has fired.]\n");
  EXPECT_EQ(timer_notice({}), "");
  // Restored after a restart, its time long past: how late, in whole units.
  e.label = "";
  e.missed = true;
  e.fired_at = e.due + std::chrono::hours(2) + std::chrono::seconds(5);
  EXPECT_EQ(timer_notice({e}),
            "[Timer notice: timer 3 (90 s) fired late: its time came 2 h ago, while the agent was not running.]\n");
  e.fired_at = e.due + std::chrono::milliseconds(40400);
  EXPECT_EQ(timer_notice({e}),
            "[Timer notice: timer 3 (90 s) fired late: its time came 40 s ago, while the agent was not running.]\n");
  e.fired_at = e.due + std::chrono::hours(27) + std::chrono::minutes(3);
  EXPECT_NE(timer_notice({e}).find("came 1 d 3 h ago"), std::string::npos) << timer_notice({e});
}

INSTANTIATE_TEST_SUITE_P(Models, AgentLoopTest,
                         ::testing::Values(ModelKind::kGenerated, ModelKind::kSharedQwen3, ModelKind::kSharedQwen35),
                         kind_name);

// A generator whose prompt does not fit.
class FullGenerator final : public TokenGenerator {
 public:
  Result<PromptStats> start(std::span<const int32_t>) override { return OutOfRange("context full"); }
  Result<int32_t> next() override { return Internal("not started"); }
  Status append(std::span<const int32_t>) override { return Internal("not started"); }
  void finish() override { ++finished; }
  int finished = 0;
};

TEST_P(AgentLoopTest, GeneratorFailureIsReportedAndReturned) {
  FullGenerator gen;
  AgentLoopDeps deps;
  deps.tokenizer = tokenizer_;
  deps.chat_template = chat_template_;
  deps.generator = &gen;
  auto loop = AgentLoop::create(std::move(deps), {});
  ASSERT_TRUE(loop.ok());
  Recorder rec;
  auto turn = loop->run("Hello", rec.callback());
  ASSERT_FALSE(turn.ok());
  EXPECT_EQ(turn.status().code(), ErrorCode::kOutOfRange);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].type, AgentEventType::kError);
  EXPECT_NE(rec.events[0].text.find("context full"), std::string::npos);
  EXPECT_EQ(rec.events[1].type, AgentEventType::kDone);
  EXPECT_EQ(rec.events[1].usage.stop_reason, "error");
  EXPECT_EQ(gen.finished, 1);
}

TEST(AgentLoop, RejectsMissingDependencies) {
  AgentLoopDeps deps;
  auto loop = AgentLoop::create(deps, {});
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kazeia::agent
