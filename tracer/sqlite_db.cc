#include "tracer/sqlite_db.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "tracer/ops.h"
#include "tracer/schema_sql.h"
#include "tracer/trace_db.h"

namespace ingero::tracer::sql {

Error db_error(sqlite3* db, std::string_view what) {
  return Error::failure(fmt::format("trace DB: {}: {}", what, db ? sqlite3_errmsg(db) : "out of memory"));
}

Status exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  Error error = Error::failure(fmt::format("trace DB: {}", message ? message : sqlite3_errmsg(db)));
  sqlite3_free(message);
  return error;
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK)
    return db_error(db, fmt::format("preparing \"{}\"", sql));
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

Status Statement::run() {
  int rc = sqlite3_step(stmt_.get());
  sqlite3_reset(stmt_.get());
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return {};
  return db_error(sqlite3_db_handle(stmt_.get()), sqlite3_sql(stmt_.get()));
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_error(sqlite3_db_handle(stmt_.get()), sqlite3_sql(stmt_.get()));
}

void Statement::reset() { sqlite3_reset(stmt_.get()); }

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

namespace {

Result<int64_t> query_int(sqlite3* db, const char* sql) {
  auto stmt = Statement::prepare(db, sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  return *row ? stmt->column_int(0) : 0;
}

Status insert_ops(sqlite3* db) {
  auto stmt = Statement::prepare(db, "INSERT OR IGNORE INTO ops(op, name, category) VALUES(?, ?, ?)");
  if (!stmt) return stmt.error();
  for (const OpInfo& op : kOps) {
    if (op.code == IB_OP_NONE) continue;
    if (Status s = stmt->bind(1, int64_t{op.code}).bind(2, op.name).bind(3, op.category).run(); !s) return s;
  }
  return {};
}

// Creates the schema in an empty file, or checks the version of an existing one.
Status create_or_check_schema(sqlite3* db, const std::string& path) {
  auto version = query_int(db, "PRAGMA user_version");
  if (!version) {
    if (sqlite3_errcode(db) == SQLITE_NOTADB)
      return Error::bad_input(fmt::format("{} is not a SQLite database, so not an ingero-bench trace DB", path),
                              "pass a new file name or an existing trace DB");
    return version.error();
  }
  if (*version == kSchemaVersion) {
    // Idempotent: adds tables and indexes introduced within this schema version.
    if (Status s = exec(db, kSchemaSql); !s) return s;
    return insert_ops(db);
  }
  if (*version != 0)
    return Error::bad_input(
        fmt::format("{} is a trace DB of schema version {}; this build reads version {}", path, *version,
                    kSchemaVersion),
        "use a new --db file, or the ingero-bench build that wrote it");
  auto tables = query_int(db, "SELECT count(*) FROM sqlite_master");
  if (!tables) return tables.error();
  if (*tables != 0)
    return Error::bad_input(fmt::format("{} is a SQLite database but not an ingero-bench trace DB "
                                        "(no schema version, {} other objects)",
                                        path, *tables),
                            "pass a new file name or an existing trace DB");
  auto txn = Transaction::begin(db);
  if (!txn) return txn.error();
  // Another connection may have created it between the check and the lock.
  auto again = query_int(db, "PRAGMA user_version");
  if (!again) return again.error();
  if (*again == 0) {
    if (Status s = exec(db, kSchemaSql); !s) return s;
    if (Status s = exec(db, fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str()); !s) return s;
  }
  if (Status s = insert_ops(db); !s) return s;
  return txn->commit();
}

}  // namespace

Result<Connection> open_trace_db(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Error::bad_input(fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));

  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  Connection db(raw);
  if (rc != SQLITE_OK) return Error::bad_input(fmt::format("cannot open trace DB {}: {}", path, sqlite3_errstr(rc)));
  sqlite3_busy_timeout(db.get(), 30'000);
  if (Status s = create_or_check_schema(db.get(), path); !s) return s.error();
  // WAL lets the harness and the writer thread write the same file; NORMAL is durable at checkpoints.
  if (Status s = exec(db.get(), "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"); !s) return s.error();
  return db;
}

}  // namespace ingero::tracer::sql
