// SPDX-License-Identifier: Apache-2.0
// The harness's sub-commands. Each returns the process exit code, or an Error that
// main() turns into a message (and exit code 2 for bad input).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"
#include "harness/cli.h"
#include "harness/run_executor.h"
#include "harness/run_plan.h"

namespace ingero::harness {

// ingero-bench --workload dataloader ...
Result<int> run_workload_command(const WorkloadFlags& flags);

// ingero-bench trace [--db FILE] (-- COMMAND [ARGS...] | --pid PIDS | --duration D); a launched
// command's exit status passes through.
Result<int> run_trace_command(const TraceCommandFlags& flags);

// --pid 1,2,3 as running processes (each once, in the order given); bad input naming what is not one.
Result<std::vector<pid_t>> parse_pids(const std::string& text);

// ingero-bench runs --db FILE [--report FILE]: every run in the DB as one table.
Result<int> run_runs_command(const RunsFlags& flags);
// ingero-bench merge --out FILE DB...: every run and sweep of the inputs in one new DB.
Result<int> run_merge_command(const MergeFlags& flags);

// ---- shared by the commands that run workloads (main job, sweep, ci) ----

// The trace flags as tracer options; bad values are bad input naming the flag.
Result<TraceSettings> trace_settings(const TraceFlags& flags);
// Only the conversion of trace_settings, with no check of the machine, the paths or the values.
Result<tracer::TraceOptions> tracer_options(const TraceFlags& flags);

// Everything a workload command checks before it opens the DB or starts a process: the
// workload, device, lists, resources, output paths, tracing privileges, python.
struct WorkloadSetup {
  RunPlan plan;
  bool cuda = false;
  std::string python;            // empty when no python mode is planned
  std::string workload_program;  // ingero-bench-workload; empty when only python modes are planned
  TraceSettings trace;
  std::string machine_json;
};
Result<WorkloadSetup> prepare_workloads(const WorkloadFlags& flags);
// The same checks for a plan made earlier (a resumed sweep): resources, python, output
// paths, tracing; the flags give --out, --python and the trace flags.
Result<WorkloadSetup> prepare_environment(const WorkloadFlags& flags, RunPlan plan, bool cuda);
// cuda when --device allows it and LibTorch sees a device; bad input for --device cuda without one.
Result<bool> resolve_cuda(const std::string& device);

// The run request for one configuration; the record goes into `private_dir` of the run
// and is kept in out_dir. A DDP job (ranks > 1) runs the reference script as a file (written
// into private_dir), which starts its ranks.
// The programs come from the setup (python and the workload program, found when it was prepared).
Result<RunRequest> workload_request(const workloads::WorkloadConfig& config, const WorkloadSetup& setup,
                                    const std::string& private_dir, const std::string& out_dir);

// Prepares the configuration's dataset (an on-disk one is written or checked), then runs the request.
// A dataset that cannot be prepared (a damaged cache entry) makes a failed run, stored with the
// cause; bad input (a cache folder another user can change) stops before any run is stored.
Result<RunOutcome> execute_workload_run(const workloads::WorkloadConfig& config, const RunRequest& request,
                                        const WorkloadSetup& setup, const std::string& private_dir,
                                        tracer::TraceDb& db);

// The program execvp would run (argv[0] of a command to launch), or bad input naming it.
Status check_program(const std::string& program);

// One line per run on stderr for what the user must know: losses, problems, storage failures.
void report_outcome(const RunOutcome& outcome, bool expects_cuda);

}  // namespace ingero::harness
