// SPDX-License-Identifier: Apache-2.0
// The words about a run's data, made from its analysis (reports/analysis/run_analysis.h): the notes on
// what the numbers rest on, and the machine it ran on. Shared by the terminal, Markdown/HTML,
// JSON and MCP answers.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/run_analysis.h"

namespace ingero::reports {

// What the reader should know about the data behind the numbers: losses, recording
// thresholds, what a window leaves out, how the file was read.
std::vector<std::string> data_notes(const RunAnalysis& analysis);

// "AMD EPYC, 2 cores, 23.4 GB, kernel 6.1, GPU none", from a run's machine record.
std::string machine_text(const nlohmann::json& machine);

}  // namespace ingero::reports
