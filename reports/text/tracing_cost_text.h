// SPDX-License-Identifier: Apache-2.0
// The tracing cost in words, for the terminal, Markdown/HTML and MCP answers.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/tracing_cost.h"

namespace ingero::reports {

// "tracing cost ≈ 0.4 % of the main thread (1,201 probed calls at 1.15 µs each, calibrated on
// this machine); exact counts for all functions", then one line per duty-cycled function:
// "cuLaunchKernel sampled 10 % of the time in process 123 (20 windows): count ≈ 1,210,000 [1,190,000,
// 1,230,000]; a slow cuLaunchKernel in the detached 90 % is not stored: ..." (what it cannot see);
// and what the other kernel programs ran for, where they were timed, also without CUDA probes.
std::vector<std::string> tracing_cost_lines(const TracingCost& cost);

// "cudaEventRecord: 124 probed calls could not be timed ...": calls a probing window's edge cut
// (call_stats.cut_calls), counted but left out of every latency.
std::string cut_calls_text(const std::string& function, int64_t cut);

}  // namespace ingero::reports
