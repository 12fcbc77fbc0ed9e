#include "reports/sqlite_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

namespace ingero::reports {

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    failed_ = other.failed_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) failed_ = true;
  return false;
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }

double Statement::column_double(int index) const { return sqlite3_column_double(stmt_, index); }

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text ? std::string(reinterpret_cast<const char*>(text)) : std::string();
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::optional<int64_t> Statement::column_optional_int(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_int(index);
}

std::optional<std::string> Statement::column_optional_text(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_text(index);
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path, Mode mode) {
  sqlite3* db = nullptr;
  // URI mode lets read-only connections also refuse to create a missing file.
  const int flags = (mode == Mode::read_only ? SQLITE_OPEN_READONLY
                                             : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Error::bad_input(fmt::format("cannot open trace database '{}': {}", path, message),
                            "pass the path of a .db file written by 'ingero-bench run' or 'trace'");
  }
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<Database>(new Database(path, db));
}

Database::~Database() { sqlite3_close(db_); }

Result<Statement> Database::prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return Error::failure(fmt::format("{}: cannot prepare query: {}", path_, last_error()));
  }
  return Statement(stmt);
}

Status Database::execute(std::string_view sql) const {
  char* message = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = Error::failure(fmt::format("{}: {}", path_, message ? message : "sqlite error"));
    sqlite3_free(message);
    return error;
  }
  return {};
}

Result<std::optional<int64_t>> Database::query_int(std::string_view sql) const {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  if (stmt->step()) {
    if (stmt->column_is_null(0)) return std::optional<int64_t>();
    return std::optional<int64_t>(stmt->column_int(0));
  }
  if (stmt->failed()) return Error::failure(fmt::format("{}: {}", path_, last_error()));
  return std::optional<int64_t>();
}

std::string Database::last_error() const { return sqlite3_errmsg(db_); }

}  // namespace ingero::reports
