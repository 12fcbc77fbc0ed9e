// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/run_analysis.h"

#include <algorithm>
#include <set>

#include "common/trace_contract.h"
#include "reports/analysis/job_evidence.h"
#include "reports/analysis/profile_causes.h"

namespace ingero::reports {
namespace {

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
  auto rest = trace.events(run_id, {{std::string(contract::op::kBatchWait), "fork"}, window.start_ns, window.end_ns, {}, std::nullopt});
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
      any_wait |= op == contract::op::kBatchWait;
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

// An attached run's row also spans the tracer's start-up and drain, when nothing was watched.
void clip_to_traced_span(const std::map<std::string, std::string>& settings, TimeWindow& window) {
  auto number = [&](std::string_view key) -> std::optional<int64_t> {
    auto it = settings.find(std::string(key));
    if (it == settings.end()) return std::nullopt;
    try {
      return std::stoll(it->second);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  const auto from = number(contract::kTracedFromSetting), until = number(contract::kTracedUntilSetting);
  if (!from || !until || *until <= *from) return;
  window.start_ns = std::max(window.start_ns, *from);
  window.end_ns = std::min(window.end_ns, *until);
  if (window.end_ns <= window.start_ns) window.end_ns = window.start_ns + 1;
}

// A traced job without batch timings of its own (attached, system-wide, or not Python): its
// batch waits estimated from the wake-ups that ended the main threads' blocked intervals.
Result<std::optional<EventList>> estimated_waits(const TraceFile& trace, RunAnalysis& a) {
  const RunRecord& run = a.context.run;
  if (a.metrics.batch_wait.count > 0 || !run.traced || run.kind == contract::kind::kWorkload) return std::optional<EventList>();
  const std::vector<int64_t> mains = main_thread_ids(a.context);
  auto wakers = a.context.settings.find(std::string(contract::kWakersSetting));
  if (mains.empty() || (wakers != a.context.settings.end() && wakers->second == "0")) return std::optional<EventList>();
  auto main_events = trace.events(
      run.run_id, {{std::string(contract::op::kOffcpuBlocked), std::string(contract::op::kOffcpuPreempted)},
                   a.window.start_ns, a.window.end_ns, mains, std::nullopt});
  if (!main_events) return main_events.error();
  WakeupTrace kernel{main_events->of(contract::op::kOffcpuBlocked), main_events->of(contract::op::kOffcpuPreempted), {},
                     {}};
  if (const std::vector<int64_t> others = handoff_thread_ids(a.context); !others.empty()) {
    auto handoffs = trace.events(
        run.run_id, {{std::string(contract::op::kOffcpuBlocked), std::string(contract::op::kRunqWait)},
                     a.window.start_ns, a.window.end_ns, others, std::nullopt});
    if (!handoffs) return handoffs.error();
    kernel.handoff_blocked = handoffs->of(contract::op::kOffcpuBlocked);
    kernel.handoff_runq = handoffs->of(contract::op::kRunqWait);
  }
  auto estimate = estimate_waits_from_wakeups(a.context, kernel, a.window);
  if (!estimate) return std::optional<EventList>();
  std::vector<int64_t> durations;
  for (const Event& e : estimate->waits) durations.push_back(e.dur_ns);
  a.metrics.batch_wait = latency_stats(durations);
  a.metrics.wakeups = estimate->parts;
  a.metrics.wait_fraction = estimate->parts.share();
  a.metrics.batch_source = BatchSource::wakeups;
  a.metrics.wait_fraction_source = batch_source_name(BatchSource::wakeups);
  return std::optional<EventList>(std::move(estimate->waits));
}

bool calls_cuda(const RunContext& context) {
  return std::any_of(context.calls.begin(), context.calls.end(), [](const CallTotals& c) {
    return contract::is_cuda_category(c.category) && c.calls > 0;
  });
}

// The host's and the GPU's side of the verdict.
// The GPU is judged over the training loop (its first batch request to its last batch's end,
// after the start-up batches): a job's imports and model set-up leave it idle for reasons of
// their own.
void add_job_evidence(const RunContext& context, const TimeWindow& window, const EventSet& batches, RunMetrics& m) {
  m.main_host_share = main_host_share(context, window);
  TimeWindow loop = window;
  if (m.batch_source == BatchSource::observer) {
    int64_t first = INT64_MAX, last = 0;
    for (std::string_view op : {contract::op::kBatchWait, contract::op::kBatchCompute})
      for (const Event& e : batches.of(op)) {
        if (!window.contains_start(e) || (e.arg == 0 && m.startup_batches > 0)) continue;
        first = std::min(first, e.ts_ns);
        last = std::max(last, e.end_ns());
      }
    if (last > first) loop = {first, std::min(last, window.end_ns), false};
    m.gpu_over_loop = last > first;
  }
  if (auto gpu = gpu_busy(context, loop)) {
    m.gpu_util = gpu->gpu_util;
    m.sm_active = gpu->sm_active;
    m.gpus_sampled = gpu->gpus;
  }
  m.verdict = classify_run(m.wait_fraction, m.main_host_share, m.gpu_util, calls_cuda(context));
}

// A failed run gets no verdict: what it timed ended in a crash. Nor does a run interrupted (or
// abandoned) before it measured anything: a workload whose record holds no epoch (its warm-up's
// waits are not a measurement), or a run with nothing to judge at all. An interrupted trace that
// timed its job's waits keeps its verdict.
void withhold_verdict(const RunRecord& run, RunMetrics& m) {
  const bool failed = run.status == contract::status::kFailed;
  const bool workload_record = run.result.is_object() && run.result.contains("epoch_seconds");
  const bool cut_short = (run.status == contract::status::kInterrupted || run.status == contract::status::kAbandoned) &&
                         m.epoch_seconds.empty() &&
                         (workload_record || (!m.wait_fraction && m.verdict == InputBound::unknown));
  if (!failed && !cut_short) return;
  m.verdict = failed ? InputBound::run_failed : InputBound::nothing_measured;
  m.run_error = run.error;
}

// A GPU-bound job: the few waits a loader chain explains (start-up, a rare late batch) are not what
// limits the step, so they get no loader change.
void demote_loader_chains(std::vector<CausalChain>& chains) {
  for (CausalChain& c : chains) {
    if (c.victim != contract::op::kBatchWait) continue;
    c.severity = Severity::low;
    c.changes.clear();
    c.loader_change_withheld = true;
  }
}

// A chain found apart from the slow intervals, in its place by lost time; the ranks follow.
void insert_by_lost_time(std::vector<CausalChain>& chains, CausalChain chain) {
  auto at = std::find_if(chains.begin(), chains.end(), [&](const CausalChain& c) {
    return c.victim != kMainBusyVictim && c.lost_ns < chain.lost_ns;
  });
  chains.insert(at, std::move(chain));
  int rank = 0;
  for (CausalChain& c : chains) c.rank = ++rank;
}

}  // namespace

namespace {

// Worker health over the whole run, whatever the window: a kill or a hang is where the run ended.
Status analyze_health(const TraceFile& trace, RunAnalysis& a) {
  const int64_t run_id = a.context.run.run_id;
  auto samples = trace.process_samples(run_id);
  if (!samples) return samples.error();
  auto events = trace.events(run_id, {health_ops(), std::nullopt, std::nullopt, {}, std::nullopt});
  if (!events) return events.error();
  auto copied = trace.copy_on_write_bytes(run_id);
  if (!copied) return copied.error();
  auto batch_bytes = trace.largest_batch_bytes(run_id);
  if (!batch_bytes) return batch_bytes.error();
  a.health = analyze_worker_health({a.context, *samples, *events, *copied, *batch_bytes});
  if (std::any_of(a.health.findings.begin(), a.health.findings.end(),
                  [](const HealthFinding& f) { return f.kind == HealthKind::hang; })) {
    auto stacks = trace.event_stacks(run_id, contract::op::kHang);
    if (!stacks) return stacks.error();
    add_hang_stacks(a.health, *stacks);
  }
  for (const HealthFinding& f : a.health.findings) {
    if (f.kind != HealthKind::hang) continue;
    std::vector<int64_t> tids;
    for (const auto& w : f.waiters) tids.push_back(w.pid);
    auto blocked = trace.events(run_id, {{"offcpu_blocked"}, f.ts_ns, f.ts_ns + f.hang_ns, tids, std::nullopt});
    if (!blocked) return blocked.error();
    add_hang_wakers(a.health, *blocked);
  }
  return {};
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
  clip_to_traced_span(a.context.settings, a.window);
  const std::optional<int64_t> from = a.window.start_ns, until = a.window.end_ns;

  auto counts = trace.count_events(run.run_id, from, until);
  if (!counts) return counts.error();
  a.event_counts = *counts;
  int64_t in_window = 0;
  for (const OpCount& c : *counts) in_window += c.count;
  // worker_start: what the epochs' first batches waited for (EpochStartup).
  auto batches = trace.events(run.run_id, {{std::string(contract::op::kBatchWait),
                                            std::string(contract::op::kBatchCompute),
                                            std::string(contract::op::kWorkerStart)},
                                           from, until, {}, std::nullopt});
  if (!batches) return batches.error();
  a.metrics = compute_run_metrics(a.context, *batches, a.window, in_window);
  auto estimated = estimated_waits(trace, a);
  if (!estimated) return estimated.error();
  add_job_evidence(a.context, a.window, *batches, a.metrics);
  withhold_verdict(a.context.run, a.metrics);
  a.profile_taken = profile_taken(a.context);
  auto profile = trace.profile(run.run_id, from, until);
  if (!profile) return profile.error();
  a.profile = analyze_profile(a.context, *profile);
  a.metrics.verdict = refine_verdict(a.metrics.verdict, a.profile, calls_cuda(a.context));

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
  if (*estimated) victims->by_op[std::string(contract::op::kBatchWait)] = std::move(**estimated);
  auto activity = read_activity(trace, a.context, *victims);
  if (!activity) return activity.error();
  a.chains = analyze_causal_chains(ChainInputs{a.context, *victims, *activity, a.window, a.metrics, a.calls, waits,
                                               true});
  add_call_sites(a.chains, *victims, *profile);
  if (auto host = host_bound_chain(a.context, a.metrics, a.window, a.calls)) {
    for (CausalChain& c : a.chains.chains) ++c.rank;
    a.chains.chains.insert(a.chains.chains.begin(), std::move(*host));
  }
  if (auto startup = epoch_startup_chain(a.metrics)) insert_by_lost_time(a.chains.chains, std::move(*startup));
  if (a.metrics.verdict == InputBound::gpu_bound) demote_loader_chains(a.chains.chains);
  if (a.profile)
    add_profile_to_chains(a.chains.chains, *a.profile,
                          ChainContext{a.context, a.metrics, a.calls, a.chains.producers});
  if (Status s = analyze_health(trace, a); !s) return s.error();
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

RunHeader run_header(const RunAnalysis& a, std::optional<double> since_s) {
  const auto& run = a.context.run;
  RunHeader header;
  header.run_id = run.run_id;
  header.label = run.label;
  header.kind = run.kind;
  header.status = run.status;
  header.mode = summarize_config(run).mode;
  header.machine = run.machine;
  header.since_s = since_s;
  header.window_s = a.metrics.window_s;
  return header;
}

int64_t RunAnalysis::events_of(const std::string& op) const {
  for (const OpCount& c : event_counts)
    if (c.op == op) return c.count;
  return 0;
}

}  // namespace ingero::reports
