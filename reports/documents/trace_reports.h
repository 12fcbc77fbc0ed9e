// SPDX-License-Identifier: Apache-2.0
// The reports a trace DB gives: explain, compare and recommend, each read from the DB only (no
// root, no GPU, never written) and its suggested changes checked against the DB's runs. The
// printing commands (reports/render/commands.h), the MCP tools, the report document and the main job's
// diagnosis are made from these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "reports/analysis/compare.h"
#include "reports/documents/explain.h"
#include "reports/analysis/recommend.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {
struct ExplainOptions {
  std::string db;
  std::optional<int64_t> run;      // default: last run
  bool per_process = false;
  std::optional<double> since_s;   // only the last N seconds of the run
  bool json = false;
};
// The explain report of a run, with every suggested change checked against the DB's runs.
Result<ExplainReport> make_explain_report(const TraceFile& trace, const ExplainOptions& options);

struct CompareOptions {
  std::string db;
  int64_t run_a = 0;
  int64_t run_b = 0;
  bool json = false;
};
Result<CompareReport> make_compare_report(const TraceFile& trace, int64_t run_a, int64_t run_b);

struct RecommendOptions {
  std::string db;
  std::optional<int64_t> sweep;         // default: the last sweep in the DB, else every run
  std::optional<int64_t> baseline_run;  // the user's configuration; default: the sweep's, or the first loader run
  bool json = false;
};
Result<RecommendReport> make_recommend_report(const TraceFile& trace, const RecommendOptions& options);

}  // namespace ingero::reports
