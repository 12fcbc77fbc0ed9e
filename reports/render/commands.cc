// SPDX-License-Identifier: Apache-2.0
#include "reports/render/commands.h"

#include "reports/render/report_json.h"
#include "reports/render/report_text.h"

namespace ingero::reports {
namespace {

// Opens the DB read-only, makes the report and prints it: the commands differ only in their report.
template <class Make>
Status print_report(const std::string& db, bool json, Make make, std::ostream& out) {
  auto trace = TraceFile::open(db);
  if (!trace) return trace.error();
  auto report = make(**trace);
  if (!report) return report.error();
  if (json)
    out << to_json(*report).dump(2) << '\n';
  else
    render_text(*report, out);
  return {};
}

}  // namespace

Status explain(const ExplainOptions& options, std::ostream& out) {
  return print_report(options.db, options.json, [&](const TraceFile& t) { return make_explain_report(t, options); }, out);
}

Status compare(const CompareOptions& options, std::ostream& out) {
  return print_report(
      options.db, options.json, [&](const TraceFile& t) { return make_compare_report(t, options.run_a, options.run_b); },
      out);
}

Status recommend(const RecommendOptions& options, std::ostream& out) {
  return print_report(options.db, options.json, [&](const TraceFile& t) { return make_recommend_report(t, options); },
                      out);
}

}  // namespace ingero::reports
