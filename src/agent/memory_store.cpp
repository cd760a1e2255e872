#include "agent/memory_store.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <unordered_set>

#include "agent/agent_database.h"
#include "agent/sqlite_util.h"
#include "agent/text_util.h"

namespace kazeia::agent {

using sqlite::Database;
using sqlite::ResetOnExit;
using sqlite::Statement;

// ---------------------------------------------------------------------------
// Query sanitisation

namespace {

// Words that carry no topic. With OR semantics they would match almost
// every memory; BM25's IDF weighs them down, but on small stores (where IDF
// is noisy) they still reorder results. Kept short on purpose.
const std::unordered_set<std::string>& stop_words() {
  static const std::unordered_set<std::string> words = {
      "a",    "about", "am",    "an",    "and",  "any",   "are",  "as",    "at",   "be",    "been",
      "but",  "by",    "can",   "could", "did",  "do",    "does", "for",   "from", "had",   "has",
      "have", "he",    "her",   "his",   "how",  "i",     "if",   "in",    "into", "is",    "it",
      "its",  "me",    "my",    "of",    "on",   "or",    "our",  "she",   "so",   "than",  "that",
      "the",  "their", "them",  "then",  "there", "these", "they", "this", "to",   "was",   "we",
      "were", "what",  "when",  "where", "which", "who",  "whom", "why",   "will", "with",  "would",
      "you",  "your",  "not",   "no",    "s",    "t",     "d",    "ll",    "re",   "ve",    "m",
      "tell", "remember", "know", "please", "again"};
  return words;
}

constexpr size_t kMaxQueryTerms = 32;
constexpr size_t kMaxTermBytes = 64;

}  // namespace

std::string fts5_match_expression(std::string_view text) {
  // Words: runs of ASCII letters/digits or non-ASCII bytes (valid UTF-8 only,
  // so a term never carries a broken sequence). Everything else — quotes,
  // operators, parentheses, '*', ':' — separates words and is dropped, so
  // the only FTS5 syntax in the result is ours.
  const std::string clean = utf8_sanitize(text);
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) words.push_back(std::string(utf8_prefix(current, kMaxTermBytes)));
    current.clear();
  };
  for (char ch : clean) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c >= 0x80) {
      current += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : ch;
    } else {
      flush();
    }
  }
  flush();
  // "\xEF\xBF\xBD" (replacement character) alone is not a word.
  std::erase(words, std::string("\xEF\xBF\xBD"));

  std::vector<std::string> terms;
  std::unordered_set<std::string> seen;
  for (const std::string& word : words) {
    if (stop_words().count(word) || !seen.insert(word).second) continue;
    terms.push_back(word);
  }
  if (terms.empty()) {  // a query made only of stop words: search for them after all
    seen.clear();
    for (const std::string& word : words) {
      if (seen.insert(word).second) terms.push_back(word);
    }
  }
  if (terms.size() > kMaxQueryTerms) terms.resize(kMaxQueryTerms);
  std::string expression;
  for (const std::string& term : terms) {
    if (!expression.empty()) expression += " OR ";
    // A double-quoted FTS5 string is literal text; '"' inside is doubled
    // (cannot occur after the filtering above, but the rule is cheap to keep).
    expression += '"';
    for (char c : term) {
      if (c == '"') expression += '"';
      expression += c;
    }
    expression += '"';
  }
  return expression;
}

namespace {

constexpr const char* kMemoryColumns = "id, key, value, metadata, conversation_id, created_at, updated_at";

size_t default_token_count(std::string_view text) { return (text.size() + 3) / 4; }

}  // namespace

// ---------------------------------------------------------------------------
// Store

struct MemoryStore::State {
  MemoryStoreOptions options;
  std::mutex mu;
  Database db;
  // Prepared once, reused (declared after db: destroyed first).
  Statement upsert, select_by_key, select_by_id, delete_by_key, delete_by_id, count, search, set_summary,
      get_summary;

  int64_t now() const { return options.now_ms ? options.now_ms() : unix_now_ms(); }

  // Reads the memory columns (kMemoryColumns order) of the current row.
  static Memory read_memory(const Statement& s, int first = 0) {
    Memory m;
    m.id = s.column_int64(first);
    m.key = s.column_text(first + 1);
    m.value = s.column_text(first + 2);
    m.metadata = json::parse(s.column_text(first + 3), nullptr, /*allow_exceptions=*/false);
    if (m.metadata.is_discarded()) m.metadata = json::object();  // written by something else
    if (!s.column_is_null(first + 4)) m.conversation_id = s.column_text(first + 4);
    m.created_at_ms = s.column_int64(first + 5);
    m.updated_at_ms = s.column_int64(first + 6);
    return m;
  }

  Result<Memory> fetch_one(Statement& s, const std::string& what) {
    KZ_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return NotFound("no memory " + what);
    return read_memory(s);
  }
};

MemoryStore::MemoryStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
MemoryStore::~MemoryStore() = default;

Result<std::unique_ptr<MemoryStore>> MemoryStore::open(const std::string& path, MemoryStoreOptions options) {
  auto state = std::make_unique<State>();
  state->options = std::move(options);
  KZ_ASSIGN_OR_RETURN(state->db,
                      open_agent_database(path, {state->options.durability, state->options.busy_timeout_ms},
                                          "memory database"));
  Database& db = state->db;

  sqlite3* h = db.handle();
  const std::string columns = kMemoryColumns;
  KZ_ASSIGN_OR_RETURN(state->upsert,
                      Statement::prepare(h, "INSERT INTO memories(key, value, metadata, conversation_id, created_at, "
                                            "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5) "
                                            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
                                            "metadata = excluded.metadata, conversation_id = excluded.conversation_id, "
                                            "updated_at = excluded.updated_at RETURNING " + columns));
  KZ_ASSIGN_OR_RETURN(state->select_by_key, Statement::prepare(h, "SELECT " + columns + " FROM memories WHERE key = ?1"));
  KZ_ASSIGN_OR_RETURN(state->select_by_id, Statement::prepare(h, "SELECT " + columns + " FROM memories WHERE id = ?1"));
  KZ_ASSIGN_OR_RETURN(state->delete_by_key, Statement::prepare(h, "DELETE FROM memories WHERE key = ?1"));
  KZ_ASSIGN_OR_RETURN(state->delete_by_id, Statement::prepare(h, "DELETE FROM memories WHERE id = ?1"));
  KZ_ASSIGN_OR_RETURN(state->count, Statement::prepare(h, "SELECT count(*) FROM memories"));
  KZ_ASSIGN_OR_RETURN(
      state->search,
      Statement::prepare(h, "SELECT m.id, m.key, m.value, m.metadata, m.conversation_id, m.created_at, m.updated_at, "
                            "bm25(memories_fts, 0.5, 1.0) AS rank "
                            "FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid "
                            "WHERE memories_fts MATCH ?1 "
                            "AND (?2 IS NULL OR m.conversation_id IS NULL OR m.conversation_id = ?2) "
                            "ORDER BY rank LIMIT ?3"));
  KZ_ASSIGN_OR_RETURN(state->set_summary,
                      Statement::prepare(h, "INSERT INTO conversation_summaries(conversation_id, summary, updated_at) "
                                            "VALUES (?1, ?2, ?3) ON CONFLICT(conversation_id) DO UPDATE SET "
                                            "summary = excluded.summary, updated_at = excluded.updated_at"));
  KZ_ASSIGN_OR_RETURN(state->get_summary,
                      Statement::prepare(h, "SELECT summary FROM conversation_summaries WHERE conversation_id = ?1"));
  return std::unique_ptr<MemoryStore>(new MemoryStore(std::move(state)));
}

Result<Memory> MemoryStore::store(std::string_view key, std::string_view value, const json& metadata,
                                  std::optional<std::string_view> conversation_id) {
  const std::string_view clean_key = trim(key);
  if (clean_key.empty()) return InvalidArgument("memory key must not be empty");
  if (clean_key.size() > kMaxMemoryKeyBytes) {
    return InvalidArgument("memory key is " + std::to_string(clean_key.size()) + " bytes (limit " +
                           std::to_string(kMaxMemoryKeyBytes) + ")");
  }
  if (value.empty()) return InvalidArgument("memory value must not be empty");
  if (value.size() > kMaxMemoryValueBytes) {
    return InvalidArgument("memory value is " + std::to_string(value.size()) + " bytes (limit " +
                           std::to_string(kMaxMemoryValueBytes) + ")");
  }
  if (!metadata.is_object()) return InvalidArgument("memory metadata must be a JSON object");
  const std::string metadata_text = metadata.dump(-1, ' ', false, json::error_handler_t::replace);
  if (metadata_text.size() > kMaxMemoryMetadataBytes) {
    return InvalidArgument("memory metadata is " + std::to_string(metadata_text.size()) + " bytes (limit " +
                           std::to_string(kMaxMemoryMetadataBytes) + ")");
  }
  // SQLite stores whatever bytes it is given; keep the database valid UTF-8.
  const std::string key_text = utf8_sanitize(clean_key);
  const std::string value_text = utf8_sanitize(value);
  std::optional<std::string> conversation;
  if (conversation_id && !conversation_id->empty()) conversation = utf8_sanitize(*conversation_id);

  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.upsert);
  KZ_RETURN_IF_ERROR(s.upsert.bind(1, key_text));
  KZ_RETURN_IF_ERROR(s.upsert.bind(2, value_text));
  KZ_RETURN_IF_ERROR(s.upsert.bind(3, metadata_text));
  KZ_RETURN_IF_ERROR(s.upsert.bind_nullable(4, conversation));
  KZ_RETURN_IF_ERROR(s.upsert.bind(5, s.now()));
  // Autocommit: the statement is its own transaction, committed (and, with
  // synchronous=FULL, fsynced) when it completes below.
  KZ_ASSIGN_OR_RETURN(Memory memory, s.fetch_one(s.upsert, "returned by upsert"));
  KZ_RETURN_IF_ERROR(s.upsert.run());  // finish the statement: this is the commit
  return memory;
}

Result<Memory> MemoryStore::get(std::string_view key) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.select_by_key);
  KZ_RETURN_IF_ERROR(s.select_by_key.bind(1, trim(key)));
  return s.fetch_one(s.select_by_key, "with key '" + std::string(utf8_prefix(key, 100)) + "'");
}

Result<Memory> MemoryStore::get(int64_t id) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.select_by_id);
  KZ_RETURN_IF_ERROR(s.select_by_id.bind(1, id));
  return s.fetch_one(s.select_by_id, "with id " + std::to_string(id));
}

Status MemoryStore::forget(std::string_view key) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.delete_by_key);
  KZ_RETURN_IF_ERROR(s.delete_by_key.bind(1, trim(key)));
  KZ_RETURN_IF_ERROR(s.delete_by_key.run());
  if (sqlite3_changes(s.db.handle()) == 0) {
    return NotFound("no memory with key '" + std::string(utf8_prefix(key, 100)) + "'");
  }
  return OkStatus();
}

Status MemoryStore::forget(int64_t id) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.delete_by_id);
  KZ_RETURN_IF_ERROR(s.delete_by_id.bind(1, id));
  KZ_RETURN_IF_ERROR(s.delete_by_id.run());
  if (sqlite3_changes(s.db.handle()) == 0) return NotFound("no memory with id " + std::to_string(id));
  return OkStatus();
}

Result<int64_t> MemoryStore::count() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.count);
  KZ_ASSIGN_OR_RETURN(bool row, s.count.step());
  if (!row) return Internal("count(*) returned no row");
  return s.count.column_int64(0);
}

Result<std::vector<RecalledMemory>> MemoryStore::recall(std::string_view query, size_t k,
                                                        const RecallOptions& options) {
  std::vector<RecalledMemory> out;
  const std::string match = fts5_match_expression(query);
  if (match.empty() || k == 0) return out;
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  const int64_t now = s.now();
  {
    ResetOnExit reset(s.search);
    KZ_RETURN_IF_ERROR(s.search.bind(1, match));
    KZ_RETURN_IF_ERROR(s.search.bind_nullable(2, options.conversation_id));
    KZ_RETURN_IF_ERROR(s.search.bind(3, static_cast<int64_t>(std::max(s.options.candidate_pool, k))));
    const double w = std::clamp(s.options.recency_weight, 0.0, 1.0);
    const double half_life_ms = std::max(s.options.recency_half_life_days, 1e-9) * 86400e3;
    for (;;) {
      KZ_ASSIGN_OR_RETURN(bool row, s.search.step());
      if (!row) break;
      RecalledMemory r;
      r.memory = State::read_memory(s.search);
      r.relevance = -s.search.column_double(7);
      const double age_ms = static_cast<double>(std::max<int64_t>(0, now - r.memory.updated_at_ms));
      r.score = r.relevance * ((1.0 - w) + w * std::exp2(-age_ms / half_life_ms));
      out.push_back(std::move(r));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const RecalledMemory& a, const RecalledMemory& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.memory.updated_at_ms > b.memory.updated_at_ms;
  });
  if (out.size() > k) out.resize(k);
  return out;
}

Status MemoryStore::set_summary(std::string_view conversation_id, std::string_view summary) {
  if (conversation_id.empty()) return InvalidArgument("conversation id must not be empty");
  if (summary.size() > kMaxMemoryValueBytes) {
    return InvalidArgument("summary is " + std::to_string(summary.size()) + " bytes (limit " +
                           std::to_string(kMaxMemoryValueBytes) + ")");
  }
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.set_summary);
  KZ_RETURN_IF_ERROR(s.set_summary.bind(1, utf8_sanitize(conversation_id)));
  KZ_RETURN_IF_ERROR(s.set_summary.bind(2, utf8_sanitize(summary)));
  KZ_RETURN_IF_ERROR(s.set_summary.bind(3, s.now()));
  return s.set_summary.run();
}

Result<std::string> MemoryStore::summary(std::string_view conversation_id) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  ResetOnExit reset(s.get_summary);
  KZ_RETURN_IF_ERROR(s.get_summary.bind(1, conversation_id));
  KZ_ASSIGN_OR_RETURN(bool row, s.get_summary.step());
  if (!row) return NotFound("no summary for conversation '" + std::string(utf8_prefix(conversation_id, 100)) + "'");
  return s.get_summary.column_text(0);
}

Result<std::string> MemoryStore::context_prompt(std::string_view query, size_t token_budget,
                                                const ContextOptions& options) {
  auto count = [&](std::string_view text) {
    return options.count_tokens ? options.count_tokens(text) : default_token_count(text);
  };
  std::string block;
  // Summary first: it frames the memories. Included only if it fits whole.
  if (options.include_summary && options.conversation_id) {
    Result<std::string> text = summary(*options.conversation_id);
    if (!text.ok() && text.status().code() != ErrorCode::kNotFound) return text.status();
    if (text.ok()) {
      std::string candidate = "Conversation summary: " + *text + "\n";
      if (count(candidate) <= token_budget) block = std::move(candidate);
    }
  }
  RecallOptions recall_options;
  recall_options.conversation_id = options.conversation_id;
  KZ_ASSIGN_OR_RETURN(std::vector<RecalledMemory> memories, recall(query, options.max_memories, recall_options));
  const std::string header = "Relevant memories (most relevant first):\n";
  bool any = false;
  for (const RecalledMemory& r : memories) {
    std::string candidate = block + (any ? "" : header) + "- [" + r.memory.key + "] " + r.memory.value + "\n";
    // Whole-block counting: exact for real tokenizers, where pieces do not add up.
    if (count(candidate) > token_budget) continue;  // a shorter, less relevant one may still fit
    block = std::move(candidate);
    any = true;
  }
  return block;
}

}  // namespace kazeia::agent
