// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/chain_changes.h"

#include <algorithm>
#include <cmath>

#include "common/trace_contract.h"
#include "reports/analysis/job_evidence.h"

namespace ingero::reports {

bool is_sync_op(const std::string& op) { return op.find("ynchronize") != std::string::npos; }
bool is_copy_op(const std::string& op) { return op.find("emcpy") != std::string::npos; }
bool is_launch_op(const std::string& op) { return op.find("aunchKernel") != std::string::npos; }

int worker_budget(const ChainContext& in) {
  return in.metrics.cores ? std::max(1, *in.metrics.cores - 1) : 1;
}

// A job we did not write: advice in DataLoader terms, not our workload modes.
bool users_job(const ChainContext& in) { return in.context.run.kind != contract::kind::kWorkload; }

// Workers that would let the loop stop waiting, from its waiting share: w workers keep a loop
// waiting a share W fed at 1 − W of the rate it consumes, so it needs about w / (1 − W) of them
// (w0: the main thread's own W of each step, spread over W / (1 − W) workers); at most the budget.
int workers_to_remove_waits(double waiting_share, int workers, int budget) {
  const double waiting = std::clamp(waiting_share, 0.0, 0.95);
  const double needed = workers > 0 ? workers / (1.0 - waiting) : waiting / (1.0 - waiting);
  return std::clamp(static_cast<int>(std::ceil(needed)), std::min(budget, workers + 1), budget);
}

// I/O-bound readers sleep, so more of them than cores help: up to twice the cores.
int io_worker_target(const ChainContext& in, int workers) {
  const int cores = in.metrics.cores.value_or(1);
  return std::min(2 * cores, std::max(2, 2 * workers));
}

namespace {

void suggest(std::vector<Change>& out, const std::string& knob, const std::string& value) {
  out.push_back({knob, value});
}

// The knobs that overlap or remove reads from storage.
void suggest_io_changes(std::vector<Change>& changes, const ChainContext& in, const RunConfigSummary& cfg,
                        bool workers_possible) {
  const int target = io_worker_target(in, cfg.num_workers);
  if (workers_possible && target > cfg.num_workers) suggest(changes, "num_workers", std::to_string(target));
  const int prefetch = cfg.prefetch_factor > 0 ? cfg.prefetch_factor : 2;
  if (workers_possible && cfg.num_workers > 0 && prefetch < 8)
    suggest(changes, "prefetch_factor", std::to_string(2 * prefetch));
  if (cfg.storage == "files") suggest(changes, "storage", "shards");
  if (cfg.page_cache == "cold") suggest(changes, "page_cache", "warm");
}

// The main loop or its producers busy on the CPU: a user's job gets DataLoader knobs (more workers
// toward what would keep up, a gather per batch for large batches); our workloads their modes.
void on_cpu_changes(std::vector<Change>& changes, const CausalChain& chain, const ChainContext& in,
                    const RunConfigSummary& cfg, bool uses_workers) {
  const int budget = worker_budget(in);
  const int workers = cfg.num_workers;
  const bool wait = chain.victim == contract::op::kBatchWait;
  if (chain.cause.producer && chain.cause.role == "pin") {
    if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
  } else if (users_job(in)) {
    if (!wait || !(chain.cause.producer || workers == 0)) return;
    if (cfg.batch_size && *cfg.batch_size >= kLargeBatch) suggest(changes, "sampling", "batched");
    const int target = workers_to_remove_waits(in.metrics.wait_fraction.value_or(0.5), workers, budget);
    if (target > workers) suggest(changes, "num_workers", std::to_string(target));
    if (workers > 0 && !cfg.persistent_workers) suggest(changes, "persistent_workers", "on");
  } else if (wait) {
    if (cfg.mode == "loader" && cfg.storage == "memory") suggest(changes, "mode", "loader-batched");
    if (uses_workers && workers < budget)
      suggest(changes, "num_workers", std::to_string(std::min(budget, std::max(1, 2 * workers))));
  } else if (is_copy_op(chain.victim) && !cfg.pin_memory && uses_workers) {
    suggest(changes, "pin_memory", "on");
  }
}

}  // namespace

// The knobs the advice names, relative to the analysed run's configuration; none where
// the advice is not a configuration change (or the run has no workload configuration).
// A user's job is a DataLoader (it can always take workers); our workloads say by their mode.
std::vector<Change> suggested_changes(const CausalChain& chain, const ChainContext& in) {
  std::vector<Change> changes;
  const RunConfigSummary cfg = effective_config(in.context);
  if (cfg.mode.empty()) return changes;
  const auto* mode = contract::find_mode(cfg.mode);
  const bool uses_workers = users_job(in) || (mode && mode->uses_workers);
  const int workers = cfg.num_workers;
  const int budget = worker_budget(in);
  const bool wait = chain.victim == contract::op::kBatchWait;
  switch (chain.cause.kind) {
    case CauseKind::on_cpu:
      on_cpu_changes(changes, chain, in, cfg, uses_workers);
      break;
    case CauseKind::cpu_wait:
      if (uses_workers && workers > budget) suggest(changes, "num_workers", std::to_string(budget));
      break;
    case CauseKind::pinned_alloc:
      if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
      break;
    case CauseKind::startup:
      if (!cfg.persistent_workers && workers > 0) suggest(changes, "persistent_workers", "on");
      break;
    case CauseKind::io_wait:
      if (wait) suggest_io_changes(changes, in, cfg, uses_workers);
      break;
    default:
      break;
  }
  return changes;
}


std::vector<Change> host_chain_changes(const CausalChain& chain, const ChainContext& in) {
  std::vector<Change> changes;
  if (!in.producers.empty()) return changes;  // the loop's own work: no loader knob removes it
  const RunConfigSummary cfg = effective_config(in.context);
  if (cfg.batch_size && *cfg.batch_size >= kLargeBatch) suggest(changes, "sampling", "batched");
  suggest(changes, "num_workers", std::to_string(workers_to_remove_waits(chain.share_of_victim, 0, worker_budget(in))));
  return changes;
}

}  // namespace ingero::reports
