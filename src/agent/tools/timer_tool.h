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
//
// Persistence (TimerService::open with a TimerStore): every created timer is
// saved with its wall-clock deadline and deleted when it fires or is
// cancelled, so a service opened later on the same database lists the
// timers that were pending when the previous one went away and fires them
// on time. Those whose deadline passed in between fire at once, inside
// open() (their callback runs on the caller's thread), marked `missed`
// (late_by() says how late). Delivery is at least
// once: a process killed between a timer firing and its row being deleted
// fires it again, late, on the next start. Two services on one database at
// the same time would both fire its timers: give each process its own.
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

#include "agent/timer_store.h"
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
  bool missed = false;  // the deadline passed while no service was running; fired on restart
  std::chrono::nanoseconds late_by() const { return fired_at - due; }
};

struct TimerPersistence {
  std::shared_ptr<TimerStore> store;
  // Wall clock in Unix milliseconds; the system clock when unset (tests
  // inject one to "restart" minutes later).
  std::function<int64_t()> now_ms;
};

class TimerService {
 public:
  using Callback = std::function<void(const TimerEvent&)>;
  static constexpr size_t kMaxPending = 1000;

  // Timers that live as long as the service.
  explicit TimerService(Callback on_fire = {});
  // Timers saved in persistence.store: restores the saved ones (see above).
  static Result<std::shared_ptr<TimerService>> open(TimerPersistence persistence, Callback on_fire = {});
  ~TimerService();  // pending timers are dropped without firing (saved ones stay saved)
  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // Fails for a non-positive duration, when kMaxPending timers are pending,
  // or when the timer cannot be saved.
  Result<TimerInfo> create(std::chrono::nanoseconds duration, std::string label);
  // Pending timers, earliest first.
  std::vector<TimerInfo> list() const;
  // NotFound if no pending timer has this id (already fired or never existed);
  // a storage failure leaves the timer pending.
  Status cancel(int64_t id);

  // Fired events not yet taken, oldest first; clears the queue.
  std::vector<TimerEvent> poll();
  // Waits for the next fired event (takes it off the queue).
  std::optional<TimerEvent> wait_event(std::chrono::nanoseconds timeout);

 private:
  TimerService(Callback on_fire, TimerPersistence persistence);
  void run();
  // Saves / deletes a timer when persistent (a no-op otherwise).
  Result<int64_t> save(const std::string& label, std::chrono::nanoseconds duration);
  void forget_saved(const std::vector<TimerEvent>& fired);

  Callback on_fire_;
  TimerPersistence persistence_;
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
