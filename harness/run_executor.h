// SPDX-License-Identifier: Apache-2.0
// One run, start to finish: its DB row (kept honest by a RunGuard), the tracer attached
// before the child's first instruction (or to running processes), the processes
// supervised (signals forwarded, libraries probed as they are mapped), the tracer drained
// and its totals stored, the workload's record kept safe and stored with its batch timings.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "harness/child_process.h"
#include "metrics/metrics_service.h"
#include "tracer/trace_db.h"
#include "tracer/tracer.h"

namespace ingero::harness {

// A run row that ends 'failed' (with the reason) unless commit() says otherwise: a run is
// never left 'running' by an error path of this process.
class RunGuard {
 public:
  static Result<RunGuard> begin(tracer::TraceDb& db, const tracer::RunStart& start);
  RunGuard(RunGuard&& other) noexcept;
  RunGuard& operator=(RunGuard&&) = delete;
  ~RunGuard();

  int64_t id() const { return id_; }
  // Why the run failed, if it ends without commit().
  void fail_with(std::string error) { error_ = std::move(error); }
  Status commit(const tracer::RunEnd& end);

 private:
  RunGuard(tracer::TraceDb* db, int64_t id) : db_(db), id_(id) {}
  tracer::TraceDb* db_;
  int64_t id_;
  bool done_ = false;
  std::string error_ = "the run stopped before it finished";
};

struct RunRequest {
  std::string label;
  std::string kind;                          // contract::kind
  std::vector<std::string> argv;             // the command to launch (empty: attach)
  std::vector<pid_t> attach_pids;            // kind attach: running processes to trace
  bool cuda_processes = false;               // kind system: every process that maps CUDA
  std::optional<double> duration_s;          // stop after this long (a launched command: as end_when)
  bool signal_group = false;                 // forward signals to the child's process group
  // The user's own command (trace -- CMD), not our workload or a sweep point: it outlives a
  // killed harness.
  bool users_own_command = false;
  std::optional<Credentials> run_as;         // the launched child runs as this user (sudo's)
  std::vector<std::pair<std::string, std::string>> env;  // set in the launched child's environment
  std::optional<std::string> observer_dir;   // where the Python observer of a launched job writes
  nlohmann::json overrides = nlohmann::json::object();  // --override: asked of the job's DataLoaders
  std::optional<std::string> config_json;    // workload runs
  std::optional<std::string> result_path;    // where a workload child writes its record
  int ranks = 1;                             // > 1: a DDP job whose ranks write result_path.rank<R>
  std::optional<std::string> record_dir;     // where the record is kept (--out: run-ID-LABEL.json), before the DB
  // Polled while a launched child runs: true ends the job as Ctrl-C would (SIGINT to its group,
  // SIGKILL 10 s later), and whatever of its group is left once it exits is killed and waited for.
  // A job so ended counts as ok when its exit followed that signal.
  std::function<bool()> end_when;
  std::optional<std::string> output_path;    // the launched child's stdout and stderr go here
  std::optional<int64_t> sweep_id;
  std::optional<std::string> sweep_point;
  std::optional<std::string> sweep_phase;
};

struct TraceSettings {
  bool enabled = true;
  tracer::TraceOptions options;
  // --metrics-addr / --metrics-push: serving from before the first run until the command ends
  // (options.live is its registry).
  std::shared_ptr<metrics::MetricsService> metrics;
};

// What became of a run. Storage failures do not lose the record: `stored` says whether the
// DB has everything, and record_kept_at where the record survives otherwise.
struct RunOutcome {
  int64_t run_id = 0;
  int exit_code = 0;                     // the child's, shell style (127: could not be started)
  std::string status;                    // ok | failed | interrupted
  std::string child_exit;                // "exited with status 0", "was killed by signal 9 (Killed)"
  bool ended_by_harness = false;         // end_when said so and the job was stopped
  std::optional<uint64_t> job_user_ns;   // a launched job's CPU time (wait4: it and the descendants it waited for)
  std::optional<uint64_t> job_system_ns;
  std::optional<nlohmann::json> result;  // the workload's record, when it wrote one
  std::optional<uint64_t> events_lost;   // events the trace could not deliver
  bool calls_traced = false;             // some CUDA / NCCL function was probed
  std::vector<std::string> trace_problems;
  std::vector<std::string> observer_notes;  // what the Python observer said, and how much it saw
  int64_t observed_batches = 0;             // DataLoader batches the observer recorded
  std::optional<std::string> observer_unreached;  // why the observer reached none of the job's Pythons
  std::string targets_summary;           // attach: what became of each target
  bool stored = true;
  std::string store_error;
  std::optional<Error> record_error;     // the record could not be written to --out (the DB has it)
  std::optional<std::string> record_kept_at;
  std::string fix;                       // a run that failed before it started: how to mend its cause
};

// A file kept for a run in --out: out/run-12-loader-w4-pf2.json (ext "json"), the label made file-safe.
std::string run_file_path(const std::string& dir, int64_t run_id, const std::string& label, const std::string& ext);

Result<RunOutcome> execute_run(const RunRequest& request, tracer::TraceDb& db, const TraceSettings& trace,
                               const std::string& machine_json);

// A run that failed before anything was started (its dataset could not be prepared): stored as
// failed with the cause, nothing traced, so that it is counted and shown like any failed run.
Result<RunOutcome> store_unstarted_run(const RunRequest& request, tracer::TraceDb& db, const std::string& machine_json,
                                       const Error& cause);

}  // namespace ingero::harness
