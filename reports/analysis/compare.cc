// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "common/trace_contract.h"

namespace ingero::reports {
namespace {

std::optional<double> result_number(const RunAnalysis& r, const char* object, const char* key) {
  const auto& result = r.context.run.result;
  if (!result.is_object() || !result.contains(object) || !result[object].is_object()) return std::nullopt;
  const auto& inner = result[object];
  if (!inner.contains(key) || !inner[key].is_number()) return std::nullopt;
  return inner[key].get<double>();
}

// Time split of one run on a common basis: per measured epoch when both runs have
// result records, else over the whole run from the batch events.
struct TimeSplit {
  double total_s = 0;
  double wait_s = 0;
  double compute_s = 0;
};

std::optional<TimeSplit> per_epoch_split(const RunAnalysis& r) {
  const auto& m = r.metrics;
  auto wait = result_number(r, "wait", "total_s");
  auto compute = result_number(r, "compute", "total_s");
  const double epochs = static_cast<double>(m.epoch_seconds.size());
  if (!m.epoch_median_s || !wait || !compute || epochs <= 0) return std::nullopt;
  return TimeSplit{*m.epoch_median_s, *wait / epochs, *compute / epochs};
}

TimeSplit whole_run_split(const RunAnalysis& r) {
  return TimeSplit{r.metrics.window_s, static_cast<double>(r.metrics.batch_wait.total_ns) / 1e9,
                   static_cast<double>(r.metrics.batch_compute.total_ns) / 1e9};
}

// One cause's share of a run's waiting time, with whether that run had producer threads (which
// its name depends on).
struct WaitCauseShare {
  Cause cause;
  double share = 0;
  bool run_has_producers = false;
};

// Shares of the waiting time per cause, by cause code, from the chain analysis of every wait.
std::map<std::string, WaitCauseShare> wait_cause_shares(const RunAnalysis& r) {
  std::map<std::string, WaitCauseShare> shares;
  for (const auto& victim : r.chains.victims) {
    if (victim.op != contract::op::kBatchWait) continue;
    for (const auto& cause : victim.causes)
      shares[cause.cause.code()] = {cause.cause, cause.share, !r.chains.producers.empty()};
  }
  return shares;
}

ComponentRow component(ComponentKind kind, double a_s, double b_s) {
  ComponentRow row;
  row.kind = kind;
  row.a_s = a_s;
  row.b_s = b_s;
  return row;
}

// The waiting time per cause, largest change first; a cause of both runs is named as run b names it.
std::vector<ComponentRow> wait_parts(const RunAnalysis& a, const RunAnalysis& b, const TimeSplit& sa,
                                     const TimeSplit& sb) {
  const auto causes_a = wait_cause_shares(a);
  const auto causes_b = wait_cause_shares(b);
  auto named = causes_b;
  named.insert(causes_a.begin(), causes_a.end());  // insert keeps b's entry where both have the cause
  std::vector<ComponentRow> parts;
  for (const auto& [code, entry] : named) {
    auto ia = causes_a.find(code);
    auto ib = causes_b.find(code);
    ComponentRow row = component(ComponentKind::wait_cause, ia == causes_a.end() ? 0 : ia->second.share * sa.wait_s,
                                 ib == causes_b.end() ? 0 : ib->second.share * sb.wait_s);
    row.cause = entry.cause;
    row.run_has_producers = entry.run_has_producers;
    parts.push_back(row);
  }
  std::sort(parts.begin(), parts.end(), [](const ComponentRow& x, const ComponentRow& y) {
    return std::fabs(x.delta_s()) > std::fabs(y.delta_s());
  });
  return parts;
}

std::vector<ComponentRow> components(const RunAnalysis& a, const RunAnalysis& b, const TimeSplit& sa,
                                     const TimeSplit& sb) {
  std::vector<ComponentRow> rows = {component(ComponentKind::waiting, sa.wait_s, sb.wait_s)};
  for (const ComponentRow& part : wait_parts(a, b, sa, sb)) rows.push_back(part);
  rows.push_back(component(ComponentKind::compute, sa.compute_s, sb.compute_s));
  rows.push_back(component(ComponentKind::other, sa.total_s - sa.wait_s - sa.compute_s,
                           sb.total_s - sb.wait_s - sb.compute_s));
  const double delta = sb.total_s - sa.total_s;
  for (auto& row : rows) row.share_of_delta = delta != 0 ? row.delta_s() / delta : 0;
  return rows;
}

double process_count(const RunContext& c) {
  std::set<int64_t> pids;
  for (const auto& t : c.threads) pids.insert(t.pid);
  return static_cast<double>(pids.size());
}

std::vector<CompareRow> timing_rows(const RunMetrics& a, const RunMetrics& b) {
  return {
      {"epoch median", "s", a.epoch_median_s, b.epoch_median_s},
      {"epoch min", "s", a.epoch_min_s, b.epoch_min_s},
      {"epoch max", "s", a.epoch_max_s, b.epoch_max_s},
      {"samples/s", "samples/s", a.samples_per_s, b.samples_per_s},
      {"host→device bandwidth", "GB/s", a.h2d_gbps, b.h2d_gbps},
      {"share of time waiting for data", "share", a.wait_fraction, b.wait_fraction},
      {"batch_wait p50", "ns", static_cast<double>(a.batch_wait.p50_ns), static_cast<double>(b.batch_wait.p50_ns)},
      {"batch_wait p99", "ns", static_cast<double>(a.batch_wait.p99_ns), static_cast<double>(b.batch_wait.p99_ns)},
      {"analysed wall time", "s", a.window_s, b.window_s},
  };
}

std::vector<CompareRow> signature_rows(const RunAnalysis& a, const RunAnalysis& b) {
  const ThreadCounters totals_a = total_counters(a.context.thread_stats);
  const ThreadCounters totals_b = total_counters(b.context.thread_stats);
  auto stat = [&](const char* name, const char* unit, int64_t ThreadCounters::*field) {
    return CompareRow{name, unit, static_cast<double>(totals_a.*field), static_cast<double>(totals_b.*field)};
  };
  auto runq_p99 = [](const RunAnalysis& r) -> std::optional<double> {
    auto bounds = run_histogram_quantile(r.context, "runq_us", 0.99);
    return bounds ? std::optional<double>(bounds->upper) : std::nullopt;
  };
  std::vector<CompareRow> rows = {
      {"processes", "count", process_count(a.context), process_count(b.context)},
      stat("voluntary context switches", "count", &ThreadCounters::voluntary_switches),
      stat("involuntary context switches", "count", &ThreadCounters::involuntary_switches),
      stat("on-CPU time", "ns", &ThreadCounters::oncpu_ns),
      stat("off-CPU time", "ns", &ThreadCounters::offcpu_ns),
      stat("run-queue time", "ns", &ThreadCounters::runq_ns),
      {"run-queue p99 (bucket upper bound)", "µs", runq_p99(a), runq_p99(b)},
      stat("page allocations", "count", &ThreadCounters::page_allocs),
      stat("page allocation bytes", "bytes", &ThreadCounters::page_alloc_bytes),
      stat("page faults", "count", &ThreadCounters::page_faults),
  };
  for (const auto& ra : a.calls) {
    for (const auto& rb : b.calls) {
      if (ra.function != rb.function) continue;
      rows.push_back({ra.function + " calls", "count", static_cast<double>(ra.stats.count), static_cast<double>(rb.stats.count)});
      rows.push_back({ra.function + " p50", "ns", static_cast<double>(ra.stats.p50_ns), static_cast<double>(rb.stats.p50_ns)});
      rows.push_back({ra.function + " p99", "ns", static_cast<double>(ra.stats.p99_ns), static_cast<double>(rb.stats.p99_ns)});
    }
  }
  return rows;
}

// The components that explain the difference, largest change first.
std::vector<size_t> explained_components(const CompareReport& r) {
  if (!r.comparable()) return {};
  std::vector<size_t> ranked(r.components.size());
  std::iota(ranked.begin(), ranked.end(), size_t{0});
  std::sort(ranked.begin(), ranked.end(), [&](size_t x, size_t y) {
    return std::fabs(r.components[x].delta_s()) > std::fabs(r.components[y].delta_s());
  });
  const auto small = [&](size_t i) { return std::fabs(r.components[i].share_of_delta) < kExplainedShare; };
  ranked.erase(std::remove_if(ranked.begin(), ranked.end(), small), ranked.end());
  return ranked;
}

}  // namespace

std::optional<double> CompareRow::ratio() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return *b / *a;
}

CompareReport make_compare_report(const RunAnalysis& a, const RunAnalysis& b) {
  CompareReport report;
  report.a = run_header(a, std::nullopt);
  report.b = run_header(b, std::nullopt);
  report.timings = timing_rows(a.metrics, b.metrics);
  report.signatures = signature_rows(a, b);
  auto epoch_a = per_epoch_split(a);
  auto epoch_b = per_epoch_split(b);
  const bool per_epoch = epoch_a && epoch_b;
  const TimeSplit split_a = per_epoch ? *epoch_a : whole_run_split(a);
  const TimeSplit split_b = per_epoch ? *epoch_b : whole_run_split(b);
  report.basis = per_epoch ? CompareBasis::per_epoch : CompareBasis::whole_run;
  report.total_a_s = split_a.total_s;
  report.total_b_s = split_b.total_s;
  report.components = components(a, b, split_a, split_b);
  report.explained = explained_components(report);
  return report;
}

}  // namespace ingero::reports
