#include "agent/timer_store.h"

#include <mutex>

#include "agent/text_util.h"

namespace kazeia::agent {

using sqlite::Database;
using sqlite::ResetOnExit;
using sqlite::Statement;

struct TimerStore::State {
  std::mutex mu;
  Database db;
  Statement insert, remove, select_all;  // after db: finalized first
};

TimerStore::TimerStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
TimerStore::~TimerStore() = default;

Result<std::unique_ptr<TimerStore>> TimerStore::open(const std::string& path, const AgentDatabaseOptions& options) {
  auto state = std::make_unique<State>();
  KZ_ASSIGN_OR_RETURN(state->db, open_agent_database(path, options, "timer database"));
  sqlite3* h = state->db.handle();
  KZ_ASSIGN_OR_RETURN(state->insert,
                      Statement::prepare(h, "INSERT INTO timers(label, duration_ms, created_at, due_at) "
                                            "VALUES (?1, ?2, ?3, ?4) RETURNING id"));
  KZ_ASSIGN_OR_RETURN(state->remove, Statement::prepare(h, "DELETE FROM timers WHERE id = ?1"));
  KZ_ASSIGN_OR_RETURN(state->select_all,
                      Statement::prepare(h, "SELECT id, label, duration_ms, created_at, due_at FROM timers "
                                            "ORDER BY due_at, id"));
  return std::unique_ptr<TimerStore>(new TimerStore(std::move(state)));
}

Result<int64_t> TimerStore::add(std::string_view label, int64_t duration_ms, int64_t created_at_ms,
                                int64_t due_at_ms) {
  const std::string clean_label = utf8_sanitize(label);  // keep the database valid UTF-8
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.insert);
  KZ_RETURN_IF_ERROR(s.insert.bind(1, std::string_view(clean_label)));
  KZ_RETURN_IF_ERROR(s.insert.bind(2, duration_ms));
  KZ_RETURN_IF_ERROR(s.insert.bind(3, created_at_ms));
  KZ_RETURN_IF_ERROR(s.insert.bind(4, due_at_ms));
  KZ_ASSIGN_OR_RETURN(bool row, s.insert.step());
  if (!row) return Internal("timer insert returned no id");
  const int64_t id = s.insert.column_int64(0);
  KZ_RETURN_IF_ERROR(s.insert.run());  // finish the statement: this is the commit
  return id;
}

Status TimerStore::remove(int64_t id) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.remove);
  KZ_RETURN_IF_ERROR(s.remove.bind(1, id));
  KZ_RETURN_IF_ERROR(s.remove.run());
  if (sqlite3_changes(s.db.handle()) == 0) return NotFound("no saved timer with id " + std::to_string(id));
  return OkStatus();
}

Result<std::vector<StoredTimer>> TimerStore::load() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.select_all);
  std::vector<StoredTimer> out;
  for (;;) {
    KZ_ASSIGN_OR_RETURN(bool row, s.select_all.step());
    if (!row) break;
    StoredTimer t;
    t.id = s.select_all.column_int64(0);
    t.label = s.select_all.column_text(1);
    t.duration_ms = s.select_all.column_int64(2);
    t.created_at_ms = s.select_all.column_int64(3);
    t.due_at_ms = s.select_all.column_int64(4);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kazeia::agent
