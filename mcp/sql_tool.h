// SPDX-License-Identifier: Apache-2.0
// Read-only SQL over a trace DB for the run_sql tool. Read-only by construction, not by
// trust in the query: a connection opened read-only (immutable where the trace was), an
// authorizer that lets a statement read tables and call ordinary functions and nothing
// else (no writes, schema changes, ATTACH, PRAGMA beyond a few introspection ones,
// functions that reach files or load extensions), one statement per call, a deadline
// enforced by a progress handler, and caps on rows and value sizes.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/sqlite.h"
#include "reports/data/trace_data.h"

namespace ingero::mcp {

inline constexpr int64_t kSqlDefaultRows = 200;
inline constexpr int64_t kSqlMaxRows = 5000;
inline constexpr std::chrono::milliseconds kSqlTimeLimit{2000};

struct SqlAnswer {
  std::vector<std::string> columns;
  nlohmann::json rows = nlohmann::json::array();  // one array of cells per row
  bool truncated = false;                          // more rows matched than returned
  std::string truncated_by;                        // "max_rows" | "answer size"; empty when complete
  double elapsed_ms = 0;
};

class ReadOnlySql {
 public:
  // A connection of its own to the trace's file, opened as the trace was; for a trace read
  // through an in-memory upgrade (an older schema), that upgraded copy, so that queries see
  // the schema the tools and the schema resource describe.
  static Result<std::shared_ptr<ReadOnlySql>> open(std::shared_ptr<const reports::TraceFile> trace,
                                                   std::chrono::milliseconds time_limit = kSqlTimeLimit);

  // Runs one statement that only reads; a refused or failing query is bad input whose
  // message says why. The connection is left as it was (restrictions removed).
  Result<SqlAnswer> query(const std::string& sql, int64_t max_rows) const;

  std::chrono::milliseconds time_limit() const { return time_limit_; }
  // What the queries run against, in words.
  const std::string& source() const { return source_; }

 private:
  ReadOnlySql(std::shared_ptr<const reports::TraceFile> trace, sql::Connection own, sqlite3* db,
              std::chrono::milliseconds time_limit, std::string source)
      : trace_(std::move(trace)), own_(std::move(own)), db_(db), time_limit_(time_limit), source_(std::move(source)) {}

  std::shared_ptr<const reports::TraceFile> trace_;  // keeps a borrowed connection alive
  sql::Connection own_;                              // empty when borrowing the trace's
  sqlite3* db_;
  std::chrono::milliseconds time_limit_;
  std::string source_;
};

}  // namespace ingero::mcp
