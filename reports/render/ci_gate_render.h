// SPDX-License-Identifier: Apache-2.0
// The CI gate's report (reports/analysis/ci_gate.h) in words: each verdict's reason and the warnings, as
// JUnit XML, which CI systems show per test, and as a Markdown summary for CI pages. They only
// format what the gate returned.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/ci_gate.h"

namespace ingero::reports {

// "slower by more than 10 % beyond noise (the whole interval above 1.100): 1.250x the baseline (...)".
std::string gate_reason(const GateResult& result, const GateRule& rule);
// What to know before reading the ratios: a baseline from another kind of machine.
std::vector<std::string> gate_warnings(const GateReport& report);

std::string render_junit(const GateReport& report);     // one testcase per configuration
std::string render_markdown(const GateReport& report);  // a summary for CI pages

}  // namespace ingero::reports
