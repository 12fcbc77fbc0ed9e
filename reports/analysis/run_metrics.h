// SPDX-License-Identifier: Apache-2.0
// Per-run metrics: timings from the result record and the batch events, the input-bound
// verdict, library-call latency per function, I/O, and the per-process table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/stats.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// TensorFlow input-pipeline analyzer's classes, on the share of time waiting for input.
inline constexpr double kHighlyInputBoundShare = 0.20;
inline constexpr double kModeratelyInputBoundShare = 0.05;

// When the main loop is not waiting, what it is doing instead: busy on the CPU outside CUDA
// calls at least this share of its time (host-bound), or the GPU busy at least this share
// (GPU-bound, NVML).
inline constexpr double kHostBoundShare = 0.50;
inline constexpr double kGpuBoundShare = 0.80;

// run_failed and nothing_measured: no verdict at all, whatever was timed (a crash's or a start-up's
// timings say nothing about the data loading).
// cpu_compute_bound: host-bound, and the CPU profile shows the main thread computing the model
// (reports/analysis/profile_analysis.h): the job trains on the CPU, so no loader change helps.
enum class InputBound { highly, moderately, not_input_bound, host_bound, gpu_bound, unknown, run_failed, nothing_measured,
                        cpu_compute_bound };
const char* input_bound_name(InputBound verdict);  // "HIGHLY input-bound", ...
InputBound classify_wait_share(std::optional<double> wait_fraction);
// The wait share's class, refined where the loop is not waiting (or its waits are unknown): GPU-bound
// when the GPU is busy, host-bound when the main thread is busy on the CPU in a job that uses a GPU
// (on a CPU-only job the CPU is the device), and also, when the waits are unknown, in any job.
InputBound classify_run(std::optional<double> wait_fraction, std::optional<double> main_host_share,
                        std::optional<double> gpu_util, bool uses_gpu);

// Where a run's batch waits came from.
enum class BatchSource { none, workload_record, workload_events, observer, wakeups };
const char* batch_source_name(BatchSource source);  // "result record", "batch_wait events", "observer", ...

// A blocked interval that the pin-memory thread ended and that is shorter than CPython's GIL
// switch interval (5 ms) may be a GIL hand-off rather than a batch arriving.
inline constexpr int64_t kGilSwitchIntervalNs = 5'000'000;

// Batch waits estimated from the kernel's wake-ups (reports/analysis/job_evidence.h).
struct WakeupWaits {
  int64_t by_workers_ns = 0;   // main blocked until a worker process woke it
  int64_t by_pin_ns = 0;       // ... until the pin-memory thread woke it
  int64_t pin_short_ns = 0;    // of by_pin_ns, intervals shorter than CPython's GIL switch interval
  int64_t by_others_ns = 0;    // ended by anything else (not counted as waiting for data)
  int64_t main_threads = 0;
  int64_t denominator_ns = 0;  // the main threads' time in the window
  // An estimate of next()'s time around each batch's arrival beyond those blocked intervals (the
  // blocked intervals already hold the run-queue wait from the wake-up to running again):
  // receiving the batch on the CPU up to the next index hand-off, and the time the main thread
  // was runnable but not running (or briefly blocked on another thread) while it was getting
  // ready to block for the batch, receiving it, or handing off the next index
  // (reports/analysis/job_evidence.h says how). Zero when no hand-off was seen.
  int64_t receive_ns = 0;
  int64_t receive_runq_ns = 0;  // of receive_ns, off the CPU (preempted, or blocked on another thread)
  int64_t handoffs = 0;         // the main threads' wake-ups of a thread of their own process (index hand-offs)
  std::optional<int64_t> receive_cpu_ns;  // median CPU from a producer's wake-up to the next hand-off
  double share() const;        // (by_workers + by_pin + receive) / denominator
  double share_without_short_pin() const;
  double blocked_share() const;  // (by_workers + by_pin) / denominator: without the receive estimate
};

// The part of the run being analysed: all of it, or its last N seconds.
struct TimeWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool whole_run = true;
  int64_t length_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool contains_start(const Event& e) const { return e.ts_ns >= start_ns && e.ts_ns < end_ns; }
};
// last_event_end: the end of the run's last event, for runs that never recorded their end.
TimeWindow analysis_window(const RunRecord& run, std::optional<int64_t> last_event_end,
                           std::optional<double> since_s);

struct RunConfigSummary {
  std::string mode;  // empty when the run has no workload config
  int num_workers = 0;
  int prefetch_factor = 0;
  bool pin_memory = false;
  bool persistent_workers = false;
  bool shuffle = false;
  int cpus = 0;  // 0: not pinned
  int ranks = 1;
  std::optional<int64_t> samples;
  std::optional<int64_t> features;
  std::optional<int64_t> batch_size;
  std::string storage = "memory";  // memory | files | shards: where the dataset lives
  std::string format = "raw";      // raw | jpeg
  std::string page_cache;          // cold | warm; empty for a dataset in memory
};
RunConfigSummary summarize_config(const RunRecord& run);
// Cores the workload could use: the pinned count, else the machine's.
std::optional<int> usable_cores(const RunRecord& run);
// Measured epoch times of a run's result record (empty when none were measured).
std::vector<double> measured_epochs(const RunRecord& run);

// A run whose epochs were only their first batches (--max-batches): how many of how many.
struct EpochCut {
  int64_t measured = 0;
  int64_t whole = 0;
};
std::optional<EpochCut> epoch_cut(const nlohmann::json& config);
// A run's epoch times in whole epochs: measured ones as they are; a bounded epoch of m batches
// extended by the batches it did not run at its own steady pace, (last batch end - first batch
// end) / (m - 1) from its batch records, so that what an epoch pays once (the order, the
// workers' start-up, all in its first batch) is not multiplied; without those records, scaled by
// whole / m. An estimate, labelled where it is shown. Sweeps compare these, so that points
// measured on different cuts stay comparable.
std::vector<double> whole_epoch_seconds(const nlohmann::json& config, const nlohmann::json& result);
std::vector<double> whole_epoch_seconds(const RunRecord& run);
double whole_epoch_scale(const nlohmann::json& config);  // whole / measured batches (1: whole epochs)

struct IoSummary {
  int64_t requests = 0;
  int64_t bytes = 0;
  int64_t total_ns = 0;
  std::optional<BucketBounds> p99_us;  // log2 bucket over every request
  int64_t iowait_ns = 0;               // the traced threads' sleeps in I/O wait (schema 5 on)
  int64_t cache_pages_added = 0;       // pages their reads brought into the page cache
  std::optional<double> read_mb_s;     // bytes over the whole run's window (MB = 10^6 bytes)
  // The sequential read rate of the device holding the dataset, measured by the workload
  // (the result record's storage.device); empty where none was measured.
  std::optional<double> device_read_mb_s;
  std::string device_name;
};


// What each epoch's first batch waited for, beyond the steady loop (observer batches).
enum class StartupWait {
  worker_startup,  // the loader's workers starting (fork to ready)
  iterator_setup,  // no workers: the iterator's set-up (the sampler's order, the dataset's first fetch)
};
// An epoch's start-up this share of the whole epoch or more is a cause of its own (short epochs pay
// it every time).
inline constexpr double kStartupMattersShare = 0.05;
struct EpochStartup {
  StartupWait waited_for = StartupWait::iterator_setup;
  int64_t epochs = 0;   // first batches counted apart
  int64_t wait_ns = 0;  // their waits, in all
  int num_workers = 0;
  bool persistent_workers = false;
  int64_t workers_started = 0;              // worker_start events: workers measured from fork to ready
  std::optional<int64_t> worker_ready_ns;   // their mean fork-to-ready time
  std::optional<int64_t> batches_per_epoch; // len(loader), as the observer saw it
  std::optional<int64_t> steady_step_ns;    // a batch's mean wait + compute, start-up waits left out
  // An estimate: one epoch's first-batch wait over the epoch it starts, taken as that wait plus
  // batches_per_epoch steady steps.
  std::optional<double> share_of_epoch;
  int64_t per_epoch_ns() const { return epochs > 0 ? wait_ns / epochs : 0; }
  bool matters() const { return share_of_epoch && *share_of_epoch >= kStartupMattersShare; }
};

struct RunMetrics {
  double window_s = 0;
  std::optional<double> epoch_median_s, epoch_min_s, epoch_max_s;
  std::vector<double> epoch_seconds;
  std::optional<double> samples_per_s;
  std::optional<double> h2d_bytes_per_epoch;
  std::optional<double> h2d_gbps;
  std::optional<double> wait_fraction;
  std::string wait_fraction_source;  // batch_source_name(batch_source), "" when none
  // A user's job (observer batches): each epoch's first batch, whose wait is the workers'
  // start-up, is counted apart from the steady loop's share (a trace of a few minutes of an
  // hours-long epoch would otherwise be judged by its start-up).
  int64_t startup_batches = 0;
  int64_t startup_wait_ns = 0;
  std::optional<double> wait_fraction_with_startup;  // the share those batches included
  std::optional<EpochStartup> startup;               // what those batches waited for, when there were any
  BatchSource batch_source = BatchSource::none;
  std::optional<WakeupWaits> wakeups;      // attach / system-wide: the estimate's parts
  std::optional<double> main_host_share;   // main threads on CPU outside CUDA calls / their time
  std::optional<double> gpu_util;          // NVML: share of time a kernel ran (mean over busy GPUs)
  std::optional<double> sm_active;         // NVML GPM: SM activity
  int gpus_sampled = 0;
  bool gpu_over_loop = false;              // gpu_util covers the training loop, not the whole window
  LatencyStats batch_wait;           // from the events in the window
  LatencyStats batch_compute;
  InputBound verdict = InputBound::unknown;
  std::string run_error;  // run_failed, nothing_measured: why the run ended, as it stored it
  std::optional<int> cores;
  std::optional<double> cpu_busy_share;  // traced threads' on-CPU time / (wall × cores)
  int64_t events_in_window = 0;
  std::optional<int64_t> events_lost;    // empty: never recorded (the run's harness died)
  IoSummary io;
};
RunMetrics compute_run_metrics(const RunContext& context, const EventSet& batches, const TimeWindow& window,
                               int64_t events_in_window);

// One probed function (CUDA runtime/driver, NCCL): counts over the whole run (exact, or
// estimated where the function was duty-cycled); latency
// percentiles exact over the window when every call was stored as an event, else the upper
// bounds of the kernel's log2 buckets over the whole run.
struct CallLatencyRow {
  std::string function;
  std::string category;  // cuda_runtime | cuda_driver | nccl
  int64_t calls = 0;     // entered the function
  int64_t errors = 0;
  int64_t bytes = 0;
  LatencyStats stats;    // over the timed calls (count = how many)
  bool exact = true;     // false: p50/p90/p99 are log2 bucket upper bounds
  bool whole_run = true; // the numbers cover the whole run (not only the window)
  std::optional<CountEstimate> estimate;  // duty-cycled: calls are the probed ones, this the whole count
  std::optional<int64_t> cut;             // probed calls not timed (CallTotals::cut)
  int64_t count() const { return estimate ? estimate->calls : calls; }
};
// durations[op] = every stored duration of op in the window (asked only for ops stored in full).
std::vector<CallLatencyRow> call_latency_table(const RunContext& context,
                                               const std::map<std::string, std::vector<int64_t>>& durations,
                                               bool window_is_whole_run);
// Ops whose every call was stored, so that call_latency_table can be exact.
std::vector<std::string> fully_stored_calls(const RunContext& context);

// One process or role group. Per-process rows split the main process by role
// (main thread, pin thread, others); role totals add up every row of a role.
struct ProcessRow {
  std::string role;
  std::string name;
  int64_t pid = 0;  // 0 in role totals
  std::optional<int64_t> rank;
  int processes = 0;
  int threads = 0;
  ThreadCounters counters;                // summed over the row's threads
  std::optional<BucketBounds> runq_p50;   // µs bucket bounds from the process's log2 histogram
  std::optional<BucketBounds> runq_p99;
  std::optional<BucketBounds> offcpu_p99;
  std::optional<int64_t> lifetime_ns;
};
std::vector<ProcessRow> process_table(const RunContext& context);
std::vector<ProcessRow> role_totals(const RunContext& context, const std::vector<ProcessRow>& rows);
// Quantile over all the run's processes of one µs histogram metric (bucket bounds).
std::optional<BucketBounds> run_histogram_quantile(const RunContext& context, const std::string& metric, double q);

}  // namespace ingero::reports
