// The agent's SQLite database: one file that holds the memory store's
// tables and the pending timers (so both survive a restart).
//
// open_agent_database() opens (creating if needed) the file in WAL mode with
// the requested durability and brings the schema up to date. The schema
// version is PRAGMA user_version:
//   1  memories (+ FTS5 index and its triggers), conversation_summaries
//   2  timers (pending timers of the `timer` tool, wall-clock deadlines)
// A database with a newer version is refused (kUnsupported) instead of
// guessed at; a version-0 database that already has tables is someone
// else's and is refused too (kInvalidFile). Each connection (the memory
// store and the timer store open their own) runs the same migration; the
// second finds the schema current.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "agent/sqlite_util.h"
#include "kazeia/status.h"

namespace kazeia::agent {

inline constexpr int kAgentSchemaVersion = 2;

enum class Durability {
  kNormal,  // PRAGMA synchronous=NORMAL: survives process crashes, not power loss
  kFull,    // PRAGMA synchronous=FULL: fsync per commit, survives power loss
};

struct AgentDatabaseOptions {
  Durability durability = Durability::kFull;
  int busy_timeout_ms = 5000;
};

// `what` names the database in error messages ("memory database").
Result<sqlite::Database> open_agent_database(const std::string& path, const AgentDatabaseOptions& options,
                                             const std::string& what);

// The system clock in Unix milliseconds.
int64_t unix_now_ms();

}  // namespace kazeia::agent
