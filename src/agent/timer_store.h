// Pending timers on disk, so they outlive the process: the `timers` table of
// the agent database (agent_database.h), next to the memories.
//
// A row is written when a timer is created and deleted when it fires or is
// cancelled, each in its own committed transaction (synchronous=FULL by
// default, as for memories). Deadlines are wall-clock Unix milliseconds; ids
// come from SQLite (AUTOINCREMENT: never reused, also across restarts).
//
// Thread safety: all methods may be called from several threads (serialised
// by a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/agent_database.h"
#include "kazeia/status.h"

namespace kazeia::agent {

struct StoredTimer {
  int64_t id = 0;
  std::string label;
  int64_t duration_ms = 0;
  int64_t created_at_ms = 0;  // Unix milliseconds
  int64_t due_at_ms = 0;      // Unix milliseconds
};

class TimerStore {
 public:
  // Opens or creates the agent database at `path` (same file as the memory
  // store's, or a file of its own).
  static Result<std::unique_ptr<TimerStore>> open(const std::string& path, const AgentDatabaseOptions& options = {});
  ~TimerStore();
  TimerStore(const TimerStore&) = delete;
  TimerStore& operator=(const TimerStore&) = delete;

  // Saves a pending timer; returns its new id.
  Result<int64_t> add(std::string_view label, int64_t duration_ms, int64_t created_at_ms, int64_t due_at_ms);
  // NotFound when no row has this id.
  Status remove(int64_t id);
  // Every saved timer, earliest deadline first (ties by id).
  Result<std::vector<StoredTimer>> load();

  struct State;

 private:
  explicit TimerStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kazeia::agent
