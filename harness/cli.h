// SPDX-License-Identifier: Apache-2.0
// The command line: every sub-command, its flags and their help, in one parser that main()
// runs and tests drive (a hint or --help example that names a command can be parsed here).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracer/tracer.h"
#include "workloads/config.h"

namespace ingero::harness {

// The tracer's options in the flags' units. Every default is the tracer's own (tracer::TraceOptions),
// so that the two cannot drift; trace_settings (harness/commands.h) converts back.
struct TraceFlags {
 private:
  static const tracer::TraceOptions& tracer_defaults() {
    static const tracer::TraceOptions defaults;
    return defaults;
  }

 public:
  std::string db = "results/ingero-bench.db";
  bool no_trace = false;
  bool system_wide = tracer_defaults().system_wide;
  std::vector<std::string> libraries;  // --cudart
  std::string cuda_detail = std::string(tracer::cuda_detail_name(tracer_defaults().cuda_detail));
  double call_stream_min_us = static_cast<double>(tracer_defaults().call_stream_min_ns) / 1e3;
  double offcpu_min_us = static_cast<double>(tracer_defaults().offcpu_min_ns) / 1e3;
  double iowait_min_us = static_cast<double>(tracer_defaults().iowait_min_ns) / 1e3;
  double runq_min_us = static_cast<double>(tracer_defaults().runq_min_ns) / 1e3;
  int mem_burst_pages = static_cast<int>(tracer_defaults().mem_burst_pages);
  double mem_burst_ms = static_cast<double>(tracer_defaults().mem_burst_min_ns) / 1e6;
  int ringbuf_mb = static_cast<int>(tracer_defaults().ringbuf_bytes >> 20);
  bool no_gpu_samples = !tracer_defaults().gpu_samples;
  bool no_wakeups = !tracer_defaults().wakers;
  bool no_program_time = !tracer_defaults().program_time;
  int profile_hz = static_cast<int>(tracer_defaults().profile_hz);  // CPU profile samples per second of each CPU; 0: off
  // Duty cycle of hot calls (tracer/duty_cycle.h).
  double sample_window_ms = static_cast<double>(tracer_defaults().sampling.window_ns) / 1e6;
  double sample_period_ms = static_cast<double>(tracer_defaults().sampling.period_ns) / 1e6;
  double hot_share_pct = tracer_defaults().sampling.hot_share * 100;
  std::string metrics_addr;  // serve /metrics here while tracing (metrics/)
  std::string metrics_push;  // push the final values to this Pushgateway at the end
  // Worker health sampler (tracer/process_sampler.h); 0 off.
  double health_interval_ms = static_cast<double>(tracer_defaults().health_interval_ns) / 1e6;
  // A hang: no batch and every thread off CPU this long.
  double hang_after_s = static_cast<double>(tracer_defaults().hang_after_ns) / 1e9;
  int db_max_mb = static_cast<int>(tracer_defaults().db_max_bytes >> 20);  // --db-max-mb (MiB); 0: none
};

// The workload flags shared by the main job and sweep: lists stay text until planned.
struct WorkloadFlags {
  std::string workload;
  std::vector<std::string> modes;
  std::string num_workers = "0";
  std::string prefetch_factors;  // empty: PyTorch's default
  std::string pin_memory;        // "" not given, else "on", "off" or "on,off"
  std::string persistent_workers;
  workloads::WorkloadConfig base;
  bool samples_given = false;
  bool batch_size_given = false;
  std::string storage = "memory";  // --storage, --format, --page-cache: parsed into base when finished
  std::string format = "raw";
  std::string page_cache = "warm";
  std::string out_dir = "results/runs";
  std::string report;  // also write the table as Markdown here
  std::string python;  // python3 with torch for the python modes; found when empty
  TraceFlags trace;
};

struct SweepFlags {
  WorkloadFlags workload;
  double budget_s = 0;               // 0: no budget
  bool resume = false;
  std::optional<int64_t> sweep_id;   // --resume ID (default: the last interrupted sweep)
  std::string baseline;              // a point's label; default: the first configuration
  bool exhaustive = false;           // every point, every repeat, no pruning (the benchmark's reference)
  std::string search = "coordinate"; // coordinate (knob by knob) | grid (every point, with pruning)
  int max_repeats = 3;
  int verify_rounds = 2;
  // A sweep of the user's own command (after --): its DataLoader overridden point by point.
  std::vector<std::string> command;
  bool num_workers_given = false;
  int steps = 0;                     // steps timed per run (0 with --seconds; default 50)
  double seconds = 0;                // or seconds timed per run
  int warmup_steps = 10;             // steps skipped before timing
  std::optional<int> loader;         // which DataLoader (its construction index); default: the busiest
  bool as_root = false;              // --as-root: under sudo, the command runs as root
};

struct TraceCommandFlags {
  TraceFlags trace;
  std::vector<std::string> command;
  std::string pids;        // --pid 1,2,3
  std::string duration;    // --duration 60s
  bool no_observer = false;                // --no-observer: no DataLoader observer in a launched job
  std::vector<std::string> overrides;      // --override KNOB=VALUE for the job's DataLoaders
  bool as_root = false;                    // --as-root: under sudo, the command runs as root
};

struct ExplainFlags {
  std::string db;
  std::optional<int64_t> run;
  bool per_process = false;
  std::optional<double> since_s;
  bool json = false;
};

struct CompareFlags {
  std::string db;
  int64_t run_a = 0;
  int64_t run_b = 0;
  bool json = false;
};

struct RecommendFlags {
  std::string db;
  std::optional<int64_t> sweep;
  std::optional<int64_t> baseline_run;
  bool json = false;
};

struct RunsFlags {
  std::string db;
  std::string report;
  std::string format = "table";
};

struct CiFlags {
  std::string suite;
  std::string baseline;
  std::string junit;
  std::string summary;
  std::string threshold = "10%";
  std::string db;  // empty: a temporary DB
  bool update_baseline = false;
};

struct McpFlags {
  std::string db;
};

struct ReportFlags {
  std::string db;
  std::optional<int64_t> sweep;
  std::vector<int64_t> runs;
  std::string format;  // md | html | json; empty: from --out's extension
  std::string out;
};

struct ExportFlags {
  std::string db;
  std::optional<int64_t> run;  // folded: the newest finished run when none is given
  std::string format = "perfetto";
  std::string out;
  std::string role;  // folded: only this role's threads (empty: every thread)
};

struct MergeFlags {
  std::vector<std::string> inputs;  // trace DBs, one per node
  std::string out;
};

enum class Command {
  workload, sweep, trace, runs, explain, compare, recommend, ci, mcp, report, export_trace, merge, help
};

struct ParsedCommand {
  Command command = Command::help;
  WorkloadFlags workload;
  SweepFlags sweep;
  TraceCommandFlags trace;
  ExplainFlags explain;
  CompareFlags compare;
  RecommendFlags recommend;
  RunsFlags runs;
  CiFlags ci;
  McpFlags mcp;
  ReportFlags report;
  ExportFlags export_trace;
  MergeFlags merge;
  std::string help_text;  // --help, --version or the usage when nothing was asked
  int exit_code = 0;      // for help: 0 when asked for, 2 when nothing to do
};

// Parses argv (without the program name). Bad flags and values are bad input naming them.
Result<ParsedCommand> parse_command_line(const std::vector<std::string>& args);

// "123" -> 123; anything else (empty, signs, letters, beyond int64) is bad input naming the flag.
Result<int64_t> parse_id(const std::string& flag, const std::string& text);
// "60", "60s", "5m", "1h", "250ms" -> seconds (> 0); else bad input naming the flag.
Result<double> parse_duration(const std::string& flag, const std::string& text);

}  // namespace ingero::harness
