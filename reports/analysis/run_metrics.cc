// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/run_metrics.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/epoch_batches.h"
#include "common/knobs.h"
#include "common/trace_contract.h"

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

LatencyStats window_stats(const EventList& events, const TimeWindow& window) {
  std::vector<int64_t> durations;
  durations.reserve(events.size());
  for (const auto& e : events)
    if (window.contains_start(e)) durations.push_back(e.dur_ns);
  return latency_stats(durations);
}

std::vector<int64_t> merged_histogram(const RunContext& context, const std::string& metric,
                                      const std::set<int64_t>& pids) {
  std::vector<int64_t> merged;
  auto found = context.histograms.find(metric);
  if (found == context.histograms.end()) return merged;
  for (const auto& [pid, slots] : found->second) {
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

void fill_quantiles(const RunContext& context, const std::set<int64_t>& pids, ProcessRow& row) {
  const auto runq = merged_histogram(context, "runq_us", pids);
  row.runq_p50 = histogram_quantile(runq, 0.50);
  row.runq_p99 = histogram_quantile(runq, 0.99);
  row.offcpu_p99 = histogram_quantile(merged_histogram(context, "offcpu_us", pids), 0.99);
}

// Percentiles from the kernel's log2 nanosecond histogram: the upper bound of each bucket.
LatencyStats histogram_stats(const CallTotals& call) {
  LatencyStats stats;
  stats.count = call.returns;
  stats.total_ns = call.total_ns;
  stats.max_ns = call.max_ns;
  auto upper = [&](double q) {
    auto bounds = histogram_quantile(call.histogram, q);
    return bounds ? static_cast<int64_t>(std::min(bounds->upper, static_cast<double>(call.max_ns))) : 0;
  };
  stats.p50_ns = upper(0.50);
  stats.p90_ns = upper(0.90);
  stats.p99_ns = upper(0.99);
  return stats;
}

}  // namespace

const char* input_bound_name(InputBound verdict) {
  switch (verdict) {
    case InputBound::highly: return "HIGHLY input-bound";
    case InputBound::moderately: return "MODERATELY input-bound";
    case InputBound::not_input_bound: return "NOT input-bound";
    case InputBound::host_bound: return "HOST-bound (the main thread is busy on the CPU, not waiting)";
    case InputBound::gpu_bound: return "GPU-bound (the GPU is busy; the loader keeps up)";
    case InputBound::unknown: return "unknown (no batch timings)";
    case InputBound::run_failed: return "none (the run failed)";
    case InputBound::nothing_measured: return "none (the run ended before it measured anything)";
    case InputBound::cpu_compute_bound:
      return "compute-bound on the CPU (the main thread computes the model; the loader keeps up)";
  }
  return "unknown";
}

InputBound classify_wait_share(std::optional<double> wait_fraction) {
  if (!wait_fraction) return InputBound::unknown;
  if (*wait_fraction >= kHighlyInputBoundShare) return InputBound::highly;
  if (*wait_fraction >= kModeratelyInputBoundShare) return InputBound::moderately;
  return InputBound::not_input_bound;
}

InputBound classify_run(std::optional<double> wait_fraction, std::optional<double> main_host_share,
                        std::optional<double> gpu_util, bool uses_gpu) {
  const InputBound by_waits = classify_wait_share(wait_fraction);
  if (by_waits != InputBound::not_input_bound && by_waits != InputBound::unknown) return by_waits;
  if (gpu_util && *gpu_util >= kGpuBoundShare) return InputBound::gpu_bound;
  const bool busy_host = main_host_share && *main_host_share >= kHostBoundShare;
  if (busy_host && (uses_gpu || by_waits == InputBound::unknown)) return InputBound::host_bound;
  return by_waits;
}

const char* batch_source_name(BatchSource source) {
  switch (source) {
    case BatchSource::none: return "";
    case BatchSource::workload_record: return "result record";
    case BatchSource::workload_events: return "batch_wait events";
    case BatchSource::observer: return "observer";
    case BatchSource::wakeups: return "wake-ups";
  }
  return "";
}

double WakeupWaits::share() const {
  return denominator_ns > 0
             ? static_cast<double>(by_workers_ns + by_pin_ns + receive_ns) / static_cast<double>(denominator_ns)
             : 0.0;
}

double WakeupWaits::share_without_short_pin() const {
  return denominator_ns > 0 ? static_cast<double>(by_workers_ns + by_pin_ns - pin_short_ns + receive_ns) /
                                  static_cast<double>(denominator_ns)
                            : 0.0;
}

double WakeupWaits::blocked_share() const {
  return denominator_ns > 0 ? static_cast<double>(by_workers_ns + by_pin_ns) / static_cast<double>(denominator_ns)
                            : 0.0;
}

TimeWindow analysis_window(const RunRecord& run, std::optional<int64_t> last_event_end,
                           std::optional<double> since_s) {
  TimeWindow window;
  window.start_ns = run.start_ns;
  // A run interrupted before its end was recorded ends with its last event.
  window.end_ns = std::max(run.end_ns.value_or(run.start_ns), last_event_end.value_or(run.start_ns)) + 1;
  if (since_s && *since_s > 0) {
    const double since_ns = std::min(*since_s * 1e9, static_cast<double>(window.end_ns - window.start_ns));
    window.start_ns = window.end_ns - static_cast<int64_t>(since_ns);
    window.whole_run = window.start_ns <= run.start_ns;
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
  summary.ranks = json_value<int>(config, "ranks", 1);
  if (auto v = json_number(config, "samples")) summary.samples = static_cast<int64_t>(*v);
  if (auto v = json_number(config, "features")) summary.features = static_cast<int64_t>(*v);
  if (auto v = json_number(config, "batch_size")) summary.batch_size = static_cast<int64_t>(*v);
  const Knobs place = storage_knobs(config);
  summary.storage = place.get(knob::kStorage);
  summary.format = place.get(knob::kFormat);
  summary.page_cache = place.get(knob::kPageCache);
  return summary;
}

namespace {
// The device the workload measured for its dataset on disk (the result record's storage.device):
// its sequential read rate and name, into `io`; left empty where none was measured.
void add_storage_device(const RunRecord& run, IoSummary& io) {
  if (!run.result.is_object()) return;
  auto storage = run.result.find("storage");
  if (storage == run.result.end() || !storage->is_object()) return;
  auto device = storage->find("device");
  if (device == storage->end() || !device->is_object()) return;
  if (auto rate = json_number(*device, "seq_read_mb_s"); rate && *rate > 0) io.device_read_mb_s = rate;
  io.device_name = json_value<std::string>(*device, "name", "");
}
}  // namespace

std::optional<int> usable_cores(const RunRecord& run) {
  const int pinned = summarize_config(run).cpus;
  if (pinned > 0) return pinned;
  if (auto count = json_number(run.machine, "cpu_count"); count && *count > 0) return static_cast<int>(*count);
  return std::nullopt;
}

std::vector<double> measured_epochs(const RunRecord& run) {
  return json_value<std::vector<double>>(run.result, "epoch_seconds", {});
}

std::optional<EpochCut> epoch_cut(const nlohmann::json& config) {
  if (!config.is_object() || config.value("max_batches", int64_t{0}) <= 0 || config.value("ranks", 1) != 1)
    return std::nullopt;
  const int64_t samples = config.value("samples", int64_t{0}), batch = config.value("batch_size", int64_t{0});
  const bool drop_last = config.value("drop_last", false);
  EpochCut cut{epoch_batches(samples, batch, drop_last, config["max_batches"].get<int64_t>()),
               epoch_batches(samples, batch, drop_last)};
  if (cut.measured <= 0 || cut.measured >= cut.whole) return std::nullopt;
  return cut;
}

double whole_epoch_scale(const nlohmann::json& config) {
  const auto cut = epoch_cut(config);
  return cut ? static_cast<double>(cut->whole) / static_cast<double>(cut->measured) : 1.0;
}

namespace {

// Per measured epoch, in order: the seconds from its first batch's end to its last's, over
// the batches after the first; empty when the records do not cover every measured epoch.
std::vector<double> steady_batch_seconds(const nlohmann::json& result, size_t epochs, int64_t measured) {
  struct Ends {
    int64_t first = INT64_MAX, last = INT64_MIN;  // of its batches
    int64_t batches = 0;
  };
  std::map<int64_t, Ends> by_epoch;
  if (!result.is_object() || result.value("batches_truncated", false) || !result.contains("batches")) return {};
  for (const auto& b : result["batches"]) {
    if (!b.is_object()) return {};
    const int64_t end = b.value("wait_start_ns", int64_t{0}) + b.value("wait_ns", int64_t{0}) +
                        b.value("compute_ns", int64_t{0});
    Ends& e = by_epoch[b.value("epoch", int64_t{-1})];
    e.first = std::min(e.first, end);
    e.last = std::max(e.last, end);
    ++e.batches;
  }
  if (by_epoch.size() != epochs || measured < 2) return {};
  std::vector<double> per_batch;
  for (const auto& [epoch, e] : by_epoch) {
    if (e.batches != measured) return {};
    per_batch.push_back(static_cast<double>(e.last - e.first) / 1e9 / static_cast<double>(measured - 1));
  }
  return per_batch;
}

}  // namespace

std::vector<double> whole_epoch_seconds(const nlohmann::json& config, const nlohmann::json& result) {
  std::vector<double> epochs = json_value<std::vector<double>>(result, "epoch_seconds", {});
  const auto cut = epoch_cut(config);
  if (!cut) return epochs;
  const auto steady = steady_batch_seconds(result, epochs.size(), cut->measured);
  const auto missing = static_cast<double>(cut->whole - cut->measured);
  for (size_t i = 0; i < epochs.size(); ++i)
    epochs[i] = steady.empty() ? epochs[i] * whole_epoch_scale(config) : epochs[i] + missing * steady[i];
  return epochs;
}

std::vector<double> whole_epoch_seconds(const RunRecord& run) { return whole_epoch_seconds(run.config, run.result); }

namespace {

// What the epochs' first batches waited for: the workers starting where the loader has workers, else
// the iterator's own set-up; and, when len(loader) is known, their share of an epoch.
EpochStartup epoch_startup(const RunContext& context, const EventSet& batches, const TimeWindow& window,
                           const RunMetrics& m) {
  EpochStartup s;
  s.epochs = m.startup_batches;
  s.wait_ns = m.startup_wait_ns;
  if (!context.loaders.empty()) {
    const nlohmann::json& knobs = context.loaders.front().knobs;
    auto workers = knobs.find("num_workers");
    if (workers != knobs.end() && workers->is_number_integer()) s.num_workers = workers->get<int>();
    auto persistent = knobs.find("persistent_workers");
    s.persistent_workers = persistent != knobs.end() && persistent->is_boolean() && persistent->get<bool>();
    auto batches_per_epoch = knobs.find(contract::kBatchesPerEpochKnob);
    if (batches_per_epoch != knobs.end() && batches_per_epoch->is_number_integer() &&
        batches_per_epoch->get<int64_t>() > 0)
      s.batches_per_epoch = batches_per_epoch->get<int64_t>();
  } else {
    // No observed loader: the worker processes the trace saw.
    s.num_workers = static_cast<int>(std::count_if(context.threads.begin(), context.threads.end(),
                                                   [](const ThreadRecord& t) {
                                                     return t.role == contract::kRoleWorker && t.tid == t.pid;
                                                   }));
  }
  s.waited_for = s.num_workers > 0 ? StartupWait::worker_startup : StartupWait::iterator_setup;
  int64_t ready_total = 0;
  for (const Event& e : batches.of(contract::op::kWorkerStart)) {
    if (!window.contains_start(e)) continue;
    ++s.workers_started;
    ready_total += e.dur_ns;
  }
  if (s.workers_started > 0) s.worker_ready_ns = ready_total / s.workers_started;
  const int64_t steps = m.batch_wait.count;
  if (steps > s.epochs && m.batch_compute.count > 0)
    s.steady_step_ns = (m.batch_wait.total_ns - s.wait_ns + m.batch_compute.total_ns) / steps;
  if (s.batches_per_epoch && s.steady_step_ns) {
    const double first = static_cast<double>(s.per_epoch_ns());
    const double epoch = first + static_cast<double>(*s.batches_per_epoch) * static_cast<double>(*s.steady_step_ns);
    if (epoch > 0) s.share_of_epoch = first / epoch;
  }
  return s;
}

}  // namespace

RunMetrics compute_run_metrics(const RunContext& context, const EventSet& batches, const TimeWindow& window,
                               int64_t events_in_window) {
  const RunRecord& run = context.run;
  RunMetrics m;
  m.window_s = static_cast<double>(window.length_ns()) / 1e9;
  m.epoch_seconds = measured_epochs(run);
  // A record without a measured epoch (an interrupted run) says nothing about epochs.
  const bool measured = !m.epoch_seconds.empty();
  const auto& result = run.result;
  if (measured) {
    m.epoch_median_s = json_number(result, "epoch_median_s");
    m.epoch_min_s = json_number(result, "epoch_min_s");
    m.epoch_max_s = json_number(result, "epoch_max_s");
    m.samples_per_s = json_number(result, "samples_per_s");
    m.h2d_bytes_per_epoch = json_number(result, "h2d_bytes_per_epoch");
    m.h2d_gbps = json_number(result, "h2d_gbps");
  }
  m.batch_wait = window_stats(batches.of(contract::op::kBatchWait), window);
  m.batch_compute = window_stats(batches.of(contract::op::kBatchCompute), window);

  // The result record covers the measured epochs of the whole run; a window narrower
  // than the run needs the events.
  if (auto fraction = json_number(result, "wait_fraction"); fraction && measured && window.whole_run) {
    m.wait_fraction = fraction;
    m.batch_source = BatchSource::workload_record;
  } else if (m.batch_wait.count > 0) {
    const auto setting = context.settings.find(std::string(contract::kBatchSourceSetting));
    m.batch_source = setting != context.settings.end() && setting->second == contract::kBatchSourceObserver
                         ? BatchSource::observer
                         : BatchSource::workload_events;
    int64_t wait_ns = m.batch_wait.total_ns;
    if (m.batch_source == BatchSource::observer && m.batch_wait.count > 1) {
      for (const auto& e : batches.of(contract::op::kBatchWait))
        if (e.arg == 0 && window.contains_start(e)) {
          ++m.startup_batches;
          m.startup_wait_ns += e.dur_ns;
        }
      if (m.startup_batches >= m.batch_wait.count) m.startup_batches = m.startup_wait_ns = 0;
      wait_ns -= m.startup_wait_ns;
    }
    const double busy = static_cast<double>(wait_ns + m.batch_compute.total_ns);
    const double denominator = m.batch_compute.count > 0 ? busy : static_cast<double>(window.length_ns());
    if (denominator > 0) m.wait_fraction = static_cast<double>(wait_ns) / denominator;
    const double all = denominator + static_cast<double>(m.startup_wait_ns);
    if (m.startup_batches > 0 && all > 0)
      m.wait_fraction_with_startup = static_cast<double>(m.batch_wait.total_ns) / all;
  }
  m.wait_fraction_source = batch_source_name(m.batch_source);
  m.verdict = classify_wait_share(m.wait_fraction);
  if (m.startup_batches > 0) m.startup = epoch_startup(context, batches, window, m);

  m.cores = usable_cores(run);
  const ThreadCounters totals = total_counters(context.thread_stats);
  if (m.cores && window.whole_run && window.length_ns() > 0 && !context.thread_stats.empty())
    m.cpu_busy_share = static_cast<double>(totals.oncpu_ns) / (static_cast<double>(window.length_ns()) * *m.cores);
  m.events_in_window = events_in_window;
  if (context.losses) {
    int64_t lost = 0;
    for (const auto& [source, dropped] : *context.losses)
      if (contract::loss_drops_events(source)) lost += dropped;
    m.events_lost = lost;
  }
  m.io.requests = totals.io_count;
  m.io.bytes = totals.io_bytes;
  m.io.total_ns = totals.io_ns;
  m.io.p99_us = run_histogram_quantile(context, "io_us", 0.99);
  m.io.iowait_ns = totals.iowait_ns;
  m.io.cache_pages_added = totals.cache_pages_added;
  if (window.whole_run && window.length_ns() > 0)
    m.io.read_mb_s = static_cast<double>(totals.io_bytes) / 1e6 / (static_cast<double>(window.length_ns()) / 1e9);
  add_storage_device(run, m.io);
  return m;
}

std::vector<std::string> fully_stored_calls(const RunContext& context) {
  std::vector<std::string> ops;
  for (const CallTotals& call : context.calls)
    if (call.every_call_stored()) ops.push_back(call.op);
  return ops;
}

std::vector<CallLatencyRow> call_latency_table(const RunContext& context,
                                               const std::map<std::string, std::vector<int64_t>>& durations,
                                               bool window_is_whole_run) {
  std::vector<CallLatencyRow> rows;
  for (const CallTotals& call : context.calls) {
    CallLatencyRow row{call.op,  call.category, call.calls,    call.errors, call.bytes, {},
                       true,     true,          call.estimate, call.cut};
    auto stored = durations.find(call.op);
    if (call.every_call_stored() && stored != durations.end()) {
      std::vector<int64_t> values = stored->second;
      row.stats = latency_stats(values);
      row.whole_run = window_is_whole_run;
      if (!window_is_whole_run && row.stats.count == 0) continue;  // not called in the window
    } else {
      row.stats = histogram_stats(call);
      row.exact = false;
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CallLatencyRow& a, const CallLatencyRow& b) {
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
  auto group_of = [&](int64_t pid, const std::string& role, const std::string& comm,
                      std::optional<int64_t> rank) -> ProcessRow& {
    auto& row = groups[{pid, role}];
    if (row.threads == 0) {
      row.role = role;
      row.pid = pid;
      row.name = comm;
      row.rank = rank;
      row.processes = 1;
    }
    return row;
  };
  for (const auto& t : context.threads) {
    auto& row = group_of(t.pid, t.role, t.comm, t.rank);
    ++row.threads;
    lifetimes[{t.pid, t.role}].cover(t.start_ns.value_or(context.run.start_ns), t.exit_ns.value_or(run_end));
  }
  for (const auto& s : context.thread_stats) {
    auto it = thread_by_tid.find(s.tid);
    if (it == thread_by_tid.end()) {
      auto& row = group_of(s.pid, "other", "?", std::nullopt);
      ++row.threads;
      row.counters += s.counters;
    } else {
      groups[{it->second->pid, it->second->role}].counters += s.counters;
    }
  }
  std::vector<ProcessRow> rows;
  for (auto& [key, row] : groups) {
    row.lifetime_ns = lifetimes[key].length();
    fill_quantiles(context, {row.pid}, row);
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProcessRow& a, const ProcessRow& b) {
    return std::make_tuple(a.rank.value_or(-1), contract::role_rank(a.role), a.pid) <
           std::make_tuple(b.rank.value_or(-1), contract::role_rank(b.role), b.pid);
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
    if (row.lifetime_ns) total.lifetime_ns = std::max(total.lifetime_ns.value_or(0), *row.lifetime_ns);
  }
  std::vector<ProcessRow> out;
  for (auto& [role, total] : totals) {
    total.processes = static_cast<int>(pids[role].size());
    fill_quantiles(context, pids[role], total);
    out.push_back(total);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ProcessRow& a, const ProcessRow& b) {
                     return contract::role_rank(a.role) < contract::role_rank(b.role);
                   });
  return out;
}

std::optional<BucketBounds> run_histogram_quantile(const RunContext& context, const std::string& metric, double q) {
  return histogram_quantile(merged_histogram(context, metric, {}), q);
}

}  // namespace ingero::reports
