// SPDX-License-Identifier: Apache-2.0
// One run read and analysed: the building block of explain, compare, recommend, report
// and the MCP tools. It reads the run's totals, then only the events the analysis needs:
// batch timings, the slow calls, and the activity of the threads involved around them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/profile_analysis.h"
#include "reports/analysis/rank_analysis.h"
#include "reports/analysis/run_metrics.h"
#include "reports/analysis/worker_health.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

struct RunAnalysis {
  RunContext context;
  TimeWindow window;
  RunMetrics metrics;
  std::vector<CallLatencyRow> calls;
  ChainAnalysis chains;
  HealthAnalysis health;                // OOM kills, memory growth, /dev/shm, descriptors, hangs
  NodeRanks own_ranks;                  // the ranks its threads carry (none outside DDP)
  std::optional<RankAnalysis> ranks;   // a DDP job: per rank (own_ranks, or the job's: add_job_ranks)
  std::vector<OpCount> event_counts;    // events per op starting in the window
  std::vector<std::string> file_notes;  // how the file itself was read
  // The CPU profile over the window (reports/analysis/profile_analysis.h); none when no samples were
  // stored, which profile_taken tells apart from a profile that was switched off.
  std::optional<ProfileAnalysis> profile;
  bool profile_taken = false;
  int64_t events_of(const std::string& op) const;
};

// Which run a report is of: what identifies it, the machine it ran on (as recorded) and the time analysed.
struct RunHeader {
  int64_t run_id = 0;
  std::string label;
  std::string kind;
  std::string status;
  std::string mode;
  nlohmann::json machine;  // the run's machine record (reports/text/run_text.h words it)
  std::optional<double> since_s;
  double window_s = 0;
};
RunHeader run_header(const RunAnalysis& analysis, std::optional<double> since_s);

Result<RunAnalysis> analyze_run(const TraceFile& trace, const RunRecord& run, std::optional<double> since_s,
                                WaitSelection waits);

// A run of a job traced on several nodes (reports/analysis/jobs.h): its ranks become the job's, every
// member run analysed as this one was. A run in no job keeps its own.
Status add_job_ranks(const TraceFile& trace, std::optional<double> since_s, WaitSelection waits,
                     RunAnalysis& analysis);

}  // namespace ingero::reports
