// SPDX-License-Identifier: Apache-2.0
#include "common/sqlite.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace ingero::sql {
namespace {

// sqlite3_db_filename is empty for in-memory and temporary databases.
std::string file_name(sqlite3* db) {
  const char* name = db ? sqlite3_db_filename(db, "main") : nullptr;
  return name && *name ? name : "in-memory database";
}

// What a user can do about the failures that are not bugs.
std::string hint_for(int code, const std::string& file) {
  switch (code & 0xff) {
    case SQLITE_FULL:
      return fmt::format("free space on the filesystem holding {}, or write to another with --db", file);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return fmt::format("check that {} and its directory can be written by this user, or use another --db", file);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return fmt::format("{} is damaged or not a trace DB; record into a new file", file);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process holds the database locked; retry when it has finished";
    default:
      return "";
  }
}

}  // namespace

Error db_error(sqlite3* db, std::string_view what) {
  const std::string file = file_name(db);
  const int code = db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM;
  return Error::failure(fmt::format("{}: {}: {}", file, what, db ? sqlite3_errmsg(db) : "out of memory"),
                        hint_for(code, file));
}

Status exec(sqlite3* db, std::string_view sql) {
  const std::string text(sql);  // sqlite3_exec needs a terminated string
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK) return {};
  return db_error(db, "database operation failed");
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK)
    return db_error(db, "cannot query the database");
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

// The statement's text stays out of the message: users see what failed, not SQL.
Error Statement::error() const { return db_error(sqlite3_db_handle(stmt_.get()), "database operation failed"); }

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

std::optional<double> Statement::column_optional_double(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_double(index);
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

namespace {

// "file:" URI for path with its reserved characters escaped (SQLite's URI rules).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      uri += fmt::format("%{:02X}", c);
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Result<Connection> open(const std::string& path, Mode mode, int busy_timeout_ms) {
  // A writer never follows a symlink: root must not create or overwrite the file a link names.
  const int access = mode == Mode::read_write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW
                     : mode == Mode::immutable ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                                               : SQLITE_OPEN_READONLY;
  const std::string name = mode == Mode::immutable ? immutable_uri(path) : path;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, access | SQLITE_OPEN_NOMUTEX, nullptr);
  // A failed open may still allocate a handle, which must be closed.
  Connection db(raw, path);
  if (rc != SQLITE_OK && raw && sqlite3_extended_errcode(raw) == SQLITE_CANTOPEN_SYMLINK) {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
    return Error::bad_input(
        fmt::format("cannot open '{}' for writing: the path goes through a symbolic link", path),
        !ec ? fmt::format("pass the path without links: {}", real.string())
            : std::string("pass a path whose folders are real directories, not links"));
  }
  if (rc != SQLITE_OK)
    return Error::bad_input(fmt::format("cannot open '{}': {}", path, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(db.get(), busy_timeout_ms);
  return db;
}

Result<Connection> copy_into_memory(const Connection& source) {
  auto copy = open(":memory:", Mode::read_write, 0);
  if (!copy) return copy.error();
  sqlite3_backup* backup = sqlite3_backup_init(copy->get(), "main", source.get(), "main");
  if (backup == nullptr) return db_error(copy->get(), fmt::format("cannot copy {} into memory", source.path()));
  sqlite3_backup_step(backup, -1);
  if (sqlite3_backup_finish(backup) != SQLITE_OK)
    return db_error(copy->get(), fmt::format("cannot copy {} into memory", source.path()));
  return Connection(copy->release(), source.path() + " (in-memory copy)");
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
