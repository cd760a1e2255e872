// Tool registry: registration, export, argument errors, failures as results,
// timeouts, retries with backoff, parallel dispatch.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "agent/tool_registry.h"
#include "base/timer.h"

namespace kazeia::agent {
namespace {

using namespace std::chrono_literals;

Tool echo_tool() {
  Tool tool;
  tool.name = "echo";
  tool.description = "Echo the text.";
  tool.parameters = json::parse(R"({"type": "object", "properties": {"text": {"type": "string"}},
                                    "required": ["text"], "additionalProperties": false})");
  tool.handler = [](const json& args, const ToolContext&) -> Result<json> { return args.at("text"); };
  return tool;
}

Tool sleeping_tool(std::string name, std::chrono::milliseconds sleep, bool cooperative) {
  Tool tool;
  tool.name = std::move(name);
  tool.description = "Sleeps.";
  tool.handler = [sleep, cooperative](const json&, const ToolContext& ctx) -> Result<json> {
    if (cooperative) {
      if (!ctx.sleep_for(sleep)) return Status(ErrorCode::kCancelled, "cancelled");
    } else {
      std::this_thread::sleep_for(sleep);  // ignores cancellation on purpose
    }
    return json{{"slept_ms", sleep.count()}};
  };
  return tool;
}

TEST(ToolRegistry, RegistrationRules) {
  ToolRegistry registry;
  EXPECT_TRUE(registry.register_tool(echo_tool()).ok());
  EXPECT_FALSE(registry.register_tool(echo_tool()).ok()) << "duplicate";
  Tool bad_name = echo_tool();
  bad_name.name = "has space";
  EXPECT_FALSE(registry.register_tool(bad_name).ok());
  Tool no_handler = echo_tool();
  no_handler.name = "nohandler";
  no_handler.handler = nullptr;
  EXPECT_FALSE(registry.register_tool(no_handler).ok());
  Tool bad_schema = echo_tool();
  bad_schema.name = "badschema";
  bad_schema.parameters = json::parse(R"({"type": "object", "properties": {"x": {"anyOf": []}}})");
  Status status = registry.register_tool(bad_schema);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("anyOf"), std::string::npos) << status.message();
  Tool not_object = echo_tool();
  not_object.name = "notobject";
  not_object.parameters = json::parse(R"({"type": "string"})");
  EXPECT_FALSE(registry.register_tool(not_object).ok());
  EXPECT_EQ(registry.tool_names(), std::vector<std::string>{"echo"});
}

TEST(ToolRegistry, ToolsJsonIsOpenAiShaped) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(echo_tool()).ok());
  ASSERT_TRUE(registry.register_tool(sleeping_tool("nap", 1ms, true)).ok());
  json tools = registry.tools_json();
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0]["type"], "function");
  EXPECT_EQ(tools[0]["function"]["name"], "echo");
  EXPECT_EQ(tools[0]["function"]["description"], "Echo the text.");
  EXPECT_EQ(tools[0]["function"]["parameters"]["required"][0], "text");
  EXPECT_EQ(tools[1]["function"]["name"], "nap");
  // Key order is preserved (ordered_json): name, description, parameters.
  EXPECT_EQ(tools[0]["function"].begin().key(), "name");
}

TEST(ToolRegistry, SuccessStringAndObjectContent) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(echo_tool()).ok());
  ToolResult r = registry.dispatch({"call_1", "echo", json{{"text", "hello"}}});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.call_id, "call_1");
  EXPECT_EQ(r.name, "echo");
  EXPECT_EQ(r.content, "hello");  // a JSON string goes in verbatim
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.to_message()["role"], "tool");
  EXPECT_EQ(r.to_message()["tool_call_id"], "call_1");
  ASSERT_TRUE(registry.register_tool(sleeping_tool("nap", 1ms, true)).ok());
  EXPECT_EQ(registry.dispatch({"c2", "nap", json::object()}).content, R"({"slept_ms":1})");
}

TEST(ToolRegistry, ArgumentsAsJsonString) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(echo_tool()).ok());
  EXPECT_EQ(registry.dispatch({"c", "echo", json(R"({"text": "wire"})")}).content, "wire");
  ToolResult bad = registry.dispatch({"c", "echo", json(R"({"text": )")});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.attempts, 0);
  EXPECT_NE(bad.content.find("arguments are not valid JSON"), std::string::npos) << bad.content;
}

TEST(ToolRegistry, UnknownToolListsAvailable) {
  ToolRegistry registry;
  Tool calc = echo_tool();
  calc.name = "calculator";
  Tool timer = echo_tool();
  timer.name = "timer";
  ASSERT_TRUE(registry.register_tool(calc).ok());
  ASSERT_TRUE(registry.register_tool(timer).ok());
  ToolResult r = registry.dispatch({"c", "foo", json::object()});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 0);
  EXPECT_EQ(r.status.code(), ErrorCode::kNotFound);
  EXPECT_EQ(r.content, "error: unknown tool 'foo'; available: calculator, timer");
}

TEST(ToolRegistry, InvalidArgumentsNeverRunTheHandler) {
  std::atomic<int> runs{0};
  Tool tool;
  tool.name = "timer";
  tool.parameters = json::parse(R"({"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 1}},
                                    "required": ["minutes"]})");
  tool.handler = [&runs](const json&, const ToolContext&) -> Result<json> {
    ++runs;
    return json("ok");
  };
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(tool).ok());
  ToolResult r = registry.dispatch({"c", "timer", json{{"minutes", -5}}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.content, "error: argument 'minutes': expected integer >= 1, got -5");
  EXPECT_EQ(r.status.code(), ErrorCode::kInvalidArgument);
  r = registry.dispatch({"c", "timer", json::object()});
  EXPECT_EQ(r.content, "error: missing required argument 'minutes'");
  EXPECT_EQ(runs.load(), 0);
}

TEST(ToolRegistry, ErrorStatusAndExceptionsBecomeResults) {
  ToolRegistry registry;
  Tool failing = echo_tool();
  failing.name = "failing";
  failing.handler = [](const json&, const ToolContext&) -> Result<json> { return NotFound("no such city 'Atlantis'"); };
  Tool throwing = echo_tool();
  throwing.name = "throwing";
  throwing.handler = [](const json&, const ToolContext&) -> Result<json> { throw std::runtime_error("boom"); };
  Tool throwing_int = echo_tool();
  throwing_int.name = "throwing_int";
  throwing_int.handler = [](const json&, const ToolContext&) -> Result<json> { throw 42; };
  ASSERT_TRUE(registry.register_tool(failing).ok());
  ASSERT_TRUE(registry.register_tool(throwing).ok());
  ASSERT_TRUE(registry.register_tool(throwing_int).ok());
  ToolResult a = registry.dispatch({"a", "failing", json{{"text", "x"}}});
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.content, "error: no such city 'Atlantis'");
  EXPECT_EQ(a.status.code(), ErrorCode::kNotFound);
  ToolResult b = registry.dispatch({"b", "throwing", json{{"text", "x"}}});
  EXPECT_FALSE(b.ok);
  EXPECT_EQ(b.content, "error: tool 'throwing' threw an exception: boom");
  ToolResult c = registry.dispatch({"c", "throwing_int", json{{"text", "x"}}});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.content, "error: tool 'throwing_int' threw an unknown exception");
}

TEST(ToolRegistry, TimeoutCutsOffAnUncooperativeHandler) {
  ToolRegistry registry;
  Tool slow = sleeping_tool("slow", 500ms, /*cooperative=*/false);
  slow.timeout = 100ms;
  ASSERT_TRUE(registry.register_tool(slow).ok());
  Stopwatch watch;
  ToolResult r = registry.dispatch({"c", "slow", json::object()});
  const double elapsed_ms = watch.elapsed_ms();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.status.code(), ErrorCode::kTimeout);
  EXPECT_EQ(r.content, "error: tool 'slow' timed out after 100 ms");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GE(elapsed_ms, 95.0);
  EXPECT_LT(elapsed_ms, 100.0 + 80.0) << "the caller must not wait for the abandoned handler";
  // The abandoned handler is still running in the background, then finishes.
  EXPECT_EQ(registry.running_handlers(), 1);
  EXPECT_TRUE(registry.wait_idle(5000ms));
}

TEST(ToolRegistry, TimeoutCancelsACooperativeHandler) {
  ToolRegistry registry;
  std::atomic<bool> saw_cancel{false};
  Tool tool;
  tool.name = "polite";
  tool.timeout = 80ms;
  tool.handler = [&saw_cancel](const json&, const ToolContext& ctx) -> Result<json> {
    if (!ctx.sleep_for(10s)) saw_cancel = true;
    return json("late");
  };
  ASSERT_TRUE(registry.register_tool(tool).ok());
  Stopwatch watch;
  ToolResult r = registry.dispatch({"c", "polite", json::object()});
  EXPECT_EQ(r.status.code(), ErrorCode::kTimeout);
  EXPECT_LT(watch.elapsed_ms(), 80.0 + 80.0);
  EXPECT_TRUE(registry.wait_idle(2000ms)) << "the cancel flag must wake the handler";
  EXPECT_TRUE(saw_cancel.load());
}

TEST(ToolRegistry, RetriesRetryableErrorsAndCountsAttempts) {
  ToolRegistryOptions options;
  options.retry_base_delay = 20ms;
  ToolRegistry registry(options);
  std::atomic<int> calls{0};
  std::vector<int> attempts_seen;
  std::mutex mu;
  Tool flaky;
  flaky.name = "flaky";
  flaky.max_retries = 3;
  flaky.handler = [&](const json&, const ToolContext& ctx) -> Result<json> {
    {
      std::lock_guard<std::mutex> lock(mu);
      attempts_seen.push_back(ctx.attempt);
    }
    if (++calls <= 2) return IoError("connection reset");
    return json("third time lucky");
  };
  ASSERT_TRUE(registry.register_tool(flaky).ok());
  Stopwatch watch;
  ToolResult r = registry.dispatch({"c", "flaky", json::object()});
  EXPECT_TRUE(r.ok) << r.content;
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.content, "third time lucky");
  EXPECT_EQ(attempts_seen, (std::vector<int>{1, 2, 3}));
  // Backoff 20 ms then 40 ms.
  EXPECT_GE(watch.elapsed_ms(), 55.0);
  const double reported_ms = std::chrono::duration<double, std::milli>(r.duration).count();
  EXPECT_GE(reported_ms, 55.0);
}

TEST(ToolRegistry, RetriesGiveUpAndNonRetryableErrorsAreNotRetried) {
  ToolRegistryOptions options;
  options.retry_base_delay = 1ms;
  ToolRegistry registry(options);
  std::atomic<int> io_calls{0}, bad_calls{0}, custom_calls{0};
  Tool always_io;
  always_io.name = "always_io";
  always_io.max_retries = 2;
  always_io.handler = [&](const json&, const ToolContext&) -> Result<json> {
    ++io_calls;
    return IoError("down");
  };
  Tool bad;
  bad.name = "bad";
  bad.max_retries = 5;
  bad.handler = [&](const json&, const ToolContext&) -> Result<json> {
    ++bad_calls;
    return InvalidArgument("city not found");
  };
  Tool custom;  // custom predicate: retry "busy" messages only
  custom.name = "custom";
  custom.max_retries = 5;
  custom.retry_base_delay = 0ms;
  custom.is_retryable = [](const Status& s) { return s.message() == "busy"; };
  custom.handler = [&](const json&, const ToolContext&) -> Result<json> {
    return ++custom_calls < 3 ? Result<json>(InvalidArgument("busy")) : Result<json>(json("done"));
  };
  ASSERT_TRUE(registry.register_tool(always_io).ok());
  ASSERT_TRUE(registry.register_tool(bad).ok());
  ASSERT_TRUE(registry.register_tool(custom).ok());
  ToolResult r = registry.dispatch({"c", "always_io", json::object()});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(io_calls.load(), 3);
  EXPECT_EQ(r.content, "error: down (gave up after 3 attempts)");
  r = registry.dispatch({"c", "bad", json::object()});
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(bad_calls.load(), 1);
  r = registry.dispatch({"c", "custom", json::object()});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.attempts, 3);
}

TEST(ToolRegistry, TimeoutsAreRetriedByDefault) {
  ToolRegistryOptions options;
  options.retry_base_delay = 1ms;
  ToolRegistry registry(options);
  std::atomic<int> calls{0};
  Tool tool;
  tool.name = "slow_once";
  tool.timeout = 50ms;
  tool.max_retries = 1;
  tool.handler = [&](const json&, const ToolContext& ctx) -> Result<json> {
    if (++calls == 1) ctx.sleep_for(5s);  // first attempt hangs until cancelled
    return json("fast");
  };
  ASSERT_TRUE(registry.register_tool(tool).ok());
  ToolResult r = registry.dispatch({"c", "slow_once", json::object()});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_TRUE(registry.wait_idle(2000ms));
}

TEST(ToolRegistry, DispatchAllRunsConcurrentlyAndKeepsOrder) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(sleeping_tool("nap", 200ms, false)).ok());
  ASSERT_TRUE(registry.register_tool(echo_tool()).ok());
  std::vector<ToolCall> calls = {{"a", "nap", json::object()},
                                 {"b", "echo", json{{"text", "middle"}}},
                                 {"c", "nap", json::object()},
                                 {"d", "missing", json::object()}};
  Stopwatch watch;
  std::vector<ToolResult> results = registry.dispatch_all(calls);
  const double elapsed_ms = watch.elapsed_ms();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].call_id, "a");
  EXPECT_EQ(results[1].call_id, "b");
  EXPECT_EQ(results[1].content, "middle");
  EXPECT_EQ(results[2].call_id, "c");
  EXPECT_EQ(results[3].call_id, "d");
  EXPECT_TRUE(results[0].ok && results[2].ok);
  EXPECT_FALSE(results[3].ok);
  EXPECT_GE(elapsed_ms, 195.0);
  EXPECT_LT(elapsed_ms, 350.0) << "two 200 ms sleeps must overlap";
}

TEST(ToolRegistry, DispatchAllRespectsMaxParallel) {
  ToolRegistryOptions options;
  options.max_parallel = 1;
  ToolRegistry registry(options);
  ASSERT_TRUE(registry.register_tool(sleeping_tool("nap", 60ms, false)).ok());
  Stopwatch watch;
  auto results = registry.dispatch_all({{"a", "nap", json::object()}, {"b", "nap", json::object()}});
  EXPECT_GE(watch.elapsed_ms(), 115.0);
  EXPECT_TRUE(results[0].ok && results[1].ok);
  EXPECT_TRUE(registry.dispatch_all({}).empty());
}

TEST(ToolRegistry, ContextCarriesCallAndConversation) {
  ToolRegistry registry;
  Tool tool;
  tool.name = "whoami";
  tool.handler = [](const json&, const ToolContext& ctx) -> Result<json> {
    return json{{"call", ctx.call_id}, {"tool", ctx.tool_name}, {"conversation", ctx.conversation_id}};
  };
  ASSERT_TRUE(registry.register_tool(tool).ok());
  ToolResult r = registry.dispatch({"call_9", "whoami", json::object()}, DispatchOptions{"conv-1"});
  EXPECT_EQ(r.content, R"({"call":"call_9","tool":"whoami","conversation":"conv-1"})");
}

TEST(ToolRegistry, LongContentIsTruncatedOnACharacterBoundary) {
  ToolRegistryOptions options;
  options.max_content_bytes = 10;
  ToolRegistry registry(options);
  ASSERT_TRUE(registry.register_tool(echo_tool()).ok());
  ToolResult r = registry.dispatch({"c", "echo", json{{"text", "ééééééééé"}}});  // 18 bytes
  EXPECT_TRUE(r.content.starts_with("ééééé\n[truncated: 10 of 18 bytes shown]")) << r.content;
}

}  // namespace
}  // namespace kazeia::agent
