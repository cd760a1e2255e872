#include "agent/sqlite_util.h"

#include "base/log.h"

namespace kazeia::agent::sqlite {

Status error_status(sqlite3* db, int rc, std::string_view context) {
  const int primary = rc & 0xFF;
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message = "sqlite (" + std::string(context) + "): " + detail;
  if (std::string_view(detail) != sqlite3_errstr(rc)) message += std::string(" [") + sqlite3_errstr(rc) + "]";
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_PROTOCOL:
      return IoError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return InvalidFile(message);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return InvalidArgument(message);
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
      return OutOfRange(message);
    default:
      return Internal(message);
  }
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    db_ = other.db_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  Statement statement;
  statement.db_ = db;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                              &statement.stmt_, nullptr);
  if (rc != SQLITE_OK) return error_status(db, rc, "prepare");
  return statement;
}

Status Statement::bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? OkStatus() : error_status(db_, rc, "bind");
}

Status Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  return rc == SQLITE_OK ? OkStatus() : error_status(db_, rc, "bind");
}

Status Statement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  return rc == SQLITE_OK ? OkStatus() : error_status(db_, rc, "bind");
}

Status Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  return rc == SQLITE_OK ? OkStatus() : error_status(db_, rc, "bind");
}

Status Statement::bind_nullable(int index, const std::optional<std::string>& text) {
  return text ? bind(index, std::string_view(*text)) : bind_null(index);
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error_status(db_, rc, "step");
}

Status Statement::run() {
  for (;;) {
    KZ_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return OkStatus();
  }
}

void Statement::reset() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);  // its return code repeats the last step's error, already reported
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }
bool Statement::column_is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Result<Database> Database::open(const std::string& path) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the memory store serialises access itself.
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  Database db;
  db.db_.reset(raw);  // even on failure SQLite allocates a handle that must be closed
  if (rc != SQLITE_OK) return error_status(raw, rc, "open " + path);
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status Database::exec(const char* sql, std::string_view context) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return OkStatus();
  Status status = error_status(db_.get(), rc, context);
  sqlite3_free(error);
  return status;
}

Result<std::string> Database::query_text(const char* sql, std::string_view context) {
  KZ_ASSIGN_OR_RETURN(Statement statement, Statement::prepare(db_.get(), sql));
  KZ_ASSIGN_OR_RETURN(bool row, statement.step());
  if (!row) return Internal("sqlite (" + std::string(context) + "): no row");
  return statement.column_text(0);
}

Result<Transaction> Transaction::begin(Database& db) {
  KZ_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE", "begin transaction"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  Status status = db_->exec("ROLLBACK", "rollback");
  if (!status.ok()) KZ_LOG_WARN("%s", status.to_string().c_str());
}

Status Transaction::commit() {
  Status status = db_->exec("COMMIT", "commit");
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace kazeia::agent::sqlite
