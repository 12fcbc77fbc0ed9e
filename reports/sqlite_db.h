// Thin RAII wrappers over the sqlite3 C API: a connection and a prepared statement.
// Failures become Error values carrying the file name and SQLite's message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ingero::reports {

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);
  Statement& bind(int index, const std::optional<double>& value);

  // True while a row is available; false when done. Errors surface via error().
  bool step();
  void reset();
  bool failed() const { return failed_; }

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;
  std::optional<int64_t> column_optional_int(int index) const;
  std::optional<std::string> column_optional_text(int index) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool failed_ = false;
};

class Database {
 public:
  enum class Mode { read_only, read_write };

  static Result<std::unique_ptr<Database>> open(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Result<Statement> prepare(std::string_view sql) const;
  Status execute(std::string_view sql) const;  // one or more statements, no results
  // The first column of the first row as an integer, if any row.
  Result<std::optional<int64_t>> query_int(std::string_view sql) const;

  std::string last_error() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  Database(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace ingero::reports
