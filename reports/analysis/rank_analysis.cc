// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/rank_analysis.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "common/trace_contract.h"

namespace ingero::reports {
namespace {

EventSet of_threads(const EventSet& events, const std::set<int64_t>& tids) {
  EventSet out;
  for (const auto& [op, list] : events.by_op) {
    EventList& into = out.by_op[op];
    for (const Event& e : list)
      if (tids.count(e.tid)) into.push_back(e);
  }
  return out;
}

// The record a rank wrote (result.ranks[]), so that its epochs and waiting share are its own.
nlohmann::json rank_record(const nlohmann::json& result, int64_t rank) {
  if (!result.is_object() || !result.contains("ranks") || !result["ranks"].is_array()) return nullptr;
  for (const auto& entry : result["ranks"])
    if (entry.is_object() && entry.value("rank", -1) == rank) return entry;
  return nullptr;
}

// The run as one rank sees it: its threads, their counters and histograms, its record.
RunContext rank_context(const RunContext& job, int64_t rank, const std::set<int64_t>& tids,
                        const std::set<int64_t>& pids) {
  RunContext c;
  c.run = job.run;
  c.run.result = rank_record(job.run.result, rank);
  for (const ThreadRecord& t : job.threads)
    if (tids.count(t.tid)) c.threads.push_back(t);
  for (const ThreadStatsRecord& s : job.thread_stats)
    if (tids.count(s.tid)) c.thread_stats.push_back(s);
  for (const auto& [metric, per_pid] : job.histograms)
    for (const auto& [pid, slots] : per_pid)
      if (pids.count(pid)) c.histograms[metric][pid] = slots;
  c.settings = job.settings;
  c.losses = job.losses;
  c.calls = job.calls;
  return c;
}

// A rank's NCCL calls: its processes' totals per function, most total time first.
std::vector<NcclCallRow> nccl_rows(const std::vector<ProcessCallTotals>& calls, const std::set<int64_t>& pids) {
  std::map<std::string, NcclCallRow> by_op;
  std::map<std::string, int64_t> returns;
  for (const ProcessCallTotals& c : calls) {
    if (!pids.count(c.pid)) continue;
    NcclCallRow& row = by_op[c.totals.op];
    row.op = c.totals.op;
    row.calls += c.totals.count();
    row.estimated |= c.totals.estimate.has_value();
    row.errors += c.totals.errors;
    row.bytes += c.totals.bytes;
    row.total_ns += c.totals.total_ns;
    row.max_ns = std::max(row.max_ns, c.totals.max_ns);
    returns[c.totals.op] += c.totals.returns;
  }
  std::vector<NcclCallRow> rows;
  for (auto& [op, row] : by_op) {
    if (returns[op] > 0) row.mean_ns = row.total_ns / returns[op];
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const NcclCallRow& a, const NcclCallRow& b) { return a.total_ns > b.total_ns; });
  return rows;
}

NodeCores node_cores(const RunRecord& run, int ranks) {
  const RunConfigSummary config = summarize_config(run);
  NodeCores out;
  out.node = run.node;
  out.run_id = run.run_id;
  out.ranks = ranks;
  out.cores = usable_cores(run);
  out.workers_per_rank = config.num_workers;
  out.processes = ranks * (config.num_workers + 1);
  if (out.cores && ranks > 0) {
    const int rule = std::max(0, *out.cores / ranks - 1);
    if (rule != config.num_workers) out.suggested_workers = rule;
  }
  return out;
}

// The straggler is the rank waiting most for its input, when that rank is input-bound; the
// others' step time beyond its own is what they spent waiting for it.
void find_straggler(RankAnalysis& out) {
  auto most_waiting = std::max_element(out.ranks.begin(), out.ranks.end(), [](const RankRow& a, const RankRow& b) {
    return a.metrics.batch_wait.total_ns < b.metrics.batch_wait.total_ns;
  });
  const InputBound verdict = most_waiting->metrics.verdict;
  if (verdict != InputBound::highly && verdict != InputBound::moderately) return;
  out.straggler = most_waiting->rank;
  const int64_t straggler_steps = most_waiting->metrics.batch_compute.total_ns;
  for (RankRow& row : out.ranks)
    row.waits_for_straggler_ns = std::max<int64_t>(0, row.metrics.batch_compute.total_ns - straggler_steps);
}

}  // namespace

bool RankAnalysis::any_nccl() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const RankRow& r) { return !r.nccl.empty(); });
}

NodeRanks node_ranks(const RankInputs& in) {
  std::map<int64_t, std::set<int64_t>> tids_of, pids_of;
  std::map<int64_t, std::set<int64_t>> worker_pids_of;
  std::map<int64_t, int64_t> main_pid_of;
  for (const ThreadRecord& t : in.context.threads) {
    if (!t.rank) continue;
    tids_of[*t.rank].insert(t.tid);
    pids_of[*t.rank].insert(t.pid);
    if (t.role == contract::kRoleWorker) worker_pids_of[*t.rank].insert(t.pid);
    if (t.role == contract::kRoleMain) main_pid_of[*t.rank] = t.pid;
  }
  NodeRanks out;
  for (const auto& [rank, tids] : tids_of) {
    RankRow row;
    row.rank = rank;
    row.node = in.context.run.node;
    row.run_id = in.context.run.run_id;
    row.pid = main_pid_of.count(rank) ? main_pid_of[rank] : 0;
    row.worker_processes = static_cast<int>(worker_pids_of[rank].size());
    const RunContext context = rank_context(in.context, rank, tids, pids_of[rank]);
    row.metrics = compute_run_metrics(context, of_threads(in.batches, tids), in.window, 0);
    row.counters = total_counters(context.thread_stats);
    const EventSet victims = of_threads(in.victims, tids);
    const EventSet activity = of_threads(in.activity, tids);
    ChainAnalysis chains = analyze_causal_chains(
        ChainInputs{context, victims, activity, in.window, row.metrics, in.calls, in.waits, true});
    if (!chains.chains.empty()) {
      row.top_chain_basis = std::make_shared<const RankRow::ChainBasis>(
          RankRow::ChainBasis{context, in.calls, std::move(chains.producers)});
      row.top_chain = std::move(chains.chains.front());
    }
    row.nccl = nccl_rows(in.nccl_calls, pids_of[rank]);
    out.ranks.push_back(std::move(row));
  }
  out.cores = node_cores(in.context.run, static_cast<int>(out.ranks.size()));
  return out;
}

std::optional<RankAnalysis> compare_ranks(std::vector<NodeRanks> nodes, std::optional<Job> job) {
  RankAnalysis out;
  for (NodeRanks& node : nodes) {
    std::move(node.ranks.begin(), node.ranks.end(), std::back_inserter(out.ranks));
    out.nodes.push_back(std::move(node.cores));
  }
  if (out.ranks.size() < 2) return std::nullopt;
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
  find_straggler(out);
  out.job = std::move(job);
  return out;
}

}  // namespace ingero::reports
