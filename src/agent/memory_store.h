// Long-term memory for the agent: a SQLite database with full-text search.
//
// Storage. One SQLite file in WAL mode. Memories are rows of `memories`
// (id, key, value, metadata JSON, conversation id, created/updated times in
// Unix milliseconds), upserted by key. Full-text search uses an FTS5 index
// over (key, value) as an external-content table kept in sync by triggers,
// so the text is stored once; tokenizer "porter unicode61
// remove_diacritics 2" (English stemming: "dogs" finds "dog"; accents
// folded). Per-conversation summaries live in `conversation_summaries`.
// The file is the agent database (agent_database.h): it also holds the
// pending timers. The schema version is PRAGMA user_version; opening a newer
// database fails instead of guessing.
//
// Durability. A commit in WAL mode appends the transaction to the -wal file
// with write(2) before COMMIT returns, so the data is in the kernel page
// cache: a SIGKILL of the writer (the process dies, the kernel does not)
// never loses a committed memory, whatever the synchronous level. What the
// level decides is power loss / OS crash: NORMAL may lose the last commits
// (the database stays consistent), FULL fsyncs the WAL on every commit and
// loses nothing. Memories are written a few at a time per turn, so the fsync
// is cheap next to a model's token latency: the default is FULL; NORMAL is
// an option for bulk imports.
//
// Ranking. recall() takes the best `candidate_pool` matches by BM25 (FTS5's
// bm25(), key column weighted 0.5, value 1.0), then re-ranks them by
//
//   score = relevance * ((1 - w) + w * 2^(-age_days / half_life_days))
//
// where relevance = -bm25 (positive; higher is better), age is measured from
// the memory's last update, w = recency_weight (default 0.3) and the half
// life defaults to 30 days. Recency thus breaks ties between similarly
// relevant memories but can cost at most w of a memory's relevance: a
// clearly better match still wins over a fresher, weaker one.
//
// Queries. User text never reaches FTS5 syntax: fts5_match_expression()
// keeps only words (letters, digits, any non-ASCII), drops common English
// stop words, quotes each word as an FTS5 string and ORs them, so quotes,
// AND/OR/NOT/NEAR, '*', '^', ':' and parentheses are plain text.
//
// Thread safety: all methods may be called from several threads (they are
// serialised by a mutex); several processes may share the file (SQLite
// locking, with a busy timeout).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_database.h"
#include "kazeia/status.h"

namespace kazeia::agent {

using json = nlohmann::ordered_json;

struct Memory {
  int64_t id = 0;
  std::string key;
  std::string value;
  json metadata = json::object();
  std::optional<std::string> conversation_id;  // nullopt: not tied to a conversation
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

struct RecalledMemory {
  Memory memory;
  double relevance = 0.0;  // -bm25
  double score = 0.0;      // relevance combined with recency (see above)
};

struct MemoryStoreOptions {
  Durability durability = Durability::kFull;
  double recency_weight = 0.3;
  double recency_half_life_days = 30.0;
  size_t candidate_pool = 50;  // BM25 candidates re-ranked by recency
  int busy_timeout_ms = 5000;
  // Current time in Unix milliseconds; the system clock if unset (tests pin it).
  std::function<int64_t()> now_ms;
};

struct RecallOptions {
  // When set, only memories of this conversation and global ones (stored
  // without a conversation) are searched.
  std::optional<std::string> conversation_id;
};

struct ContextOptions {
  std::optional<std::string> conversation_id;  // scope, and whose summary to include
  bool include_summary = true;
  size_t max_memories = 20;
  // Token counter; bytes / 4 rounded up when unset.
  std::function<size_t(std::string_view)> count_tokens;
};

// Limits on stored data, checked before anything is written.
inline constexpr size_t kMaxMemoryKeyBytes = 256;
inline constexpr size_t kMaxMemoryValueBytes = 16 * 1024;
inline constexpr size_t kMaxMemoryMetadataBytes = 4 * 1024;

// User text -> a safe FTS5 MATCH expression: "\"dog\" OR \"name\"". Empty
// when the text has no words.
std::string fts5_match_expression(std::string_view text);

class MemoryStore {
 public:
  static constexpr int kSchemaVersion = kAgentSchemaVersion;  // of the whole agent database

  // Opens or creates the database at `path` and brings its schema up to date.
  static Result<std::unique_ptr<MemoryStore>> open(const std::string& path, MemoryStoreOptions options = {});
  ~MemoryStore();
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  // Inserts, or replaces the value/metadata/conversation of the memory with
  // this key (created_at is kept). Returns the stored memory.
  Result<Memory> store(std::string_view key, std::string_view value, const json& metadata = json::object(),
                       std::optional<std::string_view> conversation_id = std::nullopt);

  Result<Memory> get(std::string_view key);
  Result<Memory> get(int64_t id);

  // The k best memories for `query`, best first; empty if nothing matches.
  Result<std::vector<RecalledMemory>> recall(std::string_view query, size_t k, const RecallOptions& options = {});

  // NotFound if there is no such memory.
  Status forget(std::string_view key);
  Status forget(int64_t id);

  Result<int64_t> count();

  Status set_summary(std::string_view conversation_id, std::string_view summary);
  Result<std::string> summary(std::string_view conversation_id);  // NotFound if none

  // A text block for the system prompt: the conversation summary (if any and
  // wanted) and the memories most relevant to `query`, best first, as many
  // as fit in `token_budget` tokens. Empty when nothing fits or matches.
  Result<std::string> context_prompt(std::string_view query, size_t token_budget, const ContextOptions& options = {});

  struct State;  // SQLite handles and prepared statements

 private:
  explicit MemoryStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kazeia::agent
