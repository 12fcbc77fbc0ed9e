// SPDX-License-Identifier: Apache-2.0
// The CI gate's report (reports/ci_gate.h) as JUnit XML, which CI systems show per test, and as a
// Markdown summary for CI pages. They only format what the gate returned.
#pragma once

#include <string>

#include "reports/ci_gate.h"

namespace ingero::reports {

std::string render_junit(const GateReport& report);     // one testcase per configuration
std::string render_markdown(const GateReport& report);  // a summary for CI pages

}  // namespace ingero::reports
