// Thin RAII wrappers over the SQLite C API, with errors as Status values.
//
// Only what the memory store needs: a connection, prepared statements with
// typed binds and columns, and a scope guard that resets a statement when an
// operation ends. The reset matters in WAL mode: a SELECT left un-reset keeps
// its read transaction open, which pins the WAL and blocks checkpoints.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kazeia/status.h"

namespace kazeia::agent::sqlite {

// SQLite result code -> Status: busy/locked and I/O failures are kIo,
// corruption is kInvalidFile, constraint violations kInvalidArgument, too
// big kOutOfRange, everything else kInternal. The message carries SQLite's
// own text and the operation that failed.
Status error_status(sqlite3* db, int rc, std::string_view context);

class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  static Result<Statement> prepare(sqlite3* db, std::string_view sql);

  // Parameter indices are 1-based, as in SQLite.
  Status bind(int index, std::string_view text);
  Status bind(int index, int64_t value);
  Status bind(int index, double value);
  Status bind_null(int index);
  Status bind_nullable(int index, const std::optional<std::string>& text);  // NULL when nullopt

  // True when a row is available, false when the statement is done.
  Result<bool> step();
  // Runs to completion, ignoring rows (INSERT/UPDATE/DELETE/DDL).
  Status run();
  // Ends the current execution and clears the bindings.
  void reset();

  int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  bool column_is_null(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

// Resets a statement when the scope ends, whatever the outcome.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& statement_;
};

class Database {
 public:
  Database() = default;
  // Opens (creating if needed) a database file, read-write.
  static Result<Database> open(const std::string& path);

  sqlite3* handle() const { return db_.get(); }
  // Runs fixed SQL (no parameters, never user data), e.g. DDL and pragmas.
  Status exec(const char* sql, std::string_view context);
  // A one-row, one-column query of fixed SQL, e.g. "PRAGMA journal_mode=WAL".
  Result<std::string> query_text(const char* sql, std::string_view context);

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
};

// A transaction that rolls back unless commit() succeeds.
class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock up front, so a read-then-write
  // sequence cannot fail half-way with SQLITE_BUSY.
  static Result<Transaction> begin(Database& db);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Status commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;
};

}  // namespace kazeia::agent::sqlite
