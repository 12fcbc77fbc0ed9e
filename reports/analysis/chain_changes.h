// SPDX-License-Identifier: Apache-2.0
// The configuration changes a causal chain calls for: typed knob = value pairs, relative to the
// analysed run's configuration. Part of the analysis; reports/text/chain_text.h words them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/run_metrics.h"

namespace ingero::reports {

// What a chain's changes and words are computed from: the run, its metrics and calls, and the
// producer threads on the path (ChainAnalysis::producers).
struct ChainContext {
  const RunContext& context;
  const RunMetrics& metrics;
  const std::vector<CallLatencyRow>& calls;
  const std::map<std::string, int>& producers;
};

bool is_sync_op(const std::string& op);
bool is_copy_op(const std::string& op);
bool is_launch_op(const std::string& op);

// Loader workers that leave the main thread a core: cores − 1, at least 1.
int worker_budget(const ChainContext& chain);
// A job we did not write: advice in DataLoader terms, not our workload modes.
bool users_job(const ChainContext& chain);
// Workers that would let the loop stop waiting, from its waiting share; at most the budget.
int workers_to_remove_waits(double waiting_share, int workers, int budget);
// I/O-bound readers sleep, so more of them than cores help: up to twice the cores.
int io_worker_target(const ChainContext& chain, int workers);

// Per-sample fetch and collate of large batches: one gather per batch beats any worker count.
inline constexpr int64_t kLargeBatch = 4096;

// The knobs a chain's cause calls for; none where the remedy is not a configuration change
// (or the run has no workload configuration).
std::vector<Change> suggested_changes(const CausalChain& chain, const ChainContext& context);
// The same for a host-bound job's chain (host_bound_chain).
std::vector<Change> host_chain_changes(const CausalChain& chain, const ChainContext& context);

}  // namespace ingero::reports
