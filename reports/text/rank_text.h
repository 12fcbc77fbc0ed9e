// SPDX-License-Identifier: Apache-2.0
// The words of a DDP job's rank analysis (reports/analysis/rank_analysis.h): how a rank is named, the runs
// and ranks of a job (reports/analysis/jobs.h), the straggler, each node's cores and each rank's top cause.
// Shared by the terminal text, the Markdown/HTML report and `runs`, which only lay them out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/rank_analysis.h"
#include "reports/text/chain_text.h"

namespace ingero::reports {

// "rank 3", or "rank 3 (node-b)" when the ranks come from several nodes.
std::string rank_name(const RankAnalysis& r, const RankRow& row);

// "0-3, 6"
std::string ranks_text(const std::vector<int64_t>& ranks);
// "runs 1 (node-a, ranks 0-1) and 2 (node-b, ranks 2-3), world size 4"
std::string job_text(const Job& job);

// Which runs form the job and why, then the ranks no run traced (when some are missing).
std::vector<std::string> job_sentences(const Job& job);

// The rank the others wait for and how long they waited, or why there is none.
std::string straggler_sentence(const RankAnalysis& r);

// The node's processes against its cores, then Lightning's rule when it suggests another
// worker count (empty when the node's cores are unknown).
std::vector<std::string> node_cores_sentences(const RankAnalysis& r, const NodeCores& node);

// The words of the rank's top chain, from its own view of the run; empty when it has none.
std::optional<ChainWords> rank_chain_words(const RankRow& row);

// "[HIGH] <summary>" for the rank's top chain; empty when it has none.
std::string top_cause_text(const RankRow& row);

}  // namespace ingero::reports
