// The harness's sub-commands. Each returns the process exit code, or an Error that
// main() turns into a message (and exit code 2 for bad input).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "harness/run_executor.h"
#include "harness/sweep.h"

namespace ingero::harness {

struct TraceFlags {
  std::string db = "results/ingero-bench.db";
  bool no_trace = false;
  bool system_wide = false;
  std::vector<std::string> cudart;
  double offcpu_min_us = 100;
  double runq_min_us = 100;
  int ringbuf_mb = 32;

  TraceSettings settings() const;
};

struct WorkloadFlags {
  std::string workload;
  SweepRequest sweep;
  std::string out_dir = "results/runs";
  std::string report;       // also write the table as Markdown here
  std::string python;       // python3 with torch for the python modes; found when empty
  TraceFlags trace;
};

// ingero-bench --workload dataloader ...
Result<int> run_workload_command(const WorkloadFlags& flags);

// ingero-bench trace [--db FILE] -- COMMAND [ARGS...]; passes the command's exit status through.
Result<int> run_trace_command(const TraceFlags& flags, const std::vector<std::string>& command);

// ingero-bench runs --db FILE [--report FILE]: every run in the DB as one table.
Result<int> run_runs_command(const std::string& db_path, const std::string& report_path);

}  // namespace ingero::harness
