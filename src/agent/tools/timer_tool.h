// Timers for the agent: the `timer` tool and the service behind it.
//
// TimerService keeps pending timers on the steady clock (immune to wall-clock
// jumps) and one background thread that sleeps until the earliest deadline.
// When a timer fires, a TimerEvent is queued (drain it with poll(), or block
// on wait_event()) and the optional callback runs on the timer thread.
// Timers that fire together are delivered in deadline order, ties by id.
//
// The callback must be quick and must not call back into the service's
// blocking functions (wait_event) — it runs on the only timer thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/tool_registry.h"
#include "kazeia/status.h"

namespace kazeia::agent {

struct TimerInfo {
  int64_t id = 0;
  std::string label;
  std::chrono::nanoseconds duration{0};
  std::chrono::steady_clock::time_point due;
};

struct TimerEvent {
  int64_t id = 0;
  std::string label;
  std::chrono::nanoseconds duration{0};
  std::chrono::steady_clock::time_point due;
  std::chrono::steady_clock::time_point fired_at;
};

class TimerService {
 public:
  using Callback = std::function<void(const TimerEvent&)>;
  static constexpr size_t kMaxPending = 1000;

  explicit TimerService(Callback on_fire = {});
  ~TimerService();  // pending timers are dropped without firing
  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // Fails for a non-positive duration or when kMaxPending timers are pending.
  Result<TimerInfo> create(std::chrono::nanoseconds duration, std::string label);
  // Pending timers, earliest first.
  std::vector<TimerInfo> list() const;
  // NotFound if no pending timer has this id (already fired or never existed).
  Status cancel(int64_t id);

  // Fired events not yet taken, oldest first; clears the queue.
  std::vector<TimerEvent> poll();
  // Waits for the next fired event (takes it off the queue).
  std::optional<TimerEvent> wait_event(std::chrono::nanoseconds timeout);

 private:
  void run();

  Callback on_fire_;
  mutable std::mutex mu_;
  std::condition_variable wake_;    // timer thread: new earliest deadline or stop
  std::condition_variable fired_;   // waiters in wait_event
  std::map<std::pair<std::chrono::steady_clock::time_point, int64_t>, TimerInfo> pending_;
  std::deque<TimerEvent> events_;
  int64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;  // last: starts after everything above is constructed
};

// Tool "timer": {"action": "create"|"list"|"cancel", "seconds", "minutes",
// "label", "id"}. Durations add up (minutes: 1, seconds: 30 is 90 s); at most
// 7 days.
Tool make_timer_tool(std::shared_ptr<TimerService> service);

}  // namespace kazeia::agent
