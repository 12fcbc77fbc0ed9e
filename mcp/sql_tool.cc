// SPDX-License-Identifier: Apache-2.0
#include "mcp/sql_tool.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace ingero::mcp {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The longest string or blob a query may build or read; stops e.g. randomblob(1e9) from
// taking the server's memory.
constexpr int kMaxValueBytes = 1 << 20;
// The most an answer's cells may hold, counted cell by cell as each row is built: the rows
// after the cap are left out, and a first row past it alone is refused.
constexpr size_t kMaxAnswerBytes = 4u << 20;
// The most columns a query may return (SQLite's default is 2000): SQLite builds every cell of
// a row in one step, so the columns times kMaxValueBytes bound what one row costs.
constexpr int kMaxColumns = 64;
// VM instructions between deadline checks: frequent enough to stop within milliseconds.
constexpr int kProgressSteps = 10000;

const char* const kHint =
    "run_sql answers one read-only SELECT (or WITH ... SELECT) over the trace DB; the tables are in the "
    "ingero://schema resource, and list_runs gives the run ids to filter on";

// Pragmas that only describe the schema; the argument they take is a table or index name.
bool introspection_pragma(const std::string& name) {
  static const char* const kAllowed[] = {"table_info", "table_xinfo", "index_list",
                                         "index_info", "index_xinfo", "foreign_key_list"};
  return std::any_of(std::begin(kAllowed), std::end(kAllowed), [&](const char* p) { return name == p; });
}

// Functions that reach outside the trace DB: files, extensions, raw pointers.
bool outside_function(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  static const char* const kDenied[] = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
                                        "zipfile", "zipfile_cds", "sqlar_compress", "sqlar_uncompress", "fsdir"};
  return std::any_of(std::begin(kDenied), std::end(kDenied), [&](const char* f) { return name == f; });
}

std::string text_or(const char* text, const char* fallback) { return text ? text : fallback; }

bool schema_table(const std::string& table) { return table == "sqlite_master" || table == "sqlite_temp_master"; }

// Why an action is refused, in the words of the SQL that asked for it.
std::string refusal(int action, const char* a1, const char* a2) {
  const std::string first = text_or(a1, "?");
  if ((action == SQLITE_INSERT || action == SQLITE_DELETE) && schema_table(first))
    return "the statement changes the schema (CREATE, DROP, ALTER); run_sql only reads";
  switch (action) {
    case SQLITE_INSERT: return fmt::format("INSERT into '{}' writes; run_sql only reads", first);
    case SQLITE_UPDATE: return fmt::format("UPDATE of '{}' writes; run_sql only reads", first);
    case SQLITE_DELETE: return fmt::format("DELETE from '{}' writes; run_sql only reads", first);
    case SQLITE_ATTACH:
    case SQLITE_DETACH: return "ATTACH and DETACH are refused: run_sql reads only the trace DB";
    case SQLITE_PRAGMA:
      return fmt::format("PRAGMA {}{} is refused; only the introspection pragmas table_info, table_xinfo, "
                         "index_list, index_info, index_xinfo and foreign_key_list are allowed",
                         first, a2 ? fmt::format(" = {}", a2) : "");
    case SQLITE_FUNCTION:
      return fmt::format("function {}() is refused: it reaches outside the trace DB", text_or(a2, "?"));
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT: return "transaction control is refused: each query runs on its own";
    default: return fmt::format("the statement changes the database or its schema (SQLite action {}); run_sql only reads",
                                action);
  }
}

// State the SQLite callbacks see while one query runs.
struct QueryWatch {
  std::optional<std::string> refused;  // the first refused action, in words
  Clock::time_point deadline;
  bool expired = false;
};

int authorize(void* user, int action, const char* a1, const char* a2, const char* /*db*/, const char* /*trigger*/) {
  auto* watch = static_cast<QueryWatch*>(user);
  bool allowed = false;
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: allowed = true; break;
    // SQLite asks this when a statement uses a table-valued function (json_each,
    // pragma_table_info): it writes nothing. A real UPDATE of the schema table is refused by
    // SQLite itself (no writable_schema), and by the read-only checks after prepare.
    case SQLITE_UPDATE: allowed = schema_table(text_or(a1, "")); break;
    case SQLITE_FUNCTION: allowed = !outside_function(text_or(a2, "")); break;
    // Introspection only: a value argument to anything else (journal_mode = wal) would change the connection.
    case SQLITE_PRAGMA: allowed = introspection_pragma(text_or(a1, "")); break;
    default: break;
  }
  if (!allowed && !watch->refused) watch->refused = refusal(action, a1, a2);
  return allowed ? SQLITE_OK : SQLITE_DENY;
}

int check_deadline(void* user) {
  auto* watch = static_cast<QueryWatch*>(user);
  if (Clock::now() < watch->deadline) return 0;
  watch->expired = true;
  return 1;  // interrupts the statement
}

// Installs the restrictions on a connection for one query and removes them after, so
// that a borrowed connection serves the reports unrestricted again.
class Restrictions {
 public:
  Restrictions(sqlite3* db, QueryWatch& watch)
      : db_(db),
        previous_length_(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes)),
        previous_columns_(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, kMaxColumns)) {
    sqlite3_set_authorizer(db_, authorize, &watch);
    sqlite3_progress_handler(db_, kProgressSteps, check_deadline, &watch);
  }
  ~Restrictions() {
    sqlite3_set_authorizer(db_, nullptr, nullptr);
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, previous_length_);
    sqlite3_limit(db_, SQLITE_LIMIT_COLUMN, previous_columns_);
  }
  Restrictions(const Restrictions&) = delete;
  Restrictions& operator=(const Restrictions&) = delete;

 private:
  sqlite3* db_;
  int previous_length_;
  int previous_columns_;
};

// Whether only blanks, semicolons and comments follow the first statement.
bool nothing_but_comments(const char* text) {
  for (const char* p = text; *p;) {
    if (std::isspace(static_cast<unsigned char>(*p)) || *p == ';') {
      ++p;
    } else if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char* end = std::strstr(p + 2, "*/");
      if (!end) return true;  // an unterminated comment runs to the end
      p = end + 2;
    } else {
      return false;
    }
  }
  return true;
}

json cell(sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(stmt, column);
    case SQLITE_FLOAT: {
      const double value = sqlite3_column_double(stmt, column);
      return std::isfinite(value) ? json(value) : json(nullptr);  // JSON has no infinity
    }
    case SQLITE_TEXT:
      return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, column)),
                         static_cast<size_t>(sqlite3_column_bytes(stmt, column)));
    case SQLITE_BLOB: return fmt::format("<blob of {} bytes>", sqlite3_column_bytes(stmt, column));
    default: return nullptr;
  }
}

// What a cell adds to the answer, known before the cell is copied out of SQLite.
size_t cell_size(sqlite3_stmt* stmt, int column) {
  return sqlite3_column_type(stmt, column) == SQLITE_TEXT ? static_cast<size_t>(sqlite3_column_bytes(stmt, column)) + 8
                                                          : 16;
}

struct StatementCloser {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StatementHandle = std::unique_ptr<sqlite3_stmt, StatementCloser>;

Error refused(const std::string& why) { return Error::bad_input("run_sql refused the query: " + why, kHint); }

Error sql_error(sqlite3* db, const QueryWatch& watch, std::chrono::milliseconds limit) {
  if (watch.refused) return refused(*watch.refused);
  if (watch.expired)
    return Error::bad_input(
        fmt::format("run_sql stopped the query at its time limit of {:g} s", limit.count() / 1000.0),
        "narrow it: filter on run_id (and op, tid, ts_ns: events is indexed on (run_id, op, ts_ns) and "
        "(run_id, tid, ts_ns)), aggregate, or add a LIMIT");
  const std::string message = sqlite3_errmsg(db);
  if (message.find("too many columns") != std::string::npos)
    return Error::bad_input(fmt::format("run_sql returns at most {} columns: {}", kMaxColumns, message),
                            "select the columns you need, or split the query");
  return Error::bad_input(fmt::format("SQL error: {}", message), kHint);
}

// The statement at the start of `sql`, checked to be one statement that only reads.
Result<StatementHandle> prepare_query(sqlite3* db, const std::string& sql, const QueryWatch& watch,
                                      std::chrono::milliseconds limit) {
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &raw, &tail);
  StatementHandle stmt(raw);
  if (rc != SQLITE_OK) return sql_error(db, watch, limit);
  if (!stmt) return Error::bad_input("the query holds no SQL statement", kHint);
  if (!nothing_but_comments(tail))
    return refused("it holds more than one statement; send one statement per call (nothing after the first ';')");
  // Belt and braces: VACUUM INTO and journal_mode changes need no authorizer action, but
  // SQLite marks them as writing.
  if (!sqlite3_stmt_readonly(stmt.get())) return refused("the statement writes; run_sql only reads");
  if (sqlite3_column_count(stmt.get()) == 0) return refused("the statement returns no rows; send a SELECT");
  return stmt;
}

Result<sql::Connection> open_own_connection(const std::string& path, bool immutable) {
  auto db = sql::open(path, immutable ? sql::Mode::immutable : sql::Mode::read_only, 1000);
  if (!db) return db.error();
  // Refuse writes and schema tricks at the connection level too (independent of the authorizer).
  sqlite3_db_config(db->get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db->get(), SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  if (Status s = db->exec("PRAGMA query_only = ON"); !s) return s.error();
  return db;
}

}  // namespace

Result<std::shared_ptr<ReadOnlySql>> ReadOnlySql::open(std::shared_ptr<const reports::TraceFile> trace,
                                                       std::chrono::milliseconds time_limit) {
  sqlite3* trace_db = trace->db().get();
  const char* filename = sqlite3_db_filename(trace_db, "main");
  // An in-memory upgrade has no file name: query the upgraded copy itself.
  if (!filename || !*filename) {
    const std::string source = fmt::format("an in-memory upgrade of '{}' (schema version {})", trace->path(),
                                           trace->schema_version());
    return std::shared_ptr<ReadOnlySql>(new ReadOnlySql(std::move(trace), {}, trace_db, time_limit, source));
  }
  const bool immutable = sqlite3_uri_boolean(filename, "immutable", 0) != 0;
  auto own = open_own_connection(trace->path(), immutable);
  if (!own) return own.error();
  sqlite3* db = own->get();
  const std::string source = fmt::format("'{}' opened read-only{}", trace->path(), immutable ? " (immutable)" : "");
  return std::shared_ptr<ReadOnlySql>(new ReadOnlySql(std::move(trace), std::move(*own), db, time_limit, source));
}

Result<SqlAnswer> ReadOnlySql::query(const std::string& sql, int64_t max_rows) const {
  const auto started = Clock::now();
  QueryWatch watch;
  watch.deadline = started + time_limit_;
  Restrictions restrictions(db_, watch);
  auto stmt = prepare_query(db_, sql, watch, time_limit_);
  if (!stmt) return stmt.error();

  SqlAnswer answer;
  const int columns = sqlite3_column_count(stmt->get());
  for (int c = 0; c < columns; ++c) answer.columns.push_back(text_or(sqlite3_column_name(stmt->get(), c), "?"));
  size_t bytes = 0;
  for (;;) {
    const int rc = sqlite3_step(stmt->get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return sql_error(db_, watch, time_limit_);
    if (static_cast<int64_t>(answer.rows.size()) >= max_rows) {
      answer.truncated = true;  // this row is one more than the answer holds
      answer.truncated_by = "max_rows";
      break;
    }
    json row = json::array();
    int over = -1;  // the column whose cell would pass the cap
    for (int c = 0; c < columns && over < 0; ++c) {
      const size_t size = cell_size(stmt->get(), c);
      if (bytes + size > kMaxAnswerBytes) {
        over = c;
      } else {
        row.push_back(cell(stmt->get(), c));
        bytes += size;
      }
    }
    if (over >= 0) {
      if (answer.rows.empty())
        return Error::bad_input(
            fmt::format("run_sql's answer is too large: its first row passes the {} MB cap at column '{}'",
                        kMaxAnswerBytes >> 20, answer.columns[static_cast<size_t>(over)]),
            "select fewer or shorter values: substr(column, 1, N) or length(column) instead of the whole text");
      answer.truncated = true;  // the rows so far fit; this one and the rest are left out
      answer.truncated_by = "answer size";
      break;
    }
    answer.rows.push_back(std::move(row));
  }
  answer.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return answer;
}

}  // namespace ingero::mcp
