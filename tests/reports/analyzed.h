// SPDX-License-Identifier: Apache-2.0
// A test DB's run, analysed as explain analyses it, and the words the text layer gives its chains:
// shared by the analysis tests (one definition, so that reports_tests builds as one unit).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "reports/analysis/run_analysis.h"
#include "reports/text/chain_text.h"

namespace ingero::reports::testing {

inline RunAnalysis analyze_path(const std::string& path, std::optional<double> since_s = std::nullopt) {
  auto trace = TraceFile::open(path);
  EXPECT_TRUE(trace.ok()) << trace.error().message;
  auto run = (*trace)->run(std::nullopt);
  EXPECT_TRUE(run.ok());
  auto analysis = analyze_run(**trace, *run, since_s, WaitSelection::slow_or_input_bound);
  EXPECT_TRUE(analysis.ok()) << analysis.error().message;
  return std::move(analysis.value());
}

inline ChainWords words_of(const RunAnalysis& a, const CausalChain& chain) {
  return describe_chain(chain, ChainContext{a.context, a.metrics, a.calls, a.chains.producers});
}

}  // namespace ingero::reports::testing
