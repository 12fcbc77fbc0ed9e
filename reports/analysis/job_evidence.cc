// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/job_evidence.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/trace_contract.h"

namespace ingero::reports {

namespace {

bool is_producer_role(const std::string& role) {
  return role == contract::kRoleWorker || role == contract::kRolePin;
}

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

std::optional<WakeupEstimate> estimate_waits_from_wakeups(const RunContext& context, const EventList& blocked,
                                                          const TimeWindow& window) {
  const bool has_producers = std::any_of(context.threads.begin(), context.threads.end(),
                                         [](const ThreadRecord& t) { return is_producer_role(t.role); });
  WakeupEstimate estimate;
  WakeupWaits& w = estimate.parts;
  for (const ThreadRecord& t : context.threads) {
    if (t.role != contract::kRoleMain) continue;
    ++w.main_threads;
    w.denominator_ns += time_in_window(t, window);
  }
  if (!has_producers || w.main_threads == 0 || w.denominator_ns == 0) return std::nullopt;
  const WakerRoles roles = waker_roles(context);
  int64_t index = 0;
  for (const Event& e : blocked) {
    if (!window.contains_start(e)) continue;
    const Waker waker = e.arg == 0 ? Waker::other : roles.of(e.arg);
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
