// SPDX-License-Identifier: Apache-2.0
// The one writer of the trace DB (schema: common/schema.sql): every INSERT and UPDATE a
// run, a sweep or the tracer makes goes through here. One file, many runs.
//
// Opening creates the schema or upgrades an older file, and marks the runs and sweeps of
// ingero-bench processes that died before finishing them as 'abandoned'. While a process
// writes, the file is in WAL mode (the harness and the tracer's writer thread write it at
// once); closing the last connection returns it to rollback-journal mode, so that the file
// alone can be read where its directory cannot be written.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

struct RunStart {
  std::string label;                        // "loader w4 pf2", "trace: python3 x.py"
  std::string kind;                         // contract::kind
  std::vector<std::string> command;         // argv of the traced process ([] when attached)
  std::optional<std::string> config_json;   // workload config record (JSON text)
  std::string machine_json;                 // machine description (JSON text)
  bool traced = true;
  bool system_wide = false;
  std::optional<std::string> targets_json;  // attach: the pids asked for
  std::optional<int64_t> sweep_id;
  std::optional<std::string> sweep_point;
  std::optional<std::string> sweep_phase;   // contract::sweep_phase
};

struct RunEnd {
  int exit_code = 0;
  std::string status;                       // contract::status
  std::optional<std::string> result_json;   // workload result record (JSON text)
  std::optional<std::string> error;         // why it failed, in words
  std::optional<std::string> targets_json;  // attach: what became of each target
  std::vector<std::pair<std::string, std::string>> settings;  // run_settings known at the end (the job's CPU time)
};

// A workload-side interval (op category 'workload': batch_wait, batch_compute, worker_start).
struct WorkloadEvent {
  std::string op;  // ops.name
  uint64_t ts_ns = 0;
  uint64_t dur_ns = 0;
  pid_t pid = 0;
  pid_t tid = 0;
  int64_t arg = 0;
  std::optional<int64_t> loader;  // events.stream: the observer's loader
  std::optional<int64_t> bytes;   // events.bytes: a batch's tensor bytes (the observer's batch_wait)
};

// A DataLoader the Python observer saw in a user's job (loaders table).
struct ObservedLoader {
  pid_t pid = 0;
  int loader = 0;
  std::string knobs_json;
  std::optional<std::string> overrides_json;
  int64_t epochs = 0;
  int64_t batches = 0;
  uint64_t wait_ns = 0;
  std::vector<pid_t> workers;
};


struct SweepStart {
  std::string request_json;
  std::string rules_json;
};

struct SweepPointRow {
  std::string point;
  int position = 0;
  std::string config_json;
  std::string state;   // pending | measured | pruned | failed | skipped
  std::string reason;
  std::string cause;   // contract::point_cause, "" for none
};

class TraceDb {
 public:
  // Creates the file (and parent directories) if missing. A file that is not a trace DB,
  // or of a schema this build cannot write, is bad input naming it.
  static Result<TraceDb> open(const std::string& path);
  TraceDb(TraceDb&&) = default;
  TraceDb& operator=(TraceDb&&) = default;
  ~TraceDb();

  const std::string& path() const { return db_.path(); }

  // Inserts a 'running' row (start_ns = now) owned by this process; returns run_id.
  Result<int64_t> begin_run(const RunStart& start);
  // Sets end_ns = now, exit code, status, result record, error, and the end's settings.
  Status finish_run(int64_t run_id, const RunEnd& end);
  Status set_root_pid(int64_t run_id, pid_t pid);
  // A sweep's run counted in another phase than it ran as (a probe kept as a measurement).
  Status set_sweep_phase(int64_t run_id, const std::string& phase);
  Status add_workload_events(int64_t run_id, const std::vector<WorkloadEvent>& events);
  Status add_loaders(int64_t run_id, const std::vector<ObservedLoader>& loaders);
  // Everything the tracer hands back when it stops: threads, totals, histograms, losses,
  // settings, probed libraries. In one transaction.
  Status write_totals(int64_t run_id, const TraceTotals& totals);

  Result<int64_t> begin_sweep(const SweepStart& start);
  Status put_sweep_point(int64_t sweep_id, const SweepPointRow& point);
  Status finish_sweep(int64_t sweep_id, const std::string& status, const std::optional<std::string>& baseline,
                      const std::optional<std::string>& recommended);
  // Re-owns an interrupted sweep for --resume: status 'running', this process as its harness.
  // Atomic: the sweep is claimed only while its status is still `expected_status` (what the
  // resume read); a second resume that lost the race gets bad input naming the sweep.
  Status resume_sweep(int64_t sweep_id, const std::string& expected_status);

  // Copies every run and sweep of another trace DB (a connection at this schema version,
  // e.g. a reader's upgraded copy) into this one under new run and sweep ids, in one
  // transaction; ops are matched by name, so files of other builds merge correctly. Runs
  // that name no node get `node`. Timestamps stay as that node recorded them; runs.started_unix
  // aligns nodes in wall-clock time. Returns how many runs were copied.
  Result<int64_t> import_from(const sql::Connection& source, const std::string& node);

  // The writer's connection, for reading back what it wrote (tests, resume).
  const sql::Connection& connection() const { return db_; }

 private:
  explicit TraceDb(sql::Connection db) : db_(std::move(db)) {}
  Status mark_abandoned();
  sql::Connection db_;
};

// One 64-byte row of the events table as the writer thread stages it (event_batches.records).
struct EventRecord {
  uint64_t ts_ns;
  uint64_t dur_ns;
  uint32_t pid;
  uint32_t tid;
  uint16_t op;
  uint16_t flags;  // IB_EVENT_HAS_*: which of ret/bytes/arg/stream are present
  uint32_t pad;
  int64_t ret;
  uint64_t bytes;
  int64_t arg;
  uint64_t stream;
};
static_assert(sizeof(EventRecord) == 64);

// The events of one run, as the tracer's writer thread stores them over its own connection:
// straight into the indexed table, or, during a burst, staged as packed batches first.
class EventTable {
 public:
  static Result<EventTable> open(const std::string& path, int64_t run_id);
  EventTable(EventTable&&) = default;

  Status insert(const EventRecord* records, size_t count);  // in one transaction
  // Stages records as batches of per_batch, numbered from first_seq, in one transaction.
  Status stage(const EventRecord* records, size_t count, int64_t first_seq, size_t per_batch);
  // Moves staged batch `seq` (count records) into events, in one transaction.
  Status unstage(int64_t seq, size_t count);
  // Makes what was written durable (the writer runs without syncs).
  Status sync();

  // --db-max-mb. The file's pages in use (its size less the free pages SQLite will reuse).
  Result<uint64_t> used_bytes();
  // Keeps the write-ahead log beside the file under max_bytes (checkpointed and truncated to it).
  Status bound_log(uint64_t max_bytes);
  // Deletes this run's events that start before ts_ns, and their event_stacks rows, in one transaction;
  // their pages are reused by later inserts. Returns how many events were deleted.
  Result<uint64_t> drop_before(uint64_t ts_ns);

 private:
  struct Statements {
    sql::Statement insert_event;
    sql::Statement insert_batch;
    sql::Statement select_batch;
    sql::Statement delete_batch;
  };
  EventTable(sql::Connection db, Statements statements, int64_t run_id)
      : db_(std::move(db)), sql_(std::move(statements)), run_id_(run_id) {}
  Status insert_rows(const EventRecord* records, size_t count);  // in the caller's transaction

  sql::Connection db_;
  Statements sql_;
  int64_t run_id_;
};

}  // namespace ingero::tracer
