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
};

// One aligned pipe table: readable on a terminal and valid Markdown. The "x direct"
// column compares each epoch time with the `direct` run's when the sweep has one.
std::string render_results_table(const std::vector<TableRow>& rows);

}  // namespace ingero::harness
