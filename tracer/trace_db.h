// The trace database: one SQLite file, many runs. Schema: tracer/schema.sql.
// Opening creates the schema (PRAGMA user_version = kSchemaVersion) or checks it;
// a file of another version or not a trace DB is bad input with a clear message.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace ingero::tracer {

inline constexpr int kSchemaVersion = 1;

// Opens (creating if missing) a trace DB: parent directories, schema, ops table,
// PRAGMA user_version, WAL. Another schema version or a non-DB file is bad input.
Result<sql::Connection> open_trace_db(const std::string& path);

struct RunStart {
  std::string label;                        // "loader w4 pf2", "trace: python3 x.py"
  std::string kind;                         // "workload" | "command"
  std::vector<std::string> command;         // argv of the traced process
  std::optional<std::string> config_json;   // workload config record (JSON text)
  std::string machine_json;                 // machine description (JSON text)
  bool traced = true;
  bool system_wide = false;
};

struct RunEnd {
  int exit_code = 0;
  std::string status;                       // "ok" | "failed" | "interrupted"
  std::optional<std::string> result_json;   // workload result record (JSON text)
};

// A workload-side interval (op category 'workload': batch_wait, batch_compute).
struct WorkloadEvent {
  std::string op;  // ops.name
  uint64_t ts_ns = 0;
  uint64_t dur_ns = 0;
  pid_t pid = 0;
  pid_t tid = 0;
  int64_t arg = 0;
};

class TraceDb {
 public:
  // Creates the file (and parent directories) if missing.
  static Result<std::unique_ptr<TraceDb>> open(const std::string& path);
  virtual ~TraceDb();

  const std::string& path() const { return path_; }

  // Inserts a 'running' row with start_ns = now (CLOCK_MONOTONIC); returns run_id.
  Result<int64_t> begin_run(const RunStart& start);
  // Sets end_ns = now, exit code, status, result record.
  Status finish_run(int64_t run_id, const RunEnd& end);
  Status set_root_pid(int64_t run_id, pid_t pid);
  Status add_workload_events(int64_t run_id, const std::vector<WorkloadEvent>& events);
  Status set_setting(int64_t run_id, const std::string& key, const std::string& value);

  // The raw handle, for the tracer's writer thread (same file, its own connection is
  // opened by the writer; this one is used by the harness thread only).
  ::sqlite3* handle() const { return db_; }

 private:
  TraceDb(std::string path, ::sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  ::sqlite3* db_ = nullptr;
};

}  // namespace ingero::tracer
