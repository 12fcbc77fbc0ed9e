// SPDX-License-Identifier: Apache-2.0
#include "reports/text/rank_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "reports/text/format.h"

namespace ingero::reports {

std::string rank_name(const RankAnalysis& r, const RankRow& row) {
  return r.job ? fmt::format("rank {} ({})", row.rank, row.node) : fmt::format("rank {}", row.rank);
}

std::vector<std::string> job_sentences(const Job& job) {
  std::vector<std::string> lines = {fmt::format(
      "job: {}: one job, as no rank is in two runs, {} and all were traced during the same {} (wall clock)",
      job_text(job), job.world_size ? "their world sizes agree" : "no run recorded its world size",
      format_seconds(job.overlap_end_unix - job.overlap_start_unix))};
  if (!job.missing_ranks.empty())
    lines.push_back(fmt::format("ranks {} of the job are in no run of this file: merge their nodes' DBs too",
                                ranks_text(job.missing_ranks)));
  return lines;
}

std::string straggler_sentence(const RankAnalysis& r) {
  const auto slow = std::find_if(r.ranks.begin(), r.ranks.end(),
                                 [&](const RankRow& row) { return r.straggler && row.rank == *r.straggler; });
  if (slow == r.ranks.end())
    return fmt::format("no straggler: no rank waited for its input for {:g} % of its time or more",
                       kModeratelyInputBoundShare * 100);
  int64_t others_wait = 0;
  for (const RankRow& row : r.ranks) others_wait = std::max(others_wait, row.waits_for_straggler_ns);
  const auto ns = [](int64_t v) { return format_duration_ns(static_cast<double>(v)); };
  return fmt::format(
      "straggler: {} waited {} for its input ({} of its time); the other ranks spent up to {} more in their steps "
      "than it did, the time they waited for rank {} in the gradient all-reduce (an upper bound)",
      rank_name(r, *slow), ns(slow->metrics.batch_wait.total_ns),
      slow->metrics.wait_fraction ? format_percent(*slow->metrics.wait_fraction) : "—", ns(others_wait), slow->rank);
}

std::vector<std::string> node_cores_sentences(const RankAnalysis& r, const NodeCores& n) {
  if (!n.cores) return {};
  const bool over = n.processes > *n.cores;
  std::vector<std::string> lines = {fmt::format(
      "cores{}: {} ranks × ({} workers + 1) = {} processes on {} cores{}",
      r.job ? fmt::format(" on {} (run {})", n.node, n.run_id) : "", n.ranks, n.workers_per_rank, n.processes,
      *n.cores, over ? ": more processes than cores, so ranks and workers take CPU time from each other" : "")};
  if (n.suggested_workers)
    lines.push_back(fmt::format(
        "cores // ranks − 1 = {} workers per rank (Lightning's rule of thumb; a starting point, not a measurement)",
        *n.suggested_workers));
  return lines;
}

std::optional<ChainWords> rank_chain_words(const RankRow& row) {
  if (!row.top_chain || !row.top_chain_basis) return std::nullopt;
  const RankRow::ChainBasis& basis = *row.top_chain_basis;
  return describe_chain(*row.top_chain, ChainContext{basis.context, row.metrics, basis.calls, basis.producers});
}

std::string top_cause_text(const RankRow& row) {
  const auto words = rank_chain_words(row);
  return words ? fmt::format("[{}] {}", severity_name(row.top_chain->severity), words->summary) : "";
}

std::string ranks_text(const std::vector<int64_t>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += fmt::format("{}{}", text.empty() ? "" : ", ", ranks[i]);
    if (j > i) text += fmt::format("-{}", ranks[j]);
    i = j + 1;
  }
  return text;
}

std::string job_text(const Job& job) {
  std::string runs;
  for (size_t i = 0; i < job.members.size(); ++i) {
    const JobMember& m = job.members[i];
    const char* joint = i == 0 ? "" : i + 1 == job.members.size() ? " and " : ", ";
    runs += fmt::format("{}{} ({}, rank{} {})", joint, m.run_id, m.node.empty() ? "node unknown" : m.node,
                        m.ranks.size() == 1 ? "" : "s", ranks_text(m.ranks));
  }
  return fmt::format("runs {}, world size {}", runs,
                     job.world_size ? std::to_string(*job.world_size) : std::string("unknown"));
}

}  // namespace ingero::reports
