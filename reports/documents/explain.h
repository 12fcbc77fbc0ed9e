// SPDX-License-Identifier: Apache-2.0
// The explain report: metrics, verdict, CUDA latency, per-process table, causal chains.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/text/chain_text.h"
#include "reports/text/health_text.h"
#include "reports/analysis/run_analysis.h"
#include "reports/analysis/tracing_cost.h"

namespace ingero::reports {

struct ExplainReport {
  RunHeader run;
  RunMetrics metrics;
  std::vector<CallLatencyRow> calls;
  std::vector<ProcessRow> roles;      // totals per role
  std::vector<ProcessRow> processes;  // filled with --per-process
  ChainAnalysis chains;
  std::vector<ChainWords> chain_words;  // chains.chains' words, in their order (reports/text/chain_text.h)
  HealthAnalysis health;                // OOM kills, memory growth, /dev/shm, descriptors, hangs
  std::vector<HealthWords> health_words;  // health.findings' words, in their order
  std::optional<RankAnalysis> ranks;  // a DDP job
  std::vector<LoaderRecord> loaders;  // the DataLoaders the observer saw (a user's job)
  std::string gpu_sampler;            // run setting: "nvml", or why the GPU was not sampled
  TracingCost tracing_cost;           // what the tracer cost the job, and what it sampled
  std::vector<std::string> notes;
  std::optional<ProfileAnalysis> profile;  // the CPU profile over the window; none without samples
  bool profile_taken = false;              // the run was profiled (profile_hz > 0)
};

ExplainReport make_explain_report(const RunAnalysis& analysis, std::optional<double> since_s,
                                  bool per_process);

}  // namespace ingero::reports
