// SPDX-License-Identifier: Apache-2.0
#include "harness/diagnosis.h"


#include "reports/render/commands.h"
#include "reports/text/summary_text.h"

namespace ingero::harness {

namespace {

void diagnose_run(const reports::TraceFile& trace, int64_t run_id, std::ostream& out) {
  auto report = reports::make_explain_report(trace, {trace.path(), run_id, false, std::nullopt, false});
  if (!report) {
    out << reports::unanalysable_run_text(run_id, report.error().message) << "\n";
    return;
  }
  out << reports::run_verdict_line(report->run, report->metrics) << "\n";
  if (report->chains.chains.empty()) return;
  const auto& top = report->chains.chains.front();
  out << "  " << reports::chain_title(top, report->chain_words.front()) << "\n";
  for (const auto& check : top.checks) out << "  " << reports::change_check_text(check) << "\n";
}

}  // namespace

void print_diagnosis(const std::string& db_path, const std::vector<int64_t>& run_ids, std::ostream& out) {
  if (run_ids.empty()) return;
  auto trace = reports::TraceFile::open(db_path);
  if (!trace) {
    out << reports::diagnosis_unavailable_text(trace.error().message) << "\n";
    return;
  }
  out << "\n" << reports::diagnosis_heading(db_path) << "\n";
  for (int64_t id : run_ids) diagnose_run(**trace, id, out);
}

}  // namespace ingero::harness
