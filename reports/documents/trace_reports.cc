// SPDX-License-Identifier: Apache-2.0
#include "reports/documents/trace_reports.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/chain_text.h"
#include "reports/analysis/change_checks.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {
namespace {

Result<RunAnalysis> analyze(const TraceFile& trace, std::optional<int64_t> run_id, std::optional<double> since_s,
                            WaitSelection waits) {
  auto run = trace.run(run_id);
  if (!run) return run.error();
  return analyze_run(trace, *run, since_s, waits);
}

constexpr size_t kEvidenceLines = 4;  // the wait fraction's line and the chains', together

// The baseline run's wait fraction and its highest ranked chains; empty when it has neither.
std::optional<BaselineEvidence> chain_evidence(const TraceFile& trace, int64_t run_id) {
  auto analysis = analyze(trace, run_id, std::nullopt, WaitSelection::slow_or_input_bound);
  if (!analysis) return std::nullopt;
  const auto& m = analysis->metrics;
  BaselineEvidence evidence{run_id, m.wait_fraction, m.verdict, {}};
  const auto words = describe_chains(analysis->chains, analysis->context, analysis->metrics, analysis->calls);
  const size_t room = kEvidenceLines - (m.wait_fraction ? 1 : 0);
  for (size_t i = 0; i < words.size() && evidence.chains.size() < room; ++i)
    evidence.chains.push_back({analysis->chains.chains[i].severity, words[i].summary, words[i].root_cause});
  if (!evidence.wait_fraction && evidence.chains.empty()) return std::nullopt;
  return evidence;
}

const RunRecord* run_of(const std::vector<RunRecord>& runs, int64_t run_id) {
  auto it = std::find_if(runs.begin(), runs.end(), [&](const RunRecord& r) { return r.run_id == run_id; });
  return it == runs.end() ? nullptr : &*it;
}

// The first change the run's causal chains suggest that no run of the DB measured, with its
// cause and the command that measures it: what to try when nothing else was measured.
std::optional<UntriedChange> first_unmeasured_change(const TraceFile& trace, const RunRecord& run,
                                                     const std::vector<RunRecord>& runs) {
  auto analysis = analyze_run(trace, run, std::nullopt, WaitSelection::slow_or_input_bound);
  if (!analysis) return std::nullopt;
  check_changes(analysis->chains.chains, run, runs, trace.path());
  const auto words = describe_chains(analysis->chains, analysis->context, analysis->metrics, analysis->calls);
  for (size_t i = 0; i < words.size(); ++i)
    for (const auto& check : analysis->chains.chains[i].checks)
      if (!check.run_id && !check.command.empty())
        return UntriedChange{words[i].summary, check.change, check.command};
  return std::nullopt;
}

// A sweep stopped by its budget before any alternative: the budget that would measure one and
// verify it once, assuming an alternative's run costs no more than the baseline's.
std::optional<BudgetHint> budget_hint(const SweepRecord& sweep, const RecommendReport& r,
                                     const std::vector<RunRecord>& runs, const std::string& db) {
  double seconds = 0;
  int n = 0;
  bool traced = true;
  for (int64_t id : r.configs[r.baseline].run_ids)
    if (const RunRecord* run = run_of(runs, id); run && run->end_ns) {
      seconds += static_cast<double>(*run->end_ns - run->start_ns) / 1e9;
      traced = run->traced;
      ++n;
    }
  const bool budget_stop = std::any_of(r.configs.begin(), r.configs.end(), [](const ConfigResult& c) {
    return c.state == contract::point_state::kSkipped && c.cause == contract::point_cause::kBudget;
  });
  if (n == 0 || !budget_stop) return std::nullopt;
  const double needed = std::ceil(3 * seconds / n / 10) * 10;
  return BudgetHint{needed, seconds / n, sweep.sweep_id, traced, db};
}

// recommend on a DB that holds only traces of the user's own job: the sweep that measures it.
std::optional<std::string> job_sweep_hint(const std::vector<RunRecord>& runs, const std::string& db) {
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->kind != contract::kind::kCommand || it->command.empty()) continue;
    std::string job;
    for (const std::string& arg : it->command) job += " " + shell_quoted(arg);
    return fmt::format("ingero-bench sweep --db {} --num-workers auto --persistent-workers off,on --{}",
                       shell_quoted(db), job);
  }
  return std::nullopt;
}

Result<ConfigRun> config_run(const TraceFile& trace, RunRecord run) {
  auto context = trace.context(run);
  if (!context) return context.error();
  return ConfigRun{std::move(run), run_histogram_quantile(*context, "runq_us", 0.99)};
}

// Each rank's top cause and each node's cores advice, checked against the runs of the DB like
// the run's own chains; a rank or node of another run of the job is checked against that run.
void check_rank_changes(RankAnalysis& ranks, const std::vector<RunRecord>& runs, const std::string& db) {
  for (RankRow& row : ranks.ranks) {
    const RunRecord* run = run_of(runs, row.run_id);
    if (!row.top_chain || !run) continue;
    std::vector<CausalChain> one = {std::move(*row.top_chain)};
    check_changes(one, *run, runs, db);
    row.top_chain = std::move(one.front());
  }
  for (NodeCores& node : ranks.nodes) {
    const RunRecord* run = run_of(runs, node.run_id);
    if (!node.suggested_workers || !run) continue;
    node.suggestion_check =
        check_change(Change{"num_workers", std::to_string(*node.suggested_workers)}, *run, runs, db);
  }
}

}  // namespace

Result<ExplainReport> make_explain_report(const TraceFile& trace, const ExplainOptions& options) {
  if (options.since_s && !(*options.since_s > 0))
    return Error::bad_input(fmt::format("--since {} is not a positive number of seconds", *options.since_s),
                            "pass the length of the run's end to analyse, e.g. --since 30");
  auto analysis = analyze(trace, options.run, options.since_s, WaitSelection::slow_or_input_bound);
  if (!analysis) return analysis.error();
  if (Status s = add_job_ranks(trace, options.since_s, WaitSelection::slow_or_input_bound, *analysis); !s)
    return s.error();
  auto runs = trace.runs();
  if (!runs) return runs.error();
  check_changes(analysis->chains.chains, analysis->context.run, *runs, trace.path());
  if (analysis->ranks) check_rank_changes(*analysis->ranks, *runs, trace.path());
  return make_explain_report(*analysis, options.since_s, options.per_process);
}

Result<CompareReport> make_compare_report(const TraceFile& trace, int64_t run_a, int64_t run_b) {
  auto a = analyze(trace, run_a, std::nullopt, WaitSelection::every_wait);
  if (!a) return a.error();
  auto b = analyze(trace, run_b, std::nullopt, WaitSelection::every_wait);
  if (!b) return b.error();
  return make_compare_report(*a, *b);
}

Result<RecommendReport> make_recommend_report(const TraceFile& trace, const RecommendOptions& options) {
  auto sweep = trace.sweep(options.sweep);
  if (!sweep) return sweep.error();
  if (options.sweep && !*sweep)
    return Error::bad_input(fmt::format("sweep {} is not in '{}'", *options.sweep, trace.path()),
                            "ingero-bench runs --db FILE shows the sweep of each run");
  auto runs = trace.runs();
  if (!runs) return runs.error();
  RecommendInputs in;
  in.baseline_run = options.baseline_run;
  if (*sweep) {
    in.sweep_id = (*sweep)->sweep_id;
    if (!options.baseline_run && !(*sweep)->baseline_point.empty()) in.baseline_point = (*sweep)->baseline_point;
    auto points = trace.sweep_points((*sweep)->sweep_id);
    if (!points) return points.error();
    for (const auto& p : *points) in.points.push_back({p.point, p.config, p.state, p.reason, p.cause});
  }
  for (const auto& run : *runs) {
    // A budget's sizing run that was not kept is no measurement.
    if ((in.sweep_id && run.sweep_id != in.sweep_id) || run.sweep_phase == contract::sweep_phase::kProbe) continue;
    auto entry = config_run(trace, run);
    if (!entry) return entry.error();
    (entry->run.sweep_phase == contract::sweep_phase::kVerify ? in.verify_runs : in.runs).push_back(std::move(*entry));
  }
  auto report = recommend_configuration(in);
  if (!report) {
    if (auto hint = in.sweep_id ? std::nullopt : job_sweep_hint(*runs, trace.path()))
      return Error::bad_input("no configuration of your job has been measured yet: a trace times one "
                              "configuration, a sweep compares them",
                              "measure them with: " + *hint);
    return report.error();
  }
  if (!report->alternative_measured) {
    const RunRecord* base = report->configs[report->baseline].run_ids.empty()
                                ? nullptr
                                : run_of(*runs, report->configs[report->baseline].run_ids.front());
    if (*sweep) report->budget_hint = budget_hint(**sweep, *report, *runs, trace.path());
    if (base) report->untried_change = first_unmeasured_change(trace, *base, *runs);
  }
  for (int64_t run_id : report->configs[report->baseline].run_ids) {
    report->evidence = chain_evidence(trace, run_id);
    if (report->evidence) break;
  }
  return report;
}

}  // namespace ingero::reports
