#include "common/sqlite.h"

#include <fmt/format.h>

namespace ingero::sql {
namespace {

// sqlite3_db_filename is empty for in-memory and temporary databases.
std::string file_name(sqlite3* db) {
  const char* name = db ? sqlite3_db_filename(db, "main") : nullptr;
  return name && *name ? name : "in-memory database";
}

}  // namespace

Error db_error(sqlite3* db, std::string_view what) {
  return Error::failure(fmt::format("{}: {}: {}", file_name(db), what, db ? sqlite3_errmsg(db) : "out of memory"));
}

Status exec(sqlite3* db, std::string_view sql) {
  const std::string text(sql);  // sqlite3_exec needs a terminated string
  char* message = nullptr;
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
  Error error = Error::failure(fmt::format("{}: {}", file_name(db), message ? message : sqlite3_errmsg(db)));
  sqlite3_free(message);
  return error;
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK)
    return db_error(db, fmt::format("cannot prepare \"{}\"", sql));
  return Statement(stmt);
}

Statement& Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_.get(), index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_.get(), index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  return value ? bind(index, std::string_view(*value)) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_.get(), index);
  return *this;
}

Statement& Statement::bind_blob(int index, const void* data, size_t size) {
  sqlite3_bind_blob64(stmt_.get(), index, data, size, SQLITE_STATIC);
  return *this;
}

Error Statement::error() const { return db_error(sqlite3_db_handle(stmt_.get()), sqlite3_sql(stmt_.get())); }

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error();
}

Status Statement::run() {
  const int rc = sqlite3_step(stmt_.get());
  // The message is read before the reset, which would replace it.
  Status outcome = rc == SQLITE_DONE || rc == SQLITE_ROW ? Status() : Status(error());
  sqlite3_reset(stmt_.get());
  return outcome;
}

void Statement::reset() { sqlite3_reset(stmt_.get()); }

std::string Statement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), index);
  return text ? std::string(reinterpret_cast<const char*>(text)) : std::string();
}

std::optional<int64_t> Statement::column_optional_int(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_int(index);
}

std::optional<std::string> Statement::column_optional_text(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_text(index);
}

Connection::Connection(sqlite3* db) : db_(db), path_(file_name(db)) {}

Result<std::optional<int64_t>> Connection::query_int(std::string_view sql) const {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row || stmt->column_is_null(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt->column_int(0));
}

Result<Connection> open(const std::string& path, Mode mode, int busy_timeout_ms) {
  const int flags =
      (mode == Mode::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // A failed open may still allocate a handle, which must be closed.
  Connection db(raw, path);
  if (rc != SQLITE_OK)
    return Error::bad_input(fmt::format("cannot open '{}': {}", path, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(db.get(), busy_timeout_ms);
  return db;
}

Result<Transaction> Transaction::begin(sqlite3* db) {
  if (Status s = exec(db, "BEGIN IMMEDIATE"); !s) return s.error();
  return Transaction(db);
}

Transaction::~Transaction() {
  if (db_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::commit() {
  sqlite3* db = db_;
  db_ = nullptr;
  return exec(db, "COMMIT");
}

}  // namespace ingero::sql
