// All built-in tools together: registration, the exported list, and one
// turn with several calls dispatched in parallel.
#include <gtest/gtest.h>

#include "agent/tools/builtin_tools.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

TEST(BuiltinTools, RegisterAllAndDispatchOneTurn) {
  testing::TempDir dir;
  testing::write_file(dir.file("cache.jsonl"),
                      R"({"query": "kazeia", "results": [{"title": "Kazeia", "url": "https://example.org"}]})");
  auto memory = MemoryStore::open(dir.file("memory.db"));
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  auto cache = WebSearchCache::load(dir.file("cache.jsonl"));
  ASSERT_TRUE(cache.ok());

  BuiltinTools tools;
  tools.timers = std::make_shared<TimerService>();
  tools.memory = std::shared_ptr<MemoryStore>(std::move(*memory));
  tools.search_cache = std::make_shared<const WebSearchCache>(std::move(*cache));
  ToolRegistry registry;
  ASSERT_TRUE(register_builtin_tools(registry, tools).ok());
  EXPECT_EQ(registry.tool_names(), (std::vector<std::string>{"calculator", "clock", "timer", "memory_store",
                                                              "memory_recall", "memory_forget", "web_search"}));
  json list = registry.tools_json();
  for (const json& entry : list) {
    EXPECT_EQ(entry["type"], "function");
    EXPECT_FALSE(entry["function"]["description"].get<std::string>().empty());
    EXPECT_EQ(entry["function"]["parameters"]["type"], "object");
  }
  EXPECT_FALSE(register_builtin_tools(registry, tools).ok()) << "second registration collides";

  std::vector<ToolCall> turn = {
      {"1", "calculator", json{{"expression", "2^100"}}},
      {"2", "clock", json{{"timezone", "UTC"}}},
      {"3", "timer", json{{"action", "create"}, {"seconds", 30}, {"label", "pasta"}}},
      {"4", "memory_store", json{{"key", "user.name"}, {"value", "The user's name is Ada."}}},
      {"5", "web_search", json{{"query", "Kazeia"}}},
      {"6", "calculator", json{{"expression", "1/0"}}},
      {"7", "nonexistent", json::object()},
  };
  std::vector<ToolResult> results = registry.dispatch_all(turn);
  ASSERT_EQ(results.size(), turn.size());
  for (size_t i = 0; i < turn.size(); ++i) EXPECT_EQ(results[i].call_id, turn[i].id);
  EXPECT_EQ(json::parse(results[0].content)["result"], "1267650600228229401496703205376");
  EXPECT_EQ(json::parse(results[1].content)["timezone"], "UTC");
  EXPECT_EQ(json::parse(results[2].content)["label"], "pasta");
  EXPECT_TRUE(results[3].ok);
  EXPECT_TRUE(json::parse(results[4].content)["found"].get<bool>());
  EXPECT_EQ(results[5].content, "error: division by zero at position 2");
  EXPECT_TRUE(results[6].content.starts_with("error: unknown tool 'nonexistent'; available: calculator, clock"));
  EXPECT_EQ(tools.memory->get("user.name")->value, "The user's name is Ada.");
}

}  // namespace
}  // namespace kazeia::agent
