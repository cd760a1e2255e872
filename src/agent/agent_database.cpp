#include "agent/agent_database.h"

#include <array>
#include <cstdlib>

#include "agent/text_util.h"

namespace kazeia::agent {

using sqlite::Database;
using sqlite::Transaction;

namespace {

// Version 1: the memory store. Later versions append a migration step; never
// edit a released one.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE memories (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  value TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  conversation_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX memories_by_conversation ON memories(conversation_id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
  key, value,
  content='memories', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, value ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
  INSERT INTO memories_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
END;
CREATE TABLE conversation_summaries (
  conversation_id TEXT PRIMARY KEY,
  summary TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
)sql";

// Version 2: pending timers. Deadlines are wall-clock Unix milliseconds (a
// steady clock does not survive a restart). AUTOINCREMENT: a fired or
// cancelled timer's id is never handed out again.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE timers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  due_at INTEGER NOT NULL
);
)sql";

constexpr std::array<const char*, 2> kMigrations = {kSchemaV1, kSchemaV2};  // step i: version i -> i + 1
static_assert(kMigrations.size() == kAgentSchemaVersion);

Status migrate(Database& db) {
  KZ_ASSIGN_OR_RETURN(Transaction txn, Transaction::begin(db));
  KZ_ASSIGN_OR_RETURN(std::string version_text, db.query_text("PRAGMA user_version", "read schema version"));
  const int version = std::atoi(version_text.c_str());
  if (version > kAgentSchemaVersion) {
    return Unsupported("database has schema version " + std::to_string(version) + ", newer than this build supports (" +
                       std::to_string(kAgentSchemaVersion) + ")");
  }
  if (version == kAgentSchemaVersion) return txn.commit();
  if (version == 0) {
    KZ_ASSIGN_OR_RETURN(std::string tables, db.query_text("SELECT count(*) FROM sqlite_schema", "inspect schema"));
    if (tables != "0") {
      return InvalidFile("database has tables but no agent schema version; refusing to modify it");
    }
  }
  for (int v = version; v < kAgentSchemaVersion; ++v) {
    Status step = db.exec(kMigrations[static_cast<size_t>(v)], "migrate schema to version " + std::to_string(v + 1));
    if (!step.ok()) {
      if (step.message().find("no such module: fts5") != std::string::npos) {
        return Unsupported("this SQLite library was built without FTS5: " + step.message());
      }
      return step;
    }
  }
  // The version is a constant, not user data.
  const std::string set_version = "PRAGMA user_version = " + std::to_string(kAgentSchemaVersion);
  KZ_RETURN_IF_ERROR(db.exec(set_version.c_str(), "write schema version"));
  return txn.commit();
}

}  // namespace

Result<Database> open_agent_database(const std::string& path, const AgentDatabaseOptions& options,
                                     const std::string& what) {
  KZ_ASSIGN_OR_RETURN(Database db, Database::open(path));
  sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);
  KZ_ASSIGN_OR_RETURN(std::string mode, db.query_text("PRAGMA journal_mode=WAL", "enable WAL"));
  if (ascii_lower(mode) != "wal" && path != ":memory:") {
    return IoError(what + " " + path + ": could not enable WAL mode (journal_mode is " + mode + ")");
  }
  KZ_RETURN_IF_ERROR(db.exec(options.durability == Durability::kFull ? "PRAGMA synchronous=FULL"
                                                                      : "PRAGMA synchronous=NORMAL",
                             "set synchronous"));
  KZ_RETURN_IF_ERROR(migrate(db).with_context(what + " " + path));
  return db;
}

int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kazeia::agent
