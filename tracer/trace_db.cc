#include "tracer/trace_db.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tracer/ops.h"
#include "tracer/schema_sql.h"

namespace ingero::tracer {

namespace {

int64_t monotonic_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Status run_statement(sqlite3* db, std::string_view sql, const std::function<void(sql::Statement&)>& bind) {
  auto stmt = sql::Statement::prepare(db, sql);
  if (!stmt) return stmt.error();
  bind(*stmt);
  return stmt->run();
}

Status insert_ops(const sql::Connection& db) {
  auto stmt = db.prepare("INSERT OR IGNORE INTO ops(op, name, category) VALUES(?, ?, ?)");
  if (!stmt) return stmt.error();
  for (const OpInfo& op : kOps) {
    if (op.code == IB_OP_NONE) continue;
    if (Status s = stmt->bind(1, int64_t{op.code}).bind(2, op.name).bind(3, op.category).run(); !s) return s;
  }
  return {};
}

// Creates the schema in an empty file, or checks the version of an existing one.
Status create_or_check_schema(const sql::Connection& db, const std::string& path) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) {
    if (sqlite3_errcode(db.get()) == SQLITE_NOTADB)
      return Error::bad_input(fmt::format("{} is not a SQLite database, so not an ingero-bench trace DB", path),
                              "pass a new file name or an existing trace DB");
    return version.error();
  }
  if (version->value_or(0) == kSchemaVersion) {
    // Idempotent: adds tables and indexes introduced within this schema version.
    if (Status s = db.exec(kSchemaSql); !s) return s;
    return insert_ops(db);
  }
  if (version->value_or(0) != 0)
    return Error::bad_input(
        fmt::format("{} is a trace DB of schema version {}; this build reads version {}", path, **version,
                    kSchemaVersion),
        "use a new --db file, or the ingero-bench build that wrote it");
  auto tables = db.query_int("SELECT count(*) FROM sqlite_master");
  if (!tables) return tables.error();
  if (tables->value_or(0) != 0)
    return Error::bad_input(fmt::format("{} is a SQLite database but not an ingero-bench trace DB "
                                        "(no schema version, {} other objects)",
                                        path, **tables),
                            "pass a new file name or an existing trace DB");
  auto txn = sql::Transaction::begin(db.get());
  if (!txn) return txn.error();
  // Another connection may have created it between the check and the lock.
  auto again = db.query_int("PRAGMA user_version");
  if (!again) return again.error();
  if (again->value_or(0) == 0) {
    if (Status s = db.exec(kSchemaSql); !s) return s;
    if (Status s = db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion)); !s) return s;
  }
  if (Status s = insert_ops(db); !s) return s;
  return txn->commit();
}

}  // namespace

Result<sql::Connection> open_trace_db(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Error::bad_input(fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));

  auto db = sql::open(path, sql::Mode::read_write, 30'000);
  if (!db) return db.error();
  if (Status s = create_or_check_schema(*db, path); !s) return s.error();
  // WAL lets the harness and the writer thread write the same file; NORMAL is durable at checkpoints.
  if (Status s = db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"); !s) return s.error();
  return db;
}

Result<std::unique_ptr<TraceDb>> TraceDb::open(const std::string& path) {
  auto db = open_trace_db(path);
  if (!db) return db.error();
  return std::unique_ptr<TraceDb>(new TraceDb(path, db->release()));
}

TraceDb::~TraceDb() { sqlite3_close_v2(db_); }

Result<int64_t> TraceDb::begin_run(const RunStart& start) {
  Status s = run_statement(
      db_,
      "INSERT INTO runs(label, kind, command_json, config_json, machine_json, started_unix, start_ns, status, "
      "traced, system_wide) VALUES(?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
      [&](sql::Statement& st) {
        st.bind(1, start.label)
            .bind(2, start.kind)
            .bind(3, nlohmann::json(start.command).dump())
            .bind(4, start.config_json)
            .bind(5, start.machine_json)
            .bind(6, unix_now_s())
            .bind(7, monotonic_now_ns())
            .bind(8, int64_t{start.traced})
            .bind(9, int64_t{start.system_wide});
      });
  if (!s) return s.error();
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status TraceDb::finish_run(int64_t run_id, const RunEnd& end) {
  return run_statement(db_, "UPDATE runs SET end_ns = ?, exit_code = ?, status = ?, result_json = ? WHERE run_id = ?",
                       [&](sql::Statement& st) {
                         st.bind(1, monotonic_now_ns())
                             .bind(2, int64_t{end.exit_code})
                             .bind(3, end.status)
                             .bind(4, end.result_json)
                             .bind(5, run_id);
                       });
}

Status TraceDb::set_root_pid(int64_t run_id, pid_t pid) {
  return run_statement(db_, "UPDATE runs SET root_pid = ? WHERE run_id = ?",
                       [&](sql::Statement& st) { st.bind(1, int64_t{pid}).bind(2, run_id); });
}

Status TraceDb::add_workload_events(int64_t run_id, const std::vector<WorkloadEvent>& events) {
  auto txn = sql::Transaction::begin(db_);
  if (!txn) return txn.error();
  auto stmt = sql::Statement::prepare(
      db_, "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, arg) VALUES(?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return stmt.error();
  for (const WorkloadEvent& e : events) {
    auto code = op_code(e.op);
    if (!code || kOps[*code].category != "workload")
      return Error::bad_input(fmt::format("unknown workload op '{}' (expected batch_wait or batch_compute)", e.op));
    Status s = stmt->bind(1, run_id)
                   .bind(2, static_cast<int64_t>(e.ts_ns))
                   .bind(3, static_cast<int64_t>(e.dur_ns))
                   .bind(4, int64_t{e.pid})
                   .bind(5, int64_t{e.tid})
                   .bind(6, int64_t{*code})
                   .bind(7, e.arg)
                   .run();
    if (!s) return s;
  }
  return txn->commit();
}

Status TraceDb::set_setting(int64_t run_id, const std::string& key, const std::string& value) {
  return run_statement(db_, "INSERT OR REPLACE INTO run_settings(run_id, key, value) VALUES(?, ?, ?)",
                       [&](sql::Statement& st) { st.bind(1, run_id).bind(2, key).bind(3, value); });
}

}  // namespace ingero::tracer
