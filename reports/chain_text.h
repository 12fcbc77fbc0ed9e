// SPDX-License-Identifier: Apache-2.0
// The words of a causal chain: cause labels, the timeline, the root cause and what
// to change. Kept apart from the attribution so the numbers and the prose evolve
// separately.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/causal_chains.h"
#include "reports/format.h"
#include "reports/run_metrics.h"

namespace ingero::reports {

std::string cause_label(const Cause& cause, const std::string& victim_op, bool victim_is_wait,
                        bool run_has_producers);

struct ChainTextContext {
  const RunContext& context;
  const RunMetrics& metrics;
  const std::vector<CallLatencyRow>& calls;
  std::map<std::string, int> producers;  // producer threads per role
};

// Fills timeline, summary, root_cause and recommendation from the chain's numbers.
void describe_chain(CausalChain& chain, const ChainTextContext& text);
// The same for a host-bound job's chain (host_bound_chain).
void describe_host_chain(CausalChain& chain, const ChainTextContext& text);

}  // namespace ingero::reports
