// SPDX-License-Identifier: Apache-2.0
#include "reports/run_analysis.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/format.h"

namespace ingero::reports {
namespace {

std::string json_text(const nlohmann::json& object, const char* key, const char* fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

void merge_into(EventSet& target, EventSet&& source) {
  for (auto& [op, list] : source.by_op) {
    EventList& into = target.by_op[op];
    into.insert(into.end(), list.begin(), list.end());
  }
}

// The slow calls of every call op (each at its own threshold), every batch wait in the
// window, and the forks.
Result<EventSet> read_victims(const TraceFile& trace, int64_t run_id, const TimeWindow& window,
                              const std::vector<CallLatencyRow>& calls, const ChainThresholds& limits) {
  EventSet victims;
  for (const CallLatencyRow& row : calls) {
    auto slow = trace.events(run_id, {{row.function}, window.start_ns, window.end_ns, {},
                                      slow_threshold(row.stats, limits)});
    if (!slow) return slow.error();
    merge_into(victims, std::move(*slow));
  }
  auto rest = trace.events(run_id, {{"batch_wait", "fork"}, window.start_ns, window.end_ns, {}, std::nullopt});
  if (!rest) return rest.error();
  merge_into(victims, std::move(*rest));
  return victims;
}

// The activity of the threads a chain analysis looks at (the victims' and the producers'),
// over the stretch of time the victims cover.
Result<EventSet> read_activity(const TraceFile& trace, const RunContext& context, const EventSet& victims) {
  std::set<int64_t> tids;
  int64_t from = INT64_MAX, until = INT64_MIN;
  bool any_wait = false;
  for (const auto& [op, list] : victims.by_op) {
    if (op == "fork") continue;
    for (const Event& e : list) {
      tids.insert(e.tid);
      from = std::min(from, e.ts_ns);
      until = std::max(until, e.end_ns());
      any_wait |= op == "batch_wait";
    }
  }
  if (tids.empty()) return EventSet{};
  if (any_wait)
    for (const ThreadRecord& t : context.threads)
      if (t.role == contract::kRoleWorker || t.role == contract::kRolePin) tids.insert(t.tid);
  return trace.events(context.run.run_id,
                      {activity_ops(), from, until, std::vector<int64_t>(tids.begin(), tids.end()), std::nullopt});
}

// The NCCL call totals per process of a run whose threads carry ranks (none otherwise).
Result<std::vector<ProcessCallTotals>> ranks_nccl_calls(const TraceFile& trace, const RunContext& context) {
  const bool ranked = std::any_of(context.threads.begin(), context.threads.end(),
                                  [](const ThreadRecord& t) { return t.rank.has_value(); });
  if (!ranked) return std::vector<ProcessCallTotals>{};
  return trace.process_calls(context.run.run_id, contract::category::kNccl);
}

}  // namespace

Result<RunAnalysis> analyze_run(const TraceFile& trace, const RunRecord& run, std::optional<double> since_s,
                                WaitSelection waits) {
  auto context = trace.context(run);
  if (!context) return context.error();
  RunAnalysis a;
  a.context = std::move(*context);
  a.file_notes = trace.notes();
  std::optional<int64_t> last_end;
  if (!run.end_ns) {
    auto end = trace.last_event_end(run.run_id);
    if (!end) return end.error();
    last_end = *end;
  }
  a.window = analysis_window(run, last_end, since_s);
  const std::optional<int64_t> from = a.window.start_ns, until = a.window.end_ns;

  auto counts = trace.count_events(run.run_id, from, until);
  if (!counts) return counts.error();
  a.event_counts = *counts;
  int64_t in_window = 0;
  for (const OpCount& c : *counts) in_window += c.count;
  auto batches = trace.events(run.run_id, {{"batch_wait", "batch_compute"}, from, until, {}, std::nullopt});
  if (!batches) return batches.error();
  a.metrics = compute_run_metrics(a.context, *batches, a.window, in_window);

  std::map<std::string, std::vector<int64_t>> durations;
  for (const std::string& op : fully_stored_calls(a.context)) {
    auto values = trace.durations(run.run_id, op, from, until);
    if (!values) return values.error();
    durations[op] = std::move(*values);
  }
  a.calls = call_latency_table(a.context, durations, a.window.whole_run);

  const ChainThresholds limits;
  auto victims = read_victims(trace, run.run_id, a.window, a.calls, limits);
  if (!victims) return victims.error();
  auto activity = read_activity(trace, a.context, *victims);
  if (!activity) return activity.error();
  a.chains = analyze_causal_chains(ChainInputs{a.context, *victims, *activity, a.window, a.metrics, a.calls, waits,
                                               true});
  auto nccl = ranks_nccl_calls(trace, a.context);
  if (!nccl) return nccl.error();
  a.own_ranks = node_ranks(RankInputs{a.context, *batches, *victims, *activity, a.window, a.calls, *nccl, waits});
  a.ranks = compare_ranks({a.own_ranks}, std::nullopt);
  return a;
}

Status add_job_ranks(const TraceFile& trace, std::optional<double> since_s, WaitSelection waits, RunAnalysis& a) {
  if (a.own_ranks.ranks.empty()) return {};
  auto jobs = find_jobs(trace);
  if (!jobs) return jobs.error();
  std::optional<Job> job = job_of(*jobs, a.context.run.run_id);
  if (!job) return {};
  std::vector<NodeRanks> nodes = {a.own_ranks};
  for (const JobMember& member : job->members) {
    if (member.run_id == a.context.run.run_id) continue;
    auto run = trace.run(member.run_id);
    if (!run) return run.error();
    auto other = analyze_run(trace, *run, since_s, waits);
    if (!other) return other.error();
    nodes.push_back(std::move(other->own_ranks));
  }
  a.ranks = compare_ranks(std::move(nodes), std::move(job));
  return {};
}

int64_t RunAnalysis::events_of(const std::string& op) const {
  for (const OpCount& c : event_counts)
    if (c.op == op) return c.count;
  return 0;
}

std::vector<std::string> data_notes(const RunAnalysis& a) {
  std::vector<std::string> notes = a.file_notes;
  const auto& run = a.context.run;
  if (!run.traced) notes.push_back("run was not traced (--no-trace): timings only, no host or CUDA events");
  if (run.traced && !a.metrics.events_lost) {
    notes.push_back("event losses unknown: the run never recorded them (status '" + run.status +
                    "'); counts from events may be incomplete");
  } else if (a.metrics.events_lost && *a.metrics.events_lost > 0) {
    std::string sources;
    for (const auto& [source, dropped] : *a.context.losses)
      if (dropped > 0) sources += fmt::format("{}{} {}", sources.empty() ? "" : ", ", source, format_count(dropped));
    notes.push_back(fmt::format("{} events could not be delivered ({}); counts from events are lower bounds, "
                                "per-thread totals are exact",
                                format_count(*a.metrics.events_lost), sources));
  } else if (run.traced) {
    notes.push_back("no events lost (every ring buffer and the writer queue delivered everything)");
  }
  for (const char* key : {"offcpu_min_ns", "runq_min_ns"}) {
    auto it = a.context.settings.find(key);
    if (it == a.context.settings.end()) continue;
    notes.push_back(fmt::format("{} = {} ns: shorter intervals are not stored as events, so they count as "
                                "on-CPU time in the causal chains (exact totals are in the process table)",
                                key, it->second));
  }
  for (const CallLatencyRow& row : a.calls) {
    if (row.exact) continue;
    notes.push_back(fmt::format("{}: {} calls counted exactly in the kernel; its percentiles are log2 bucket upper "
                                "bounds over the whole run (only calls of at least {} ns were stored one by one)",
                                row.function, format_count(row.calls),
                                a.context.settings.count("call_stream_min_ns")
                                    ? a.context.settings.at("call_stream_min_ns")
                                    : std::string("?")));
  }
  const bool has_workers = std::any_of(a.context.threads.begin(), a.context.threads.end(),
                                       [](const ThreadRecord& t) { return t.role == contract::kRoleWorker; });
  if (has_workers && a.events_of("worker_start") == 0)
    notes.push_back("worker start-up (fork to ready) was not measured in this run: no chain blames it; the "
                    "workers' first batches count as their per-sample work");
  if (!a.window.whole_run)
    notes.push_back(fmt::format("window: last {} of the run; the process table, CPU share and call counts cover the "
                                "whole run (kernel totals are per run)",
                                format_seconds(static_cast<double>(a.window.length_ns()) / 1e9)));
  if (run.status != contract::status::kOk)
    notes.push_back(fmt::format("run status is '{}'{}", run.status, run.error.empty() ? "" : ": " + run.error));
  return notes;
}

std::string machine_text(const RunRecord& run) {
  const auto& m = run.machine;
  std::string memory = "?";
  if (m.is_object() && m.contains("memory_bytes") && m["memory_bytes"].is_number())
    memory = format_bytes(m["memory_bytes"].get<double>());
  return fmt::format("{}, {} cores, {} memory, kernel {}, GPU {}, torch {}", json_text(m, "cpu_model", "?"),
                     json_text(m, "cpu_count", "?"), memory, json_text(m, "kernel", "?"), json_text(m, "gpu", "none"),
                     json_text(m, "torch_version", "?"));
}

}  // namespace ingero::reports
