// SPDX-License-Identifier: Apache-2.0
// The words of a causal chain: its cause's label, the timeline, the root cause and what to
// change, made from the chain's numbers (reports/analysis/causal_chains.h) when a report is rendered.
// The one text layer for chains: terminal, Markdown/HTML, JSON and MCP answers all take theirs
// from here.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/chain_changes.h"
#include "reports/text/format.h"
#include "reports/analysis/run_metrics.h"

namespace ingero::reports {

struct ChainWords {
  std::string cause_label;
  std::vector<std::string> timeline;  // [SYSTEM] / [GPU] / [HOST] / [CUDA] or [LOADER] / [IO] / [CAUSE]
  std::string summary;
  std::string root_cause;
  std::string recommendation;
};

std::string cause_label(const Cause& cause, const std::string& victim_op, bool victim_is_wait,
                        bool run_has_producers);
// The label of one cause of a victim's slow intervals (VictimSummary::causes).
std::string cause_share_label(const CauseShare& share, const std::string& victim_op, const ChainAnalysis& analysis);

// Which intervals of an op were taken: "calls ≥ 25 ms (the largest of p99 = ..., 10 × p50 = ..., 1 ms)",
// "every batch wait (the run is HIGHLY input-bound)", "waits in the tail: calls ≥ ...".
std::string selection_text(const VictimSummary& victim, const ChainThresholds& limits);

// One sentence for a suggested change and what the DB says of it: the run that measured it
// (with both epoch medians when known), or the command that measures it.
std::string change_check_text(const ChangeCheck& check);

// A chain's words: a slow interval's chain, or a host-bound job's (host_bound_chain).
ChainWords describe_chain(const CausalChain& chain, const ChainContext& context);
// Every chain of an analysis, in its order.
std::vector<ChainWords> describe_chains(const ChainAnalysis& analysis, const RunContext& context,
                                        const RunMetrics& metrics, const std::vector<CallLatencyRow>& calls);

}  // namespace ingero::reports
