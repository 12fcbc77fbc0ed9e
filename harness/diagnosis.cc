// SPDX-License-Identifier: Apache-2.0
#include "harness/diagnosis.h"

#include <fmt/format.h>

#include "reports/render/commands.h"
#include "reports/text/format.h"

namespace ingero::harness {

namespace {

void diagnose_run(const reports::TraceFile& trace, int64_t run_id, std::ostream& out) {
  auto report = reports::make_explain_report(trace, {trace.path(), run_id, false, std::nullopt, false});
  if (!report) {
    out << fmt::format("run {}: cannot be analysed: {}\n", run_id, report.error().message);
    return;
  }
  out << fmt::format("run {} ({}): {}", run_id, report->run.label,
                     reports::input_bound_name(report->metrics.verdict));
  if (report->metrics.wait_fraction)
    out << fmt::format(", {:.0f}% of the time waiting for batches", *report->metrics.wait_fraction * 100);
  out << "\n";
  if (report->chains.chains.empty()) return;
  const auto& top = report->chains.chains.front();
  out << fmt::format("  [{}] {}\n", reports::severity_name(top.severity), report->chain_words.front().summary);
  for (const auto& check : top.checks) out << "  " << reports::change_check_text(check) << "\n";
}

}  // namespace

void print_diagnosis(const std::string& db_path, const std::vector<int64_t>& run_ids, std::ostream& out) {
  if (run_ids.empty()) return;
  auto trace = reports::TraceFile::open(db_path);
  if (!trace) {
    out << "diagnosis unavailable: " << trace.error().message << "\n";
    return;
  }
  out << "\ndiagnosis (details: ingero-bench explain --db " << db_path << " --run ID):\n";
  for (int64_t id : run_ids) diagnose_run(**trace, id, out);
}

}  // namespace ingero::harness
