#include "reports/run_metrics.h"

#include <algorithm>
#include <map>
#include <set>

namespace ingero::reports {
namespace {

std::optional<double> json_number(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

template <class T>
T json_value(const nlohmann::json& object, const char* key, T fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

LatencyStats window_stats(const EventColumn& events, const TimeWindow& window) {
  LargeVector<int64_t> durations;
  durations.reserve(events.size());
  for (const auto& e : events) {
    if (window.contains_start(e)) durations.push_back(e.dur_ns);
  }
  return latency_stats(durations.data(), durations.data() + durations.size());
}

std::vector<int64_t> merged_histogram(const RunContext& context, const std::set<int64_t>& pids) {
  std::vector<int64_t> merged;
  auto metric = context.histograms.find("runq_us");
  if (metric == context.histograms.end()) return merged;
  for (const auto& [pid, slots] : metric->second) {
    if (!pids.empty() && pids.count(pid) == 0) continue;
    if (merged.size() < slots.size()) merged.resize(slots.size(), 0);
    for (size_t i = 0; i < slots.size(); ++i) merged[i] += slots[i];
  }
  return merged;
}

struct Lifetime {
  int64_t start = INT64_MAX;
  int64_t end = INT64_MIN;
  void cover(int64_t from, int64_t to) {
    start = std::min(start, from);
    end = std::max(end, to);
  }
  std::optional<int64_t> length() const {
    if (start == INT64_MAX || end < start) return std::nullopt;
    return end - start;
  }
};

int role_rank(const std::string& role) {
  static const std::map<std::string, int> order = {{"main", 0}, {"pin", 1}, {"worker", 2}};
  auto it = order.find(role);
  return it == order.end() ? 3 : it->second;
}

void fill_runq_quantiles(const RunContext& context, const std::set<int64_t>& pids, ProcessRow& row) {
  const auto histogram = merged_histogram(context, pids);
  row.runq_p50 = histogram_quantile(histogram, 0.50);
  row.runq_p99 = histogram_quantile(histogram, 0.99);
}

}  // namespace

const char* input_bound_name(InputBound verdict) {
  switch (verdict) {
    case InputBound::highly: return "HIGHLY input-bound";
    case InputBound::moderately: return "MODERATELY input-bound";
    case InputBound::not_input_bound: return "NOT input-bound";
    case InputBound::unknown: return "unknown (no batch timings)";
  }
  return "unknown";
}

InputBound classify_wait_share(std::optional<double> wait_fraction) {
  if (!wait_fraction) return InputBound::unknown;
  if (*wait_fraction >= kHighlyInputBoundShare) return InputBound::highly;
  if (*wait_fraction >= kModeratelyInputBoundShare) return InputBound::moderately;
  return InputBound::not_input_bound;
}

TimeWindow analysis_window(const RunRecord& run, const EventSet& events, std::optional<double> since_s) {
  TimeWindow window;
  window.start_ns = run.start_ns;
  int64_t last_event_end = run.start_ns;
  for (const auto& op_events : events.by_op) {
    for (const auto& e : op_events) last_event_end = std::max(last_event_end, e.end_ns());
  }
  // A run interrupted before its end was recorded ends with its last event.
  window.end_ns = std::max(run.end_ns.value_or(last_event_end), last_event_end) + 1;
  if (since_s && *since_s > 0) {
    window.start_ns = std::max(window.start_ns, window.end_ns - static_cast<int64_t>(*since_s * 1e9));
    window.whole_run = window.start_ns == run.start_ns;
  }
  return window;
}

RunConfigSummary summarize_config(const RunRecord& run) {
  const nlohmann::json& config = run.config.is_object()
                                     ? run.config
                                     : (run.result.is_object() && run.result.contains("config")
                                            ? run.result["config"]
                                            : run.config);
  RunConfigSummary summary;
  summary.mode = json_value<std::string>(config, "mode", "");
  summary.num_workers = json_value<int>(config, "num_workers", 0);
  summary.prefetch_factor = json_value<int>(config, "prefetch_factor", 0);
  summary.pin_memory = json_value<bool>(config, "pin_memory", false);
  summary.persistent_workers = json_value<bool>(config, "persistent_workers", false);
  summary.shuffle = json_value<bool>(config, "shuffle", false);
  summary.cpus = json_value<int>(config, "cpus", 0);
  if (auto samples = json_number(config, "samples")) summary.samples = static_cast<int64_t>(*samples);
  if (auto features = json_number(config, "features")) summary.features = static_cast<int64_t>(*features);
  return summary;
}

std::optional<int> usable_cores(const RunRecord& run) {
  const int pinned = summarize_config(run).cpus;
  if (pinned > 0) return pinned;
  if (auto count = json_number(run.machine, "cpu_count"); count && *count > 0) {
    return static_cast<int>(*count);
  }
  return std::nullopt;
}

RunMetrics compute_run_metrics(const RunContext& context, const EventSet& events,
                               const TimeWindow& window) {
  const RunRecord& run = context.run;
  RunMetrics m;
  m.window_s = static_cast<double>(window.length_ns()) / 1e9;
  const auto& result = run.result;
  m.epoch_median_s = json_number(result, "epoch_median_s");
  m.epoch_min_s = json_number(result, "epoch_min_s");
  m.epoch_max_s = json_number(result, "epoch_max_s");
  m.epoch_seconds = json_value<std::vector<double>>(result, "epoch_seconds", {});
  m.samples_per_s = json_number(result, "samples_per_s");
  m.h2d_bytes_per_epoch = json_number(result, "h2d_bytes_per_epoch");
  m.h2d_gbps = json_number(result, "h2d_gbps");
  m.batch_wait = window_stats(events.of("batch_wait"), window);
  m.batch_compute = window_stats(events.of("batch_compute"), window);

  // The result record covers the measured epochs of the whole run; a window
  // narrower than the run needs the events.
  if (auto fraction = json_number(result, "wait_fraction"); fraction && window.whole_run) {
    m.wait_fraction = fraction;
    m.wait_fraction_source = "result record";
  } else if (m.batch_wait.count > 0) {
    const double busy = static_cast<double>(m.batch_wait.total_ns + m.batch_compute.total_ns);
    const double denominator = m.batch_compute.count > 0 ? busy : static_cast<double>(window.length_ns());
    if (denominator > 0) m.wait_fraction = static_cast<double>(m.batch_wait.total_ns) / denominator;
    m.wait_fraction_source = "batch_wait events";
  }
  m.verdict = classify_wait_share(m.wait_fraction);

  m.cores = usable_cores(run);
  const int64_t oncpu = total_counters(context.thread_stats).oncpu_ns;
  if (m.cores && window.whole_run && window.length_ns() > 0 && !context.thread_stats.empty()) {
    m.cpu_busy_share = static_cast<double>(oncpu) / (static_cast<double>(window.length_ns()) * *m.cores);
  }
  for (const auto& op_events : events.by_op) {
    for (const auto& e : op_events) m.events_in_window += window.contains_start(e) ? 1 : 0;
  }
  for (const auto& [source, dropped] : context.losses) m.events_lost += dropped;
  return m;
}

bool is_cuda_category(const std::string& category) {
  return category == "cuda_runtime" || category == "cuda_driver";
}

std::vector<CudaLatencyRow> cuda_latency_table(const EventSet& events, const TimeWindow& window) {
  std::vector<CudaLatencyRow> rows;
  for (size_t i = 0; i < events.ops.size(); ++i) {
    if (!is_cuda_category(events.ops[i].category)) continue;
    LatencyStats stats = window_stats(events.by_op[i], window);
    if (stats.count == 0) continue;
    rows.push_back({events.ops[i].name, events.ops[i].category, stats});
  }
  std::sort(rows.begin(), rows.end(), [](const CudaLatencyRow& a, const CudaLatencyRow& b) {
    return a.stats.total_ns > b.stats.total_ns;
  });
  return rows;
}

std::vector<ProcessRow> process_table(const RunContext& context) {
  const int64_t run_end = context.run.end_ns.value_or(context.run.start_ns);
  std::map<int64_t, const ThreadRecord*> thread_by_tid;
  for (const auto& t : context.threads) thread_by_tid[t.tid] = &t;

  // Group key: (pid, role); a thread seen only in thread_stats counts as 'other'.
  std::map<std::pair<int64_t, std::string>, ProcessRow> groups;
  std::map<std::pair<int64_t, std::string>, Lifetime> lifetimes;
  auto group_of = [&](int64_t pid, const std::string& role, const std::string& comm) -> ProcessRow& {
    auto& row = groups[{pid, role}];
    if (row.threads == 0) {
      row.role = role;
      row.pid = pid;
      row.name = comm;
      row.processes = 1;
    }
    return row;
  };
  std::set<int64_t> with_thread_row;
  for (const auto& t : context.threads) {
    auto& row = group_of(t.pid, t.role, t.comm);
    ++row.threads;
    lifetimes[{t.pid, t.role}].cover(t.start_ns.value_or(context.run.start_ns),
                                     t.exit_ns.value_or(run_end));
  }
  for (const auto& s : context.thread_stats) {
    auto it = thread_by_tid.find(s.tid);
    if (it == thread_by_tid.end()) {
      auto& row = group_of(s.pid, "other", "?");
      ++row.threads;
      row.counters += s.counters;
    } else {
      groups[{it->second->pid, it->second->role}].counters += s.counters;
    }
  }
  std::vector<ProcessRow> rows;
  for (auto& [key, row] : groups) {
    row.lifetime_ns = lifetimes[key].length();
    fill_runq_quantiles(context, {row.pid}, row);
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProcessRow& a, const ProcessRow& b) {
    return std::make_pair(role_rank(a.role), a.pid) < std::make_pair(role_rank(b.role), b.pid);
  });
  return rows;
}

std::vector<ProcessRow> role_totals(const RunContext& context, const std::vector<ProcessRow>& rows) {
  std::map<std::string, ProcessRow> totals;
  std::map<std::string, std::set<int64_t>> pids;
  for (const auto& row : rows) {
    auto& total = totals[row.role];
    total.role = row.role;
    total.name = row.role;
    total.threads += row.threads;
    pids[row.role].insert(row.pid);
    total.counters += row.counters;
    if (row.lifetime_ns) {
      total.lifetime_ns = std::max(total.lifetime_ns.value_or(0), *row.lifetime_ns);
    }
  }
  std::vector<ProcessRow> out;
  for (auto& [role, total] : totals) {
    total.processes = static_cast<int>(pids[role].size());
    fill_runq_quantiles(context, pids[role], total);
    out.push_back(total);
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessRow& a, const ProcessRow& b) {
    return role_rank(a.role) < role_rank(b.role);
  });
  return out;
}

std::optional<BucketBounds> run_queue_quantile(const RunContext& context, double q) {
  return histogram_quantile(merged_histogram(context, {}), q);
}

}  // namespace ingero::reports
