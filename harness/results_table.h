// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/result.h"

namespace ingero::harness {

struct TableRow {
  int64_t run_id = 0;
  workloads::ResultSummary summary;
  std::string failure;  // why there is no result (worker died, skipped, ...)
  std::string sweep;    // "sweep 3" / "sweep 3 verify" for runs of a sweep
  std::string node;     // the machine that recorded it (shown when a DB holds several: merge)
  std::string job;      // the distributed job it is part of with other nodes' runs (reports/analysis/jobs.h)
};

// A row from what a run left: its status, error and record (null when it wrote none).
TableRow table_row(int64_t run_id, const std::string& label, const std::string& status, const std::string& error,
                   const nlohmann::json& record, bool traced);

// One aligned pipe table: readable on a terminal and valid Markdown. The "x direct"
// column compares each epoch time with the `direct` run's when the sweep has one.
std::string render_results_table(const std::vector<TableRow>& rows);

}  // namespace ingero::harness
