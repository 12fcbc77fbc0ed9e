// SPDX-License-Identifier: Apache-2.0
// A DDP job's ranks (threads.rank): each rank's own verdict and top cause, found by the same
// metrics and causal chains as a run's, restricted to that rank's main loop and workers; its
// NCCL calls; which rank the others wait for; and each node's cores against its ranks ×
// (workers + 1). The ranks come from one run, or from the runs of one job traced on several
// nodes (reports/analysis/jobs.h).
//
// In DDP every rank's step ends in an all-reduce of the gradients, so a rank whose input
// pipeline is slow holds every other rank in that all-reduce: the straggler is the rank that
// waits most for its input; the others' extra step time (batch_compute beyond the straggler's)
// is what they spent waiting for it there, an upper bound.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/chain_changes.h"
#include "reports/analysis/jobs.h"
#include "reports/analysis/run_metrics.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// One NCCL function's calls made by one rank's processes (call_stats: exact counts, unless the
// function was duty-cycled in one of them: then estimated).
struct NcclCallRow {
  std::string op;
  int64_t calls = 0;     // entered the function
  bool estimated = false;
  int64_t errors = 0;    // returned non-zero
  int64_t bytes = 0;
  int64_t total_ns = 0;  // over the calls that returned while probed
  int64_t max_ns = 0;
  std::optional<int64_t> mean_ns;  // total_ns / the calls that returned; empty when none was timed
};

struct RankRow {
  int64_t rank = 0;
  std::string node;     // the node that traced it (runs.node)
  int64_t run_id = 0;   // the run it was traced in
  int64_t pid = 0;      // the rank's process (its main loop)
  int worker_processes = 0;  // loader worker processes it started (each epoch's, unless persistent)
  RunMetrics metrics;   // its own: epochs from its record, waits and steps from its main loop
  ThreadCounters counters;  // over the rank's processes (main loop, pin thread, workers)
  std::optional<CausalChain> top_chain;
  // What the top chain's changes and words are made from besides its metrics (ChainContext): the
  // rank's own view of the run, the run's calls and the chain's producers. Kept for the text layer
  // (reports/text/rank_text: rank_chain_words).
  struct ChainBasis {
    RunContext context;
    std::vector<CallLatencyRow> calls;
    std::map<std::string, int> producers;
  };
  std::shared_ptr<const ChainBasis> top_chain_basis;
  std::vector<NcclCallRow> nccl;  // most total time first; empty when it made no NCCL call
  int64_t waits_for_straggler_ns = 0;  // step time beyond the straggler's (0 for the straggler)
};

// One node's cores against the ranks it ran (one traced run is one node's share of a job).
struct NodeCores {
  std::string node;
  int64_t run_id = 0;
  int ranks = 0;                        // the ranks traced on it
  std::optional<int> cores;             // its usable cores
  int workers_per_rank = 0;             // the configuration's num_workers
  int processes = 0;                    // ranks × (workers + 1)
  std::optional<int> suggested_workers; // cores // ranks − 1 (Lightning's rule), when it differs
  std::optional<ChangeCheck> suggestion_check;  // filled by explain from the DB's other runs
};

// The ranks of one run, before they are compared with the other ranks of their job.
struct NodeRanks {
  std::vector<RankRow> ranks;  // by rank
  NodeCores cores;
};

struct RankAnalysis {
  std::vector<RankRow> ranks;        // by rank, across the job's nodes
  std::optional<int64_t> straggler;  // the rank the others wait for, when one is input-bound
  std::vector<NodeCores> nodes;      // the explained run's node first
  std::optional<Job> job;            // when the ranks come from several runs (nodes) of one job
  bool any_nccl() const;
};

struct RankInputs {
  const RunContext& context;
  const EventSet& batches;  // batch_wait and batch_compute in the window
  const EventSet& victims;
  const EventSet& activity;
  const TimeWindow& window;
  const std::vector<CallLatencyRow>& calls;
  const std::vector<ProcessCallTotals>& nccl_calls;  // the run's NCCL call totals per process
  WaitSelection waits = WaitSelection::slow_or_input_bound;
};

// The ranks the run's threads carry, each analysed alone (none when no thread has a rank).
NodeRanks node_ranks(const RankInputs& inputs);

// The ranks of one run, or of the runs of one job (the explained run's first), compared: the
// straggler and the others' wait for it. Empty optional unless there are two ranks or more.
std::optional<RankAnalysis> compare_ranks(std::vector<NodeRanks> nodes, std::optional<Job> job);

}  // namespace ingero::reports
