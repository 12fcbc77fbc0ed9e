// SPDX-License-Identifier: Apache-2.0
// The short sentences about a run that several readers print: the terminal's explain, the main job's
// diagnosis after its table, `runs`, and the text of every MCP answer. Each is made here once, from
// what analysis returns, so that all of them say the same thing in the same words.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/profile_analysis.h"
#include "reports/analysis/run_analysis.h"
#include "reports/analysis/run_metrics.h"
#include "reports/analysis/worker_health.h"
#include "reports/data/trace_data.h"
#include "reports/text/chain_text.h"
#include "reports/text/health_text.h"

namespace ingero::reports {

// "run 3 'loader w4'"
std::string run_name(const RunHeader& run);
// "HIGHLY input-bound (waited for data 81.0 % of the time, from the observer)"; a run without a
// verdict says why ("none (the run failed: ...)").
std::string verdict_summary(const RunMetrics& m);
// "run 3 'loader w4': HIGHLY input-bound (waited for data ...)"
std::string run_verdict_line(const RunHeader& run, const RunMetrics& m);
// A run that could not be analysed: "run 3: cannot be analysed: <why>".
std::string unanalysable_run_text(int64_t run_id, const std::string& why);

// "[HIGH] <summary>": a chain's title, after its "#1 " where chains are numbered.
std::string chain_title(const CausalChain& chain, const ChainWords& words);
// "root cause: ...", "change: ...": what follows a chain's title (and its timeline, where shown).
std::vector<std::string> chain_cause_lines(const ChainWords& words);
// "3 of 7 chains shown (min severity LOW, top 5)"
std::string chains_shown_text(size_t shown, size_t total, const std::string& min_severity, size_t top);

// "[HIGH] OOM kill: <summary>", then "change: ..." on its own line.
std::string health_title(const HealthFinding& finding, const HealthWords& words);
std::string change_line(const std::string& change);

// "cudaMemcpyAsync: 62 calls, p50 22.8 µs, p99 68.7 ms, total 1.2 s (exact percentiles)"
std::string call_summary(const CallLatencyRow& row);
// "worker (pid 12): 1 process(es), 2 thread(s); on CPU 1.2 s, off CPU ..., 64 page faults, 2 MB allocated"
std::string process_summary(const ProcessRow& row);

// "main: 40 samples on 1 thread"
std::string role_profile_heading(const RoleProfile& role);
// "75.0 % self, 100.0 % incl  at::native::_convolution"
std::string frame_share_line(const FrameShare& frame);

// What a run's recorded losses mean: unknown when never recorded (none), nothing lost, or some dropped.
std::string losses_meaning(const std::optional<std::map<std::string, int64_t>>& losses);

// "run 3 'loader w4' (workload, loader, ok): epoch median 1.2 s [sweep 2, measure]"
std::string run_list_line(const RunRecord& run, const std::string& mode, std::optional<double> epoch_median_s);
// "  ... 12 more in structuredContent" (MCP's text lists only the first rows); empty when all were shown.
std::string more_rows_text(size_t shown, size_t total);

// "40 events of run 3 from 1 s until 2 s after the run's start (truncated at limit 500: ...)".
struct TimelineSummary {
  size_t events = 0;
  int64_t run_id = 0;
  int64_t run_start_ns = 0;
  std::optional<int64_t> from_ns, until_ns;
  bool truncated = false;
  int64_t limit = 0, max_limit = 0;
};
std::string timeline_summary_text(const TimelineSummary& t);
// "12 rows (truncated at max_rows 10) in 1.3 ms", or "(truncated: the answer reached its size limit)".
std::string rows_summary_text(size_t rows, bool truncated, bool by_max_rows, int64_t max_rows, double elapsed_ms);

// The main job's diagnosis heading, and why there is none.
std::string diagnosis_heading(const std::string& db_path);
std::string diagnosis_unavailable_text(const std::string& why);

// What the results table says in a row's status column: a run cut short that kept epochs
// ("interrupted, 3 epochs kept: <why>"), a failure ("failed: <why>"), a job's timing.
std::string kept_epochs_status(const std::string& cut_by, size_t kept, const std::string& error);
std::string failure_status(const std::string& status, const std::string& why);
std::string job_timing_status(int64_t measured_steps, double steps_per_s);
inline constexpr const char* kNoWorkloadRecord = "no workload record";
inline constexpr const char* kUntracedSuffix = " (untraced)";

}  // namespace ingero::reports
