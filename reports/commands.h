// The analysis commands behind `ingero-bench explain | compare | recommend`.
// Each reads only the trace DB (no root, no GPU) and writes text or one JSON document.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "common/result.h"

namespace ingero::reports {

struct ExplainOptions {
  std::string db;
  std::optional<int64_t> run;      // default: last run
  bool per_process = false;
  std::optional<double> since_s;   // only events in the last N seconds of the run
  bool json = false;
};
// Also replaces the run's rows in the derived table causal_chains (when the file is writable).
Status explain(const ExplainOptions& options, std::ostream& out);

struct CompareOptions {
  std::string db;
  int64_t run_a = 0;
  int64_t run_b = 0;
  bool json = false;
};
Status compare(const CompareOptions& options, std::ostream& out);

struct RecommendOptions {
  std::string db;
  std::optional<int64_t> baseline_run;  // the user's configuration; default: the first loader run
  bool json = false;
};
Status recommend(const RecommendOptions& options, std::ostream& out);

}  // namespace ingero::reports
