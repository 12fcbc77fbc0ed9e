// SPDX-License-Identifier: Apache-2.0
// The words of a comparison, made from its numbers (reports/analysis/compare.h): the basis of the time
// split, each component's name and the explanation of the difference. The one text layer for
// compare: the terminal, JSON and MCP answers take theirs from here.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/compare.h"

namespace ingero::reports {

// "per measured epoch (median epoch; wait and compute averaged per epoch)" | "whole run (...)".
std::string basis_text(CompareBasis basis);
// "waiting for data", a cause's label ("workers on CPU (per-sample fetch and collate)"), "compute
// (copy to device + model)", "other (loop overhead, epoch set-up)".
std::string component_name(const ComponentRow& row);
// "run 2 takes 100× as long as run 1 (...)", then the components that explain the difference.
std::vector<std::string> explanation_lines(const CompareReport& report);

}  // namespace ingero::reports
