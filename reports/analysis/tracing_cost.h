// SPDX-License-Identifier: Apache-2.0
// What tracing cost a run's job, from what the run recorded: each thread's probe hits
// (call_stats) x the per-call cost calibrated at start-up (run_settings), as a share of the
// thread's traced time; which functions were duty-cycled instead of trapped on every call; and
// what the tracer's other kernel programs ran for (run_settings, from the kernel's statistics).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/data/count_estimate.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

struct ThreadTracingCost {
  int64_t tid = 0;
  int64_t pid = 0;
  std::string role;
  std::string comm;
  int64_t hits = 0;      // calls probed (entry + return counts as one call)
  double cost_ns = 0;    // their calibrated cost
  int64_t time_ns = 0;   // the thread's traced time (its lifetime in the run, at least on + off CPU)
  double share = 0;      // cost / time
};

struct SampledFunction {
  std::string function;
  int64_t pid = 0;       // 0: every process
  int64_t windows = 0;
  double duty_share = 1;
  CountEstimate estimate;  // in that process
  std::string rate_clock;  // contract::rate_clock: what its rates were taken per; empty when not recorded
  // What a trap was taken to cost in the windows, as a multiple of the calibrated cost (measured
  // in the job from the return probe's program time); none: the calibrated cost.
  std::optional<double> trap_cost_scale;
};

// What one of the tracer's kernel programs other than the CUDA probes ran for.
struct ProgramTime {
  std::string program;
  int64_t runs = 0;
  int64_t ns = 0;
};

// The process, scheduler, memory and block programs, timed by the kernel's BPF run-time
// statistics: their own time, not the hooks' cost of entering them (on a page-fault loop here,
// the traced loop's slowdown was about twice the programs' time). They run for every process's
// events and filter in the kernel; the share is of the traced threads' on-CPU time.
struct ProgramsCost {
  std::vector<ProgramTime> programs;  // most time first
  int64_t runs = 0;
  int64_t ns = 0;
  int64_t traced_cpu_ns = 0;  // the traced threads' on-CPU time
  std::optional<double> share;  // ns / traced_cpu_ns (none without on-CPU time)
  // The CPU profile's sampling program (one run per clock tick of a CPU), apart from the others.
  std::optional<ProgramTime> profile;
  std::optional<double> profile_share;  // its ns / traced_cpu_ns
};

// A launched job's CPU time as the harness waited for it (its process and the descendants it
// waited for). Traced, it includes what the probes' traps and the kernel programs cost the job's
// threads (as system time): an untraced run of the same job is the baseline that measures it.
struct JobCpu {
  int64_t user_ns = 0;
  int64_t system_ns = 0;
};

// What the tracer's process spent beside the job on one of its helpers, by the helpers' own CPU clocks:
// the worker-health sampler's thread (reading /proc, its page-table walks for smaps_rollup included),
// or the live metrics (gathering and publishing each second, serving scrapes). Not part of the job's
// CPU time: what the helper adds to the run.
inline constexpr std::string_view kHealthSamplerHelper = "health_sampler";
inline constexpr std::string_view kLiveMetricsHelper = "live_metrics";
// The live metrics' parts.
inline constexpr std::string_view kPublishPart = "publish";  // gathering the totals and publishing them
inline constexpr std::string_view kServePart = "serve";      // serving scrapes of /metrics (count: scrapes)

struct HelperCpuPart {
  std::string part;
  int64_t cpu_ns = 0;
  std::optional<int64_t> count;  // how many times it was done, where known
};

struct HelperCpu {
  std::string name;  // kHealthSamplerHelper, kLiveMetricsHelper
  int64_t cpu_ns = 0;
  std::vector<HelperCpuPart> parts;  // what cpu_ns was spent on, where measured apart
  std::optional<double> job_share;   // of the job's CPU time (launched jobs)
};

struct TracingCost {
  bool calls_probed = false;           // some CUDA or NCCL function was probed
  std::optional<double> entry_ns;      // calibrated: a call probed at entry only
  std::optional<double> call_ns;       // ... at entry and return
  std::string unknown_because;         // when not calibrated
  bool sampling_on = false;
  std::string sampling_note;           // why it is off, when the tracer said
  std::optional<double> hot_share;     // a call is hot past this share of its thread's time
  std::vector<ThreadTracingCost> threads;  // threads with probe hits, most costly share first
  std::optional<ThreadTracingCost> main;   // the main thread's (also in threads when it had hits)
  std::vector<SampledFunction> sampled;
  std::optional<ProgramsCost> programs;
  std::string programs_unknown_because;  // when not timed
  std::optional<JobCpu> job_cpu;         // launched jobs: their CPU time (none attached, or before it was stored)
  std::optional<HelperCpu> health_sampler;  // with the sampler on
  std::optional<HelperCpu> live_metrics;    // with --metrics-addr or --metrics-push
  bool known() const { return entry_ns && call_ns; }
};

TracingCost tracing_cost(const RunContext& context);

}  // namespace ingero::reports
