// SPDX-License-Identifier: Apache-2.0
#include "reports/ci_gate_render.h"

#include <fmt/format.h>

#include "reports/format.h"
#include "reports/render/svg.h"

namespace ingero::reports {

std::string render_junit(const GateReport& report) {
  int failures = 0;
  for (const auto& r : report.results) failures += fails_gate(r.verdict);
  std::string xml = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
      render::escape_xml("ingero-bench ci: " + report.suite), report.results.size(), failures);
  for (const auto& w : report.warnings) xml += fmt::format("  <!-- warning: {} -->\n", render::escape_xml(w));
  for (const auto& r : report.results) {
    double seconds = 0;
    for (double e : r.current) seconds += e;
    xml += fmt::format("  <testcase classname=\"ingero-bench.ci.{}\" name=\"{}\" time=\"{:.3f}\">", render::escape_xml(report.suite),
                       render::escape_xml(r.label), seconds);
    if (fails_gate(r.verdict))
      xml += fmt::format("\n    <failure message=\"{}\">{}</failure>\n  ",
                         render::escape_xml(r.verdict == GateVerdict::regression
                                        ? fmt::format("{:.3f}x slower than the baseline", r.slowdown->ratio)
                                        : std::string("not measured")),
                         render::escape_xml(r.reason));
    else
      xml += fmt::format("\n    <system-out>{}: {}</system-out>\n  ", gate_verdict_name(r.verdict), render::escape_xml(r.reason));
    xml += "</testcase>\n";
  }
  return xml + "</testsuite>\n";
}

std::string render_markdown(const GateReport& report) {
  std::string md = fmt::format("# ingero-bench ci: {}\n\n**{}**: a configuration regresses when it is more than "
                               "{:g} % slower beyond noise: the {:g} % interval of the ratio lies wholly above "
                               "{:.3g}.\n\n",
                               report.suite, report.failed() ? "FAILED" : "passed",
                               report.rule.threshold * 100, report.rule.confidence * 100, 1 + report.rule.threshold);
  for (const auto& w : report.warnings) md += "> warning: " + w + "\n\n";
  md += "| configuration | baseline median | this run | ratio | interval | Mann-Whitney p | verdict |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& r : report.results) {
    const auto cell = [](const std::vector<double>& v) { return v.empty() ? std::string("-") : format_seconds(median(v)); };
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.label, cell(r.baseline), cell(r.current),
                      r.slowdown ? fmt::format("{:.3f}x", r.slowdown->ratio) : "-",
                      r.slowdown ? fmt::format("{:.3f}-{:.3f}", r.slowdown->interval.low, r.slowdown->interval.high)
                                 : "-",
                      r.test ? fmt::format("{:.3g}", r.test->p_value) : "-", gate_verdict_name(r.verdict));
  }
  return md;
}

}  // namespace ingero::reports
