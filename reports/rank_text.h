// SPDX-License-Identifier: Apache-2.0
// The words of a DDP job's rank analysis (reports/rank_analysis.h): how a rank is named, the
// job its runs form, the straggler, each node's cores and each rank's top cause. Shared by the
// terminal text and the Markdown/HTML report, which only lay them out.
#pragma once

#include <string>
#include <vector>

#include "reports/rank_analysis.h"

namespace ingero::reports {

// "rank 3", or "rank 3 (node-b)" when the ranks come from several nodes.
std::string rank_name(const RankAnalysis& r, const RankRow& row);

// Which runs form the job and why, then the ranks no run traced (when some are missing).
std::vector<std::string> job_sentences(const Job& job);

// The rank the others wait for and how long they waited, or why there is none.
std::string straggler_sentence(const RankAnalysis& r);

// The node's processes against its cores, then Lightning's rule when it suggests another
// worker count (empty when the node's cores are unknown).
std::vector<std::string> node_cores_sentences(const RankAnalysis& r, const NodeCores& node);

// "[HIGH] <summary>" for the rank's top chain; empty when it has none.
std::string top_cause_text(const RankRow& row);

}  // namespace ingero::reports
