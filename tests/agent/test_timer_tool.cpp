// Timer service and tool: firing order, cancellation, the tool's surface.
#include <gtest/gtest.h>

#include <mutex>

#include "agent/tools/timer_tool.h"

namespace kazeia::agent {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

TEST(TimerService, FiresInDeadlineOrderAndCancelWorks) {
  std::mutex mu;
  std::vector<std::string> via_callback;
  TimerService timers([&](const TimerEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    via_callback.push_back(e.label);
  });
  // Created out of order on purpose.
  ASSERT_TRUE(timers.create(120ms, "third").ok());
  ASSERT_TRUE(timers.create(40ms, "first").ok());
  Result<TimerInfo> cancelled = timers.create(60ms, "cancelled");
  ASSERT_TRUE(cancelled.ok());
  ASSERT_TRUE(timers.create(80ms, "second").ok());

  std::vector<TimerInfo> pending = timers.list();
  ASSERT_EQ(pending.size(), 4u);
  EXPECT_EQ(pending[0].label, "first");
  EXPECT_EQ(pending[1].label, "cancelled");
  EXPECT_EQ(pending[3].label, "third");

  EXPECT_TRUE(timers.cancel(cancelled->id).ok());
  EXPECT_EQ(timers.cancel(cancelled->id).code(), ErrorCode::kNotFound);
  EXPECT_EQ(timers.cancel(999).code(), ErrorCode::kNotFound);

  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) {
    std::optional<TimerEvent> event = timers.wait_event(2s);
    ASSERT_TRUE(event.has_value()) << "timer " << i << " never fired";
    EXPECT_GE(event->fired_at, event->due);
    EXPECT_LT(event->fired_at - event->due, 150ms) << event->label << " fired late";  // generous: loaded CI machines
    order.push_back(event->label);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "third"}));
  // The cancelled one never fires.
  EXPECT_FALSE(timers.wait_event(100ms).has_value());
  EXPECT_TRUE(timers.list().empty());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(via_callback, (std::vector<std::string>{"first", "second", "third"}));
}

TEST(TimerService, PollDrainsFiredEvents) {
  TimerService timers;
  ASSERT_TRUE(timers.create(10ms, "a").ok());
  ASSERT_TRUE(timers.create(20ms, "b").ok());
  EXPECT_TRUE(timers.poll().empty());
  std::this_thread::sleep_for(80ms);
  std::vector<TimerEvent> events = timers.poll();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].label, "a");
  EXPECT_EQ(events[1].label, "b");
  EXPECT_TRUE(timers.poll().empty());
  EXPECT_FALSE(timers.create(0ms, "zero").ok());
}

TEST(TimerService, DestructionWithPendingTimersIsClean) {
  auto timers = std::make_unique<TimerService>();
  ASSERT_TRUE(timers->create(1h, "far away").ok());
  timers.reset();  // must not wait an hour
}

TEST(TimerTool, CreateListCancelThroughTheRegistry) {
  auto service = std::make_shared<TimerService>();
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_timer_tool(service)).ok());

  ToolResult created = registry.dispatch({"c1", "timer", json{{"action", "create"}, {"seconds", 0.05}, {"label", "tea"}}});
  ASSERT_TRUE(created.ok) << created.content;
  json body = json::parse(created.content);
  EXPECT_EQ(body["label"], "tea");
  EXPECT_DOUBLE_EQ(body["fires_in_seconds"].get<double>(), 0.05);
  const int64_t tea = body["id"].get<int64_t>();

  ToolResult long_timer =
      registry.dispatch({"c2", "timer", json{{"action", "create"}, {"minutes", 1}, {"seconds", 30}, {"label", "eggs"}}});
  ASSERT_TRUE(long_timer.ok);
  EXPECT_DOUBLE_EQ(json::parse(long_timer.content)["fires_in_seconds"].get<double>(), 90.0);
  const int64_t eggs = json::parse(long_timer.content)["id"].get<int64_t>();

  ToolResult listed = registry.dispatch({"c3", "timer", json{{"action", "list"}}});
  json timers = json::parse(listed.content)["timers"];
  ASSERT_EQ(timers.size(), 2u);
  EXPECT_EQ(timers[0]["label"], "tea");
  EXPECT_EQ(timers[1]["label"], "eggs");

  ToolResult cancel = registry.dispatch({"c4", "timer", json{{"action", "cancel"}, {"id", eggs}}});
  EXPECT_TRUE(cancel.ok);
  ToolResult again = registry.dispatch({"c5", "timer", json{{"action", "cancel"}, {"id", eggs}}});
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.content, "error: no pending timer with id " + std::to_string(eggs));

  std::optional<TimerEvent> fired = service->wait_event(2s);
  ASSERT_TRUE(fired.has_value());
  EXPECT_EQ(fired->id, tea);
  EXPECT_EQ(fired->label, "tea");
}

TEST(TimerTool, ArgumentErrorsAreActionable) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_timer_tool(std::make_shared<TimerService>())).ok());
  EXPECT_EQ(registry.dispatch({"c", "timer", json{{"action", "create"}, {"minutes", -5}}}).content,
            "error: argument 'minutes': expected number > 0 and <= 10080, got -5");
  EXPECT_EQ(registry.dispatch({"c", "timer", json{{"action", "create"}}}).content,
            "error: action 'create' needs 'seconds' or 'minutes'");
  EXPECT_EQ(registry.dispatch({"c", "timer", json{{"action", "start"}}}).content,
            "error: argument 'action': expected one of \"create\", \"list\", \"cancel\", got \"start\"");
  EXPECT_EQ(registry.dispatch({"c", "timer", json{{"action", "cancel"}}}).content,
            "error: action 'cancel' needs 'id'");
}

}  // namespace
}  // namespace kazeia::agent
