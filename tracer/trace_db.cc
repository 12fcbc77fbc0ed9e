#include "tracer/trace_db.h"

#include <chrono>
#include <functional>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tracer/ops.h"
#include "tracer/sqlite_db.h"

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

}  // namespace

Result<std::unique_ptr<TraceDb>> TraceDb::open(const std::string& path) {
  auto db = sql::open_trace_db(path);
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
