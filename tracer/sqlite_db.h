// SQLite plumbing shared by the harness-side TraceDb and the tracer's writer thread:
// RAII connection and statement owners, and opening a trace DB (schema create/check).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace ingero::tracer::sql {

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;

// Opens (creating if missing) a trace DB: parent directories, schema, ops table,
// PRAGMA user_version, WAL. Another schema version or a non-DB file is bad input.
Result<Connection> open_trace_db(const std::string& path);

Status exec(sqlite3* db, const char* sql);

// A prepared statement; bind indexes start at 1 as in SQLite.
class Statement {
 public:
  static Result<Statement> prepare(sqlite3* db, std::string_view sql);
  Statement(Statement&&) = default;
  Statement& operator=(Statement&&) = default;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::optional<std::string>& value);
  Statement& bind_null(int index);
  // The bytes must stay valid until the statement runs.
  Statement& bind_blob(int index, const void* data, size_t size);
  // Runs to completion (SQLITE_DONE) and resets for the next use.
  Status run();
  // Steps once; true while a row is available.
  Result<bool> step();
  int64_t column_int(int index) const { return sqlite3_column_int64(stmt_.get(), index); }
  const void* column_blob(int index) const { return sqlite3_column_blob(stmt_.get(), index); }
  size_t column_bytes(int index) const { return static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), index)); }
  void reset();
  sqlite3_stmt* handle() const { return stmt_.get(); }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  explicit Statement(sqlite3_stmt* s) : stmt_(s) {}
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

// Error::failure carrying SQLite's message for the connection.
Error db_error(sqlite3* db, std::string_view what);

// RAII transaction: commits on commit(), rolls back if destroyed without it.
class Transaction {
 public:
  static Result<Transaction> begin(sqlite3* db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace ingero::tracer::sql
