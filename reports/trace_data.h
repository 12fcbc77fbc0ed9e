// Reading one run out of a trace DB (tracer/schema.sql): its row, threads, exact
// per-thread totals, histograms, settings, losses, and its events grouped by op.
// Opens the file read-only; every failure is an Error value naming the problem.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "reports/event_column.h"
#include "common/sqlite.h"

namespace ingero::reports {

inline constexpr int kTraceSchemaVersion = 1;

// Opens a trace DB file; failing to open it is bad input with a hint naming the
// commands that write one.
Result<sql::Connection> open_database(const std::string& path, sql::Mode mode);

struct RunRecord {
  int64_t run_id = 0;
  std::string label;
  std::string kind;
  std::string status;
  nlohmann::json config;   // null when absent or unparsable
  nlohmann::json result;   // null when absent or unparsable
  nlohmann::json machine;  // object; may lack keys
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> root_pid;
  bool traced = false;
};

struct ThreadRecord {
  int64_t tid = 0;
  int64_t pid = 0;
  std::optional<int64_t> ppid;
  std::string comm;
  std::string role;  // main | worker | pin | other
  std::optional<int64_t> start_ns;
  std::optional<int64_t> exit_ns;
};

// The scheduler and memory counters of one thread (the thread_stats columns, in
// their order), or their sum over a process or a role.
struct ThreadCounters {
  int64_t voluntary_switches = 0;
  int64_t involuntary_switches = 0;
  int64_t oncpu_ns = 0;
  int64_t offcpu_ns = 0;
  int64_t offcpu_max_ns = 0;  // the longest single off-CPU period
  int64_t runq_count = 0;
  int64_t runq_ns = 0;
  int64_t page_allocs = 0;
  int64_t page_alloc_bytes = 0;
  int64_t page_faults = 0;

  // Adds every counter except offcpu_max_ns, which keeps the larger of the two.
  ThreadCounters& operator+=(const ThreadCounters& other);
};

struct ThreadStatsRecord {
  int64_t tid = 0;
  int64_t pid = 0;
  ThreadCounters counters;
};

ThreadCounters total_counters(const std::vector<ThreadStatsRecord>& thread_stats);

// Everything about a run except its events.
struct RunContext {
  RunRecord run;
  std::vector<ThreadRecord> threads;
  std::vector<ThreadStatsRecord> thread_stats;
  // histograms[metric][pid] = counts per log2 slot
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> histograms;
  std::map<std::string, std::string> settings;
  std::map<std::string, int64_t> losses;
};

struct OpInfo {
  int64_t code = 0;
  std::string name;
  std::string category;
};

// A run's events, one column per op, each in table (rowid) order: the order the
// writer stored them, which is time order per thread in practice but not guaranteed.
struct EventSet {
  std::vector<OpInfo> ops;
  std::vector<EventColumn> by_op;  // parallel to ops

  const EventColumn& of(const std::string& op_name) const;
  EventColumn* find(const std::string& op_name);
  int64_t total() const;
};

class TraceFile {
 public:
  // Checks that path exists, is SQLite, carries PRAGMA user_version == kTraceSchemaVersion
  // and has the trace tables.
  static Result<std::unique_ptr<TraceFile>> open(const std::string& path);

  const std::string& path() const { return db_.path(); }
  const sql::Connection& db() const { return db_; }

  Result<std::vector<RunRecord>> runs() const;
  // The run with that id, or the last run when id is empty. A run with no events
  // and no result record is bad input.
  Result<RunRecord> run(std::optional<int64_t> run_id) const;
  Result<RunContext> context(const RunRecord& run) const;
  // Events of the run, read in one pass over the table's rowid range split into up
  // to `threads` slices, each read through SQL on its own read-only connection and
  // thread (SQLite decodes rows on the calling thread).
  Result<EventSet> events(int64_t run_id, int threads = 2) const;
  Result<std::vector<OpInfo>> ops() const;

 private:
  explicit TraceFile(sql::Connection db) : db_(std::move(db)) {}
  Result<bool> run_has_events(int64_t run_id) const;
  std::string run_id_list() const;
  sql::Connection db_;
};

}  // namespace ingero::reports
