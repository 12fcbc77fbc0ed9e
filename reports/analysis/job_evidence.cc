// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/job_evidence.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/trace_contract.h"

namespace ingero::reports {

namespace {

// A thread's time inside the window, from its lifetime where known.
int64_t time_in_window(const ThreadRecord& t, const TimeWindow& window) {
  const int64_t from = std::max(window.start_ns, t.start_ns.value_or(window.start_ns));
  const int64_t until = std::min(window.end_ns, t.exit_ns.value_or(window.end_ns));
  return until > from ? until - from : 0;
}

enum class Waker { worker, pin, other };

struct WakerRoles {
  std::map<int64_t, std::string> by_tid;
  std::set<int64_t> worker_processes;
  Waker of(int64_t arg) const {
    const auto tid = static_cast<int64_t>(IB_WAKER_TID(arg));
    const auto pid = static_cast<int64_t>(IB_WAKER_TGID(arg));
    auto it = by_tid.find(tid);
    if (it != by_tid.end() && it->second == contract::kRolePin) return Waker::pin;
    if ((it != by_tid.end() && it->second == contract::kRoleWorker) || worker_processes.count(pid)) return Waker::worker;
    return Waker::other;
  }
};

WakerRoles waker_roles(const RunContext& context) {
  WakerRoles roles;
  for (const ThreadRecord& t : context.threads) {
    roles.by_tid[t.tid] = t.role;
    if (t.role == contract::kRoleWorker) roles.worker_processes.insert(t.pid);
  }
  return roles;
}

}  // namespace

std::vector<int64_t> main_thread_ids(const RunContext& context) {
  std::vector<int64_t> tids;
  for (const ThreadRecord& t : context.threads)
    if (t.role == contract::kRoleMain) tids.push_back(t.tid);
  return tids;
}

std::vector<int64_t> handoff_thread_ids(const RunContext& context) {
  std::set<int64_t> main_processes;
  for (const ThreadRecord& t : context.threads)
    if (t.role == contract::kRoleMain) main_processes.insert(t.pid);
  std::vector<int64_t> tids;
  for (const ThreadRecord& t : context.threads)
    if (main_processes.count(t.pid) && t.role != contract::kRoleMain && !contract::is_producer_role(t.role))
      tids.push_back(t.tid);
  return tids;
}

namespace {

// The receive estimate's bounds (job_evidence.h).
constexpr int64_t kHandoffPreemptAfterNs = 50'000;  // a preemption this soon after a hand-off is next()'s
constexpr int64_t kHandoffClockSlackNs = 5'000;     // ... or this much before it (two CPUs' clocks)
constexpr int64_t kReceiveCpuCap = 3;               // a receive holds at most this many r of CPU

struct Span {
  int64_t start = 0, end = 0;
};

// A main thread's off-CPU intervals, in time order, and the instants it handed work to a thread of
// its own process.
struct MainTimeline {
  enum class Off { producer, preempted, other };
  struct Interval {
    int64_t start, end;
    Off kind;
  };
  std::vector<Interval> off;
  std::vector<int64_t> handoffs;

  // Its time on the CPU between two instants: the time not covered by an off-CPU interval.
  int64_t cpu_between(int64_t from, int64_t until) const {
    int64_t cpu = until - from;
    auto it = std::lower_bound(off.begin(), off.end(), from, [](const Interval& i, int64_t t) { return i.end <= t; });
    for (; it != off.end() && it->start < until; ++it) cpu -= std::min(until, it->end) - std::max(from, it->start);
    return std::max<int64_t>(cpu, 0);
  }
  std::optional<int64_t> handoff_at_or_after(int64_t t) const {
    auto it = std::lower_bound(handoffs.begin(), handoffs.end(), t);
    if (it == handoffs.end()) return std::nullopt;
    return *it;
  }
};

// The wake-ups a main thread gave the other threads of its process: each blocked interval it ended,
// at the wake-up (the start of the run-queue wait that ended with it, when one was recorded) else at
// the switch in.
std::map<int64_t, std::vector<int64_t>> handoffs_by_main(const WakeupTrace& trace, const std::set<int64_t>& mains) {
  std::map<std::pair<int64_t, int64_t>, int64_t> runq_start;  // (tid, end) -> start
  for (const Event& e : trace.handoff_runq) runq_start[{e.tid, e.end_ns()}] = e.ts_ns;
  std::map<int64_t, std::vector<int64_t>> by_main;
  for (const Event& e : trace.handoff_blocked) {
    const auto waker = static_cast<int64_t>(IB_WAKER_TID(e.arg));
    if (e.arg == 0 || !mains.count(waker)) continue;
    auto runq = runq_start.find({e.tid, e.end_ns()});
    by_main[waker].push_back(runq == runq_start.end() ? e.end_ns() : runq->second);
  }
  for (auto& [tid, instants] : by_main) std::sort(instants.begin(), instants.end());
  return by_main;
}

std::optional<int64_t> middle_value(std::vector<int64_t> values) {
  if (values.empty()) return std::nullopt;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

// r: per hand-off that follows a producer's wake-up (since the previous hand-off), the CPU between.
std::vector<int64_t> receive_cpu_samples(const MainTimeline& m) {
  std::vector<int64_t> ends;
  for (const auto& i : m.off)
    if (i.kind == MainTimeline::Off::producer) ends.push_back(i.end);
  std::vector<int64_t> samples;
  int64_t previous = INT64_MIN;
  for (int64_t h : m.handoffs) {
    auto it = std::upper_bound(ends.begin(), ends.end(), h);
    if (it != ends.begin() && *std::prev(it) > previous) samples.push_back(m.cpu_between(*std::prev(it), h));
    previous = h;
  }
  return samples;
}

// The stretches of next() around the batches' arrivals that the estimate counts (job_evidence.h).
std::vector<Span> receive_spans(const MainTimeline& m, int64_t r) {
  using Off = MainTimeline::Off;
  std::vector<Span> spans;
  for (size_t k = 0; k < m.off.size(); ++k) {
    const auto& w = m.off[k];
    if (w.kind != Off::producer) continue;
    // From the wake-up to the hand-off, or to the next producer-ended block when that comes first.
    if (auto handoff = m.handoff_at_or_after(w.end)) {
      int64_t until = *handoff;
      for (size_t j = k + 1; j < m.off.size() && m.off[j].start < until; ++j)
        if (m.off[j].kind == Off::producer) until = m.off[j].start;
      if (m.cpu_between(w.end, until) <= kReceiveCpuCap * r) spans.push_back({w.end, until});
    }
    // Before the block: the time off the CPU within its last r/2 of CPU.
    int64_t need = r / 2, at = w.start;
    for (size_t j = k; j-- > 0;) {
      const auto& before = m.off[j];
      const int64_t gap = std::max<int64_t>(0, at - before.end);
      if (gap >= need || before.kind == Off::producer) break;
      need -= gap;
      spans.push_back({before.start, before.end});
      at = before.start;
    }
  }
  for (int64_t h : m.handoffs) {
    auto it = std::lower_bound(m.off.begin(), m.off.end(), h - kHandoffClockSlackNs,
                               [](const MainTimeline::Interval& i, int64_t t) { return i.start < t; });
    for (; it != m.off.end() && it->start <= h + kHandoffPreemptAfterNs; ++it)
      if (it->kind == Off::preempted) {
        spans.push_back({it->start, it->end});
        break;
      }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.start <= merged.back().end)
      merged.back().end = std::max(merged.back().end, s.end);
    else
      merged.push_back(s);
  }
  return merged;
}

int64_t overlap(const Span& a, int64_t from, int64_t until) {
  return std::max<int64_t>(0, std::min(a.end, until) - std::max(a.start, from));
}

// Adds the receive estimate of every main thread to w.
void add_receive_estimate(std::map<int64_t, MainTimeline>& mains, const TimeWindow& window, WakeupWaits& w) {
  std::vector<int64_t> samples;
  for (auto& [tid, m] : mains) {
    std::sort(m.off.begin(), m.off.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    auto own = receive_cpu_samples(m);
    samples.insert(samples.end(), own.begin(), own.end());
    w.handoffs += static_cast<int64_t>(m.handoffs.size());
  }
  w.receive_cpu_ns = middle_value(samples);
  if (!w.receive_cpu_ns) return;
  for (const auto& [tid, m] : mains) {
    for (const Span& s : receive_spans(m, *w.receive_cpu_ns)) {
      const int64_t from = std::max(s.start, window.start_ns), until = std::min(s.end, window.end_ns);
      if (until <= from) continue;
      w.receive_ns += until - from;
      auto it = std::lower_bound(m.off.begin(), m.off.end(), from,
                                 [](const MainTimeline::Interval& i, int64_t t) { return i.end <= t; });
      for (; it != m.off.end() && it->start < until; ++it)
        w.receive_runq_ns += overlap({it->start, it->end}, from, until);
    }
  }
}

}  // namespace

std::optional<WakeupEstimate> estimate_waits_from_wakeups(const RunContext& context, const WakeupTrace& trace,
                                                          const TimeWindow& window) {
  const bool has_producers = std::any_of(context.threads.begin(), context.threads.end(),
                                         [](const ThreadRecord& t) { return contract::is_producer_role(t.role); });
  WakeupEstimate estimate;
  WakeupWaits& w = estimate.parts;
  std::set<int64_t> main_tids;
  for (const ThreadRecord& t : context.threads) {
    if (t.role != contract::kRoleMain) continue;
    ++w.main_threads;
    main_tids.insert(t.tid);
    w.denominator_ns += time_in_window(t, window);
  }
  if (!has_producers || w.main_threads == 0 || w.denominator_ns == 0) return std::nullopt;
  const WakerRoles roles = waker_roles(context);
  std::map<int64_t, MainTimeline> mains;
  using Off = MainTimeline::Off;
  int64_t index = 0;
  for (const Event& e : trace.blocked) {
    const Waker waker = e.arg == 0 ? Waker::other : roles.of(e.arg);
    mains[e.tid].off.push_back({e.ts_ns, e.end_ns(), waker == Waker::other ? Off::other : Off::producer});
    if (!window.contains_start(e)) continue;
    if (waker == Waker::other) {
      w.by_others_ns += e.dur_ns;
      continue;
    }
    if (waker == Waker::worker) {
      w.by_workers_ns += e.dur_ns;
    } else {
      w.by_pin_ns += e.dur_ns;
      if (e.dur_ns < kGilSwitchIntervalNs) w.pin_short_ns += e.dur_ns;
    }
    estimate.waits.push_back({e.ts_ns, e.dur_ns, e.tid, index++});
  }
  for (const Event& e : trace.preempted) mains[e.tid].off.push_back({e.ts_ns, e.end_ns(), Off::preempted});
  for (auto& [tid, instants] : handoffs_by_main(trace, main_tids)) mains[tid].handoffs = std::move(instants);
  add_receive_estimate(mains, window, w);
  return estimate;
}

std::optional<double> main_host_share(const RunContext& context, const TimeWindow& window) {
  if (!window.whole_run || context.thread_stats.empty()) return std::nullopt;
  std::map<int64_t, const ThreadRecord*> mains;
  for (const ThreadRecord& t : context.threads)
    if (t.role == contract::kRoleMain) mains[t.tid] = &t;
  int64_t busy = 0, lifetime = 0;
  for (const ThreadStatsRecord& s : context.thread_stats) {
    auto main = mains.find(s.tid);
    if (main == mains.end()) continue;
    auto cuda = context.cuda_ns_by_tid.find(s.tid);
    const int64_t in_cuda = cuda == context.cuda_ns_by_tid.end() ? 0 : cuda->second;
    busy += std::max<int64_t>(0, s.counters.oncpu_ns - in_cuda);
    lifetime += time_in_window(*main->second, window);
  }
  if (lifetime <= 0) return std::nullopt;
  return std::min(1.0, static_cast<double>(busy) / static_cast<double>(lifetime));
}

std::optional<GpuBusy> gpu_busy(const RunContext& context, const TimeWindow& window) {
  struct Sums {
    double total = 0;
    int64_t count = 0;
    bool active = false;
  };
  std::map<std::pair<std::string, int64_t>, Sums> by_metric_gpu;
  GpuBusy busy;
  for (const GpuSample& s : context.gpu_samples) {
    if (s.ts_ns < window.start_ns || s.ts_ns >= window.end_ns) continue;
    Sums& sums = by_metric_gpu[{s.metric, s.gpu}];
    sums.total += s.value;
    ++sums.count;
    sums.active |= s.value > 0;
    ++busy.samples;
  }
  if (busy.samples == 0) return std::nullopt;
  auto mean_of = [&](std::string_view metric) -> std::optional<double> {
    double total = 0;
    int n = 0;
    bool any_active = false;
    for (const auto& [key, sums] : by_metric_gpu) any_active |= key.first == metric && sums.active;
    for (const auto& [key, sums] : by_metric_gpu) {
      if (key.first != metric || sums.count == 0 || (any_active && !sums.active)) continue;
      total += sums.total / static_cast<double>(sums.count);
      ++n;
    }
    if (n == 0) return std::nullopt;
    if (metric == contract::gpu_metric::kGpuUtil) busy.gpus = n;
    return total / n / 100.0;
  };
  busy.gpu_util = mean_of(contract::gpu_metric::kGpuUtil);
  busy.sm_active = mean_of(contract::gpu_metric::kSmActive);
  return busy;
}

std::optional<RunConfigSummary> observed_config(const RunContext& context) {
  if (context.loaders.empty()) return std::nullopt;
  const nlohmann::json& k = context.loaders.front().knobs;
  auto number = [&](const char* key) -> std::optional<int64_t> {
    auto it = k.find(key);
    if (it == k.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  auto flag = [&](const char* key) {
    auto it = k.find(key);
    return it != k.end() && it->is_boolean() && it->get<bool>();
  };
  RunConfigSummary c;
  c.mode = "python";
  c.num_workers = static_cast<int>(number("num_workers").value_or(0));
  c.prefetch_factor = static_cast<int>(number("prefetch_factor").value_or(c.num_workers > 0 ? 2 : 0));
  c.pin_memory = flag("pin_memory");
  c.persistent_workers = flag("persistent_workers");
  c.batch_size = number("batch_size");
  return c;
}

// An attached job's loader, as far as the trace shows it: its worker processes still alive at the end
// (or every one seen, when none was), and whether a pin thread ran.
std::optional<RunConfigSummary> traced_config(const RunContext& context) {
  std::set<int64_t> alive, seen;
  bool pin = false;
  for (const ThreadRecord& t : context.threads) {
    pin |= t.role == contract::kRolePin;
    if (t.role != contract::kRoleWorker || t.tid != t.pid) continue;
    seen.insert(t.pid);
    if (!t.exit_ns) alive.insert(t.pid);
  }
  if (seen.empty()) return std::nullopt;
  RunConfigSummary c;
  c.mode = "python";
  c.num_workers = static_cast<int>((alive.empty() ? seen : alive).size());
  c.prefetch_factor = 2;
  c.pin_memory = pin;
  return c;
}

RunConfigSummary effective_config(const RunContext& context) {
  RunConfigSummary own = summarize_config(context.run);
  if (!own.mode.empty()) return own;
  if (auto observed = observed_config(context)) return *observed;
  return traced_config(context).value_or(own);
}

}  // namespace ingero::reports
