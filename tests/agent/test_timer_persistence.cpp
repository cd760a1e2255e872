// Timers that outlive the process: a TimerService opened on a TimerStore is
// destroyed and reopened on the same database with an injected wall clock
// ("restarting" minutes later in no time): pending timers are listed again,
// those whose time came while nothing ran fire at once marked as late, with
// how late; fired and cancelled timers never come back.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "agent/agent_loop.h"
#include "agent/tools/timer_tool.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

using namespace std::chrono_literals;
using testing::raw_query;
using SteadyClock = std::chrono::steady_clock;

constexpr int64_t kT0 = 1700000000000;  // an arbitrary wall-clock "now" (Unix ms)
constexpr int64_t kMinuteMs = 60 * 1000;

// One "process": a store and a service on the database, with a wall clock
// the test sets, and the events its callback saw.
struct Process {
  std::mutex mu;
  std::vector<TimerEvent> via_callback;
  std::shared_ptr<TimerService> timers;  // last: destroyed first, its callback uses the above

  Process(const std::string& path, int64_t wall_now_ms) {
    auto store = TimerStore::open(path);
    EXPECT_TRUE(store.ok()) << store.status().to_string();
    if (!store.ok()) return;
    auto opened = TimerService::open({std::move(*store), [wall_now_ms] { return wall_now_ms; }},
                                     [this](const TimerEvent& e) {
                                       std::lock_guard<std::mutex> lock(mu);
                                       via_callback.push_back(e);
                                     });
    EXPECT_TRUE(opened.ok()) << opened.status().to_string();
    if (opened.ok()) timers = std::move(*opened);
  }
  std::vector<TimerEvent> seen() {
    std::lock_guard<std::mutex> lock(mu);
    return via_callback;
  }
};

std::vector<std::string> labels(const std::vector<TimerInfo>& timers) {
  std::vector<std::string> out;
  for (const auto& t : timers) out.push_back(t.label);
  return out;
}

// How long until `t` is due, as seen now.
std::chrono::nanoseconds remaining(const TimerInfo& t) { return t.due - SteadyClock::now(); }

TEST(TimerPersistence, RestartListsPendingTimersAndFiresMissedOnesLate) {
  testing::TempDir dir;
  const std::string path = dir.file("agent.db");
  int64_t tea = 0, eggs = 0, dropped = 0;
  {  // t = 0: three timers, one cancelled.
    Process p(path, kT0);
    ASSERT_TRUE(p.timers);
    auto a = p.timers->create(5min, "tea");
    auto b = p.timers->create(10min, "eggs");
    auto c = p.timers->create(1min, "dropped");
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    tea = a->id, eggs = b->id, dropped = c->id;
    ASSERT_TRUE(p.timers->cancel(dropped).ok());
    EXPECT_EQ(raw_query(path, "SELECT count(*) FROM timers"), "2");
    EXPECT_EQ(raw_query(path, "SELECT due_at - created_at FROM timers WHERE label = 'eggs'"), "600000");
  }
  {  // t = 2 min: both still pending, same ids, deadlines kept.
    Process p(path, kT0 + 2 * kMinuteMs);
    ASSERT_TRUE(p.timers);
    std::vector<TimerInfo> pending = p.timers->list();
    ASSERT_EQ(labels(pending), (std::vector<std::string>{"tea", "eggs"}));
    EXPECT_EQ(pending[0].id, tea);
    EXPECT_EQ(pending[1].id, eggs);
    EXPECT_EQ(pending[0].duration, 5min);
    EXPECT_LE(remaining(pending[0]), 3min);
    EXPECT_GT(remaining(pending[0]), 3min - 5s);
    EXPECT_LE(remaining(pending[1]), 8min);
    EXPECT_GT(remaining(pending[1]), 8min - 5s);
    EXPECT_TRUE(p.timers->poll().empty());
    EXPECT_TRUE(p.seen().empty());
  }
  int64_t fresh = 0;
  {  // t = 7 min 30 s: tea's time came 2 min 30 s ago; it fires inside open().
    Process p(path, kT0 + 7 * kMinuteMs + 30 * 1000);
    ASSERT_TRUE(p.timers);
    std::vector<TimerEvent> seen = p.seen();  // no waiting: open() already fired it
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].id, tea);
    std::vector<TimerEvent> fired = p.timers->poll();
    ASSERT_EQ(fired.size(), 1u);
    const TimerEvent& e = fired[0];
    EXPECT_EQ(e.id, tea);
    EXPECT_EQ(e.label, "tea");
    EXPECT_TRUE(e.missed);
    EXPECT_EQ(e.duration, 5min);
    EXPECT_EQ(e.late_by(), 150s);
    EXPECT_EQ(timer_notice({e}),
              "[Timer notice: timer " + std::to_string(tea) +
                  " \"tea\" (5 min) fired late: its time came 2 min 30 s ago, while the agent was not running.]\n");
    std::vector<TimerInfo> pending = p.timers->list();
    ASSERT_EQ(labels(pending), (std::vector<std::string>{"eggs"}));
    EXPECT_LE(remaining(pending[0]), 150s);
    EXPECT_GT(remaining(pending[0]), 150s - 5s);
    EXPECT_EQ(raw_query(path, "SELECT group_concat(label) FROM timers"), "eggs");
    // Ids are never handed out again, not even the cancelled one's.
    auto created = p.timers->create(1h, "fresh");
    ASSERT_TRUE(created.ok());
    fresh = created->id;
    EXPECT_GT(fresh, dropped);
    EXPECT_GT(fresh, eggs);
  }
  {  // Same time again: tea fired once and is gone.
    Process p(path, kT0 + 7 * kMinuteMs + 30 * 1000);
    ASSERT_TRUE(p.timers);
    EXPECT_TRUE(p.timers->poll().empty());
    EXPECT_TRUE(p.seen().empty());
    EXPECT_EQ(labels(p.timers->list()), (std::vector<std::string>{"eggs", "fresh"}));
  }
}

TEST(TimerPersistence, RestoredTimerFiresOnTimeAndIsDeleted) {
  testing::TempDir dir;
  const std::string path = dir.file("agent.db");
  {
    Process p(path, kT0);
    ASSERT_TRUE(p.timers);
    ASSERT_TRUE(p.timers->create(5min, "soon").ok());
  }
  {  // Back 60 ms before the deadline: it fires on time, not as missed.
    Process p(path, kT0 + 5 * kMinuteMs - 60);
    ASSERT_TRUE(p.timers);
    EXPECT_EQ(labels(p.timers->list()), (std::vector<std::string>{"soon"}));
    EXPECT_TRUE(p.timers->poll().empty());
    std::optional<TimerEvent> e = p.timers->wait_event(2s);
    ASSERT_TRUE(e.has_value()) << "the restored timer never fired";
    EXPECT_EQ(e->label, "soon");
    EXPECT_FALSE(e->missed);
    EXPECT_GE(e->late_by(), 0ns);
    EXPECT_LT(e->late_by(), 150ms);  // generous: loaded CI machines
    EXPECT_EQ(timer_notice({*e}).find("late"), std::string::npos) << timer_notice({*e});
    p.timers.reset();  // joins the timer thread, which deletes the fired row first
  }
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM timers"), "0");
}

TEST(TimerPersistence, TheToolSavesAndCancelsAndStorageFailuresAreResults) {
  testing::TempDir dir;
  const std::string path = dir.file("agent.db");
  Process p(path, kT0);
  ASSERT_TRUE(p.timers);
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_timer_tool(p.timers)).ok());

  ToolResult created =
      registry.dispatch({"c1", "timer", json{{"action", "create"}, {"minutes", 1}, {"seconds", 30}, {"label", "pasta"}}});
  ASSERT_TRUE(created.ok) << created.content;
  const int64_t id = json::parse(created.content)["id"].get<int64_t>();
  EXPECT_EQ(raw_query(path, "SELECT label || ' ' || duration_ms || ' ' || created_at || ' ' || due_at FROM timers"),
            "pasta 90000 " + std::to_string(kT0) + " " + std::to_string(kT0 + 90000));
  ToolResult cancelled = registry.dispatch({"c2", "timer", json{{"action", "cancel"}, {"id", id}}});
  EXPECT_TRUE(cancelled.ok) << cancelled.content;
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM timers"), "0");

  // The table disappears under the service: creating fails, as a result the
  // model sees, and nothing is left pending that would not survive a restart.
  EXPECT_EQ(raw_query(path, "DROP TABLE timers"), "");
  ToolResult failed = registry.dispatch({"c3", "timer", json{{"action", "create"}, {"seconds", 10}}});
  EXPECT_FALSE(failed.ok);
  EXPECT_NE(failed.content.find("timer not saved"), std::string::npos) << failed.content;
  EXPECT_NE(failed.content.find("timers"), std::string::npos) << failed.content;  // SQLite's "no such table"
  EXPECT_TRUE(p.timers->list().empty());
}

TEST(TimerPersistence, OpenNeedsAStore) {
  auto opened = TimerService::open({});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kazeia::agent
