// SPDX-License-Identifier: Apache-2.0
#include "reports/render/ci_gate_render.h"

#include <fmt/format.h>

#include "reports/text/format.h"
#include "reports/render/svg.h"

namespace ingero::reports {
namespace {

// The numbers behind a measured verdict.
std::string gate_numbers(const GateResult& r, const GateRule& rule) {
  const Interval& in = r.slowdown->interval;
  return fmt::format("{:.3f}x the baseline ({} vs {}), {:g} % interval {:.3f}-{:.3f}, Mann-Whitney p = {:.3g}",
                     r.slowdown->ratio, format_seconds(median(r.current)), format_seconds(median(r.baseline)),
                     rule.confidence * 100, in.low, in.high, r.test->p_value);
}

}  // namespace

std::string gate_reason(const GateResult& r, const GateRule& rule) {
  switch (r.verdict) {
    case GateVerdict::missing: return "no completed repeat in this run";
    case GateVerdict::new_config:
      return fmt::format("no baseline yet; median {} over {} repeats", format_seconds(median(r.current)),
                         r.current.size());
    case GateVerdict::regression:
      return fmt::format("slower by more than {:g} % beyond noise (the whole interval above {:.3f}): {}",
                         rule.threshold * 100, 1 + rule.threshold, gate_numbers(r, rule));
    case GateVerdict::improvement:
      return fmt::format("faster by more than {:g} % beyond noise (the whole interval below {:.3f}): {}",
                         rule.threshold * 100, 1 / (1 + rule.threshold), gate_numbers(r, rule));
    case GateVerdict::unchanged: break;
  }
  return fmt::format("within the {:g} % threshold or the noise (a regression needs the whole interval above {:.3f}): {}",
                     rule.threshold * 100, 1 + rule.threshold, gate_numbers(r, rule));
}

std::vector<std::string> gate_warnings(const GateReport& report) {
  if (!report.other_machine) return {};
  return {fmt::format("the baseline was measured on another kind of machine ({}); this run is on {}: ratios compare "
                      "the machines as much as the builds",
                      report.other_machine->baseline, report.other_machine->current)};
}

std::string render_junit(const GateReport& report) {
  int failures = 0;
  for (const auto& r : report.results) failures += fails_gate(r.verdict);
  std::string xml = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
      render::escape_xml("ingero-bench ci: " + report.suite), report.results.size(), failures);
  for (const auto& w : gate_warnings(report)) xml += fmt::format("  <!-- warning: {} -->\n", render::escape_xml(w));
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
                         render::escape_xml(gate_reason(r, report.rule)));
    else
      xml += fmt::format("\n    <system-out>{}: {}</system-out>\n  ", gate_verdict_name(r.verdict),
                         render::escape_xml(gate_reason(r, report.rule)));
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
  for (const auto& w : gate_warnings(report)) md += "> warning: " + w + "\n\n";
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
