// SPDX-License-Identifier: Apache-2.0
// RAII ownership of the sqlite3 C API shared by the tracer (writing trace DBs)
// and the reports (reading them): a connection, a prepared statement and a
// transaction guard. Failures become Error values naming the file and carrying
// SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace ingero::sql {

// Error::failure reading "<file>: <what>: <SQLite's message>" for the connection, with a
// hint for the failures a user can fix (a full disk, a read-only file, a damaged file).
Error db_error(sqlite3* db, std::string_view what);

// Runs one or more statements that return no rows.
Status exec(sqlite3* db, std::string_view sql);

// A prepared statement; bind indexes start at 1 and column indexes at 0, as in SQLite.
class Statement {
 public:
  // Prepared as long-lived: callers keep statements across many steps and resets.
  static Result<Statement> prepare(sqlite3* db, std::string_view sql);
  Statement() = default;  // holds nothing until assigned from prepare()

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  // An empty optional binds NULL.
  Statement& bind(int index, const std::optional<int64_t>& value);
  Statement& bind(int index, const std::optional<double>& value);
  Statement& bind(int index, const std::optional<std::string>& value);
  Statement& bind_null(int index);
  // The bytes must stay valid until the statement runs.
  Statement& bind_blob(int index, const void* data, size_t size);

  // Steps once: true while a row is available, false when done.
  Result<bool> step();
  // Steps once for the statement's effect (INSERT, UPDATE, ...) and resets it for the next use.
  Status run();
  // Calls on_row(*this) for every remaining row.
  template <class OnRow>
  Status for_each_row(OnRow&& on_row) {
    for (;;) {
      auto row = step();
      if (!row) return row.error();
      if (!*row) return {};
      on_row(static_cast<const Statement&>(*this));
    }
  }
  // Rewinds to before the first row; bindings are kept.
  void reset();

  int64_t column_int(int index) const { return sqlite3_column_int64(stmt_.get(), index); }
  double column_double(int index) const { return sqlite3_column_double(stmt_.get(), index); }
  std::string column_text(int index) const;  // empty for NULL
  bool column_is_null(int index) const { return sqlite3_column_type(stmt_.get(), index) == SQLITE_NULL; }
  std::optional<int64_t> column_optional_int(int index) const;
  std::optional<double> column_optional_double(int index) const;
  std::optional<std::string> column_optional_text(int index) const;
  const void* column_blob(int index) const { return sqlite3_column_blob(stmt_.get(), index); }
  size_t column_bytes(int index) const { return static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), index)); }

  sqlite3_stmt* handle() const { return stmt_.get(); }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Error error() const;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

// Owns one connection and remembers the path it was opened with, for messages.
class Connection {
 public:
  Connection() = default;
  // Takes ownership of an open handle; the path is the one SQLite reports.
  explicit Connection(sqlite3* db);
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* get() const { return db_.get(); }
  // Gives up ownership: the caller closes the handle.
  sqlite3* release() { return db_.release(); }
  const std::string& path() const { return path_; }

  Result<Statement> prepare(std::string_view sql) const { return Statement::prepare(get(), sql); }
  Status exec(std::string_view sql) const { return sql::exec(get(), sql); }
  // The first column of the first row; empty when there is no row or it is NULL.
  Result<std::optional<int64_t>> query_int(std::string_view sql) const;
  std::string last_error() const { return sqlite3_errmsg(get()); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

enum class Mode {
  read_only,   // the file must exist; writes fail
  immutable,   // read-only, and SQLite assumes nobody changes the file: no locks, no -shm, no
               // journal (for a file in a directory or on a mount this user cannot write)
  read_write,  // created when missing
};

// Opens path; busy_timeout_ms is how long a statement waits for another
// connection's lock before failing with SQLITE_BUSY. A file that cannot be
// opened is bad input.
Result<Connection> open(const std::string& path, Mode mode, int busy_timeout_ms);

// A private in-memory copy of a database (sqlite3_backup), to change without touching the file.
Result<Connection> copy_into_memory(const Connection& source);

// BEGIN IMMEDIATE on begin(); commits on commit(), rolls back if destroyed without it.
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

}  // namespace ingero::sql
