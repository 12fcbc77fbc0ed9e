// SPDX-License-Identifier: Apache-2.0
#include "harness/diagnosis.h"

#include <fmt/format.h>

#include "reports/commands.h"
#include "reports/format.h"

namespace ingero::harness {

namespace {

std::string check_line(const reports::ChangeCheck& check) {
  const std::string change = fmt::format("{}={}", check.change.knob, check.change.value);
  if (check.run_id && check.this_median_s && check.other_median_s)
    return fmt::format("{}: measured by run {} ({} vs {} per epoch)", change, *check.run_id,
                       reports::format_seconds(*check.other_median_s), reports::format_seconds(*check.this_median_s));
  return fmt::format("{}: unmeasured; measure it with: {}", change, check.command);
}

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
  for (const auto& check : top.checks) out << "  " << check_line(check) << "\n";
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
