// SPDX-License-Identifier: Apache-2.0
// ingero-bench ci: runs a suite of configurations, interleaved, and gates them against a
// baseline with reports/analysis/ci_gate.h; writes JUnit XML and a Markdown summary for CI pages.
#pragma once

#include "common/result.h"
#include "harness/cli.h"

namespace ingero::harness {

// Exit code: 0 no regression (or baseline updated), 1 a regression, 2 bad input.
Result<int> run_ci_command(const CiFlags& flags);

}  // namespace ingero::harness
