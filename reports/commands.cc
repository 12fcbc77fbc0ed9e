#include "reports/commands.h"

#include <fmt/format.h>

#include "reports/chain_store.h"
#include "reports/compare.h"
#include "reports/explain.h"
#include "reports/recommend.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "reports/trace_data.h"

namespace ingero::reports {
namespace {

template <class Report>
void render(const Report& report, bool json, std::ostream& out) {
  if (json) {
    out << to_json(report).dump(2) << '\n';
  } else {
    render_text(report, out);
  }
}

Result<RunAnalysis> analyze(const TraceFile& trace, std::optional<int64_t> run_id,
                            std::optional<double> since_s, WaitSelection waits) {
  auto run = trace.run(run_id);
  if (!run) return run.error();
  return analyze_run(trace, *run, since_s, waits);
}

std::vector<std::string> chain_evidence(const TraceFile& trace, int64_t run_id) {
  auto analysis = analyze(trace, run_id, std::nullopt, WaitSelection::slow_or_input_bound);
  if (!analysis) return {};
  std::vector<std::string> lines;
  const auto& m = analysis->metrics;
  if (m.wait_fraction) {
    lines.push_back(fmt::format("run {} waited for data {} of the time: {}", run_id,
                                fmt::format("{:.1f} %", *m.wait_fraction * 100), input_bound_name(m.verdict)));
  }
  for (const auto& chain : analysis->chains.chains) {
    if (lines.size() >= 4) break;
    lines.push_back(fmt::format("[{}] {} — {}", chain.severity, chain.summary, chain.root_cause));
  }
  return lines;
}

}  // namespace

Status explain(const ExplainOptions& options, std::ostream& out) {
  if (options.since_s && *options.since_s <= 0) {
    return Error::bad_input(fmt::format("--since {} is not a positive number of seconds", *options.since_s),
                            "pass the length of the run's final stretch to analyse, e.g. --since 10");
  }
  auto trace = TraceFile::open(options.db);
  if (!trace) return trace.error();
  auto analysis = analyze(**trace, options.run, options.since_s, WaitSelection::slow_or_input_bound);
  if (!analysis) return analysis.error();
  ExplainReport report = make_explain_report(*analysis, options.since_s, options.per_process);
  if (auto stored = store_chains(options.db, report.run.run_id, options.since_s, report.chains); !stored) {
    report.notes.push_back("causal chains not stored in the DB: " + stored.error().message);
  } else {
    report.notes.push_back("causal chains stored in table causal_chains");
  }
  render(report, options.json, out);
  return {};
}

Status compare(const CompareOptions& options, std::ostream& out) {
  auto trace = TraceFile::open(options.db);
  if (!trace) return trace.error();
  auto a = analyze(**trace, options.run_a, std::nullopt, WaitSelection::every_wait);
  if (!a) return a.error();
  auto b = analyze(**trace, options.run_b, std::nullopt, WaitSelection::every_wait);
  if (!b) return b.error();
  render(make_compare_report(*a, *b), options.json, out);
  return {};
}

Status recommend(const RecommendOptions& options, std::ostream& out) {
  auto trace = TraceFile::open(options.db);
  if (!trace) return trace.error();
  auto runs = (*trace)->runs();
  if (!runs) return runs.error();
  std::vector<ConfigRun> measured;
  for (auto& run : *runs) {
    auto context = (*trace)->context(run);
    if (!context) return context.error();
    measured.push_back({std::move(run), run_queue_quantile(*context, 0.99)});
  }
  auto report = recommend_configuration(measured, options.baseline_run);
  if (!report) return report.error();
  const auto& baseline = report->configs[report->baseline];
  for (int64_t run_id : baseline.run_ids) {
    report->evidence = chain_evidence(**trace, run_id);
    if (!report->evidence.empty()) break;
  }
  render(*report, options.json, out);
  return {};
}

}  // namespace ingero::reports
