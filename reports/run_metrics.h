// Per-run metrics: timings from the result record and the batch events, the
// input-bound verdict, CUDA API latency per function, and the per-process table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/stats.h"
#include "reports/trace_data.h"

namespace ingero::reports {

// TensorFlow input-pipeline analyzer's classes, on the share of time waiting for input.
inline constexpr double kHighlyInputBoundShare = 0.20;
inline constexpr double kModeratelyInputBoundShare = 0.05;

enum class InputBound { highly, moderately, not_input_bound, unknown };
const char* input_bound_name(InputBound verdict);  // "HIGHLY input-bound", ...
InputBound classify_wait_share(std::optional<double> wait_fraction);

// The part of the run being analysed: all of it, or its last N seconds.
struct TimeWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool whole_run = true;
  int64_t length_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool contains_start(const Event& e) const { return e.ts_ns >= start_ns && e.ts_ns < end_ns; }
};
TimeWindow analysis_window(const RunRecord& run, const EventSet& events, std::optional<double> since_s);

struct RunConfigSummary {
  std::string mode;  // empty when the run has no workload config
  int num_workers = 0;
  int prefetch_factor = 0;
  bool pin_memory = false;
  bool persistent_workers = false;
  bool shuffle = false;
  int cpus = 0;  // 0: not pinned
  std::optional<int64_t> samples;
  std::optional<int64_t> features;
};
RunConfigSummary summarize_config(const RunRecord& run);
// Cores the workload could use: the pinned count, else the machine's.
std::optional<int> usable_cores(const RunRecord& run);

struct RunMetrics {
  double window_s = 0;
  std::optional<double> epoch_median_s, epoch_min_s, epoch_max_s;
  std::vector<double> epoch_seconds;
  std::optional<double> samples_per_s;
  std::optional<double> h2d_bytes_per_epoch;
  std::optional<double> h2d_gbps;
  std::optional<double> wait_fraction;
  std::string wait_fraction_source;  // "result record" | "batch_wait events" | ""
  LatencyStats batch_wait;           // from the events in the window
  LatencyStats batch_compute;
  InputBound verdict = InputBound::unknown;
  std::optional<int> cores;
  std::optional<double> cpu_busy_share;  // traced threads' on-CPU time / (wall × cores)
  int64_t events_in_window = 0;
  int64_t events_lost = 0;
};
RunMetrics compute_run_metrics(const RunContext& context, const EventSet& events,
                               const TimeWindow& window);

struct CudaLatencyRow {
  std::string function;
  std::string category;  // cuda_runtime | cuda_driver
  LatencyStats stats;
};
// Every CUDA op with calls starting in the window, largest total time first.
std::vector<CudaLatencyRow> cuda_latency_table(const EventSet& events, const TimeWindow& window);
bool is_cuda_category(const std::string& category);

// One process or role group. Per-process rows split the main process by role
// (main thread, pin thread, others); role totals add up every row of a role.
struct ProcessRow {
  std::string role;
  std::string name;
  int64_t pid = 0;  // 0 in role totals
  int processes = 0;
  int threads = 0;
  ThreadCounters counters;               // summed over the row's threads
  std::optional<BucketBounds> runq_p50;  // bucket bounds from the process's log2 histogram
  std::optional<BucketBounds> runq_p99;
  std::optional<int64_t> lifetime_ns;
};
std::vector<ProcessRow> process_table(const RunContext& context);
std::vector<ProcessRow> role_totals(const RunContext& context, const std::vector<ProcessRow>& rows);
// Run-queue latency quantile over all the run's processes (bucket bounds).
std::optional<BucketBounds> run_queue_quantile(const RunContext& context, double q);

}  // namespace ingero::reports
