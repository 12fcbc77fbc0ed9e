// SPDX-License-Identifier: Apache-2.0
// Worker health: the DataLoader failures that end a job rather than slow it, seen coming and tied to a
// process. From the health sampler's process_samples (memory, descriptors, /dev/shm, where the main
// thread slept), the kernel's oom_kill and fatal_signal events and the batches:
// - memory growing in a process (copy-on-write of the dataset's Python objects when it is the private
//   memory of a forked worker), per batch and per epoch, projected to the epoch's end;
// - a kill by the OOM killer, with the victim's memory curve and the loader's knobs that multiply it;
// - /dev/shm: the batches in flight against the free space the job sees, and the SIGBUS when it ran out;
// - descriptors near RLIMIT_NOFILE;
// - a hang: no batch, and every worker and main thread asleep, for longer than hang_after_ns.
// Numbers only; reports/text/health_text.h words them. A healthy run has none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

struct HealthThresholds {
  int64_t growth_min_bytes = 64ll << 20;  // growth of private memory worth naming
  double still_growing_share = 0.25;      // ... of which the later half of the samples holds at least this
  double cow_rss_share = 0.5;             // copy-on-write: the RSS grew less than this share of it
  double shm_used_share = 0.8;            // /dev/shm this full is a warning
  double shm_in_flight_share = 0.8;       // ... and batches in flight needing this share of its free space
  double fd_share = 0.8;                  // descriptors this close to RLIMIT_NOFILE are a warning
  int64_t hang_after_ns = 60'000'000'000;  // the run's setting (--hang-after-s) when it has one
  double hang_awake_share = 0.25;          // a hung process may be seen running in this share of samples
};

enum class GrowthMeasure { copy_on_write_faults, private_dirty, rss };
const char* growth_measure_code(GrowthMeasure measure);  // "copy_on_write_faults", ...

enum class HealthKind { memory_growth, oom_kill, shm_exhausted, fd_limit, hang };
const char* health_kind_code(HealthKind kind);  // "memory_growth", "oom_kill", ...

// What the loader's knobs say (the observer's loaders table; empty where unknown).
struct LoaderKnobs {
  std::optional<int64_t> num_workers;
  std::optional<int64_t> prefetch_factor;
  std::optional<int64_t> batch_size;
  std::optional<int64_t> batches_per_epoch;
  std::string sharing_strategy;  // torch.multiprocessing's, where the observer saw it
  // Batches the loader keeps in flight: num_workers x prefetch_factor.
  std::optional<int64_t> in_flight_batches() const;
};

// A process's memory over the samples.
struct MemoryCurve {
  int64_t first_ns = 0, last_ns = 0;
  int64_t samples = 0;
  std::optional<int64_t> private_dirty_first, private_dirty_last;
  std::optional<int64_t> rss_first, rss_last, rss_peak;
  std::optional<int64_t> pss_last;
  int64_t rollups = 0;  // the samples that read smaps_rollup (private dirty)
};

struct HealthFinding {
  HealthKind kind = HealthKind::memory_growth;
  Severity severity = Severity::medium;
  int64_t pid = 0;
  std::string role;  // main | worker | other: the process's main thread's
  std::string comm;
  int64_t ts_ns = 0;  // when it was seen (the kill, the signal, the hang's start, the last sample)
  MemoryCurve memory;
  LoaderKnobs knobs;
  // memory_growth
  // What growth_bytes measured: a worker's copy-on-write faults (the tracer's page_faults bytes), else
  // its private dirty memory (smaps_rollup); another process's RSS.
  GrowthMeasure growth_measure = GrowthMeasure::private_dirty;
  int64_t growth_bytes = 0;
  double growth_bytes_per_s = 0;
  std::optional<double> growth_bytes_per_batch;  // over the batches delivered meanwhile
  std::optional<double> growth_bytes_per_epoch;  // x batches_per_epoch
  bool copy_on_write = false;  // private memory of a forked worker, its RSS steady: pages it shared at fork
  bool growth_from_fork = false;  // measured from the worker's fork (no private memory then) to its one rollup
  std::optional<int64_t> projected_epoch_end_bytes;  // its private memory at the epoch's end, at this rate
  std::optional<int64_t> machine_memory_bytes;
  int workers_growing = 0;  // forked workers growing alike (the finding names the fastest)
  // oom_kill
  std::optional<int64_t> invoker_pid;  // whose allocation invoked the OOM killer
  bool oom_seen_as_sigkill = false;    // the kernel's own SIGKILL (before Linux 6.8), not its OOM tracepoint
  // shm_exhausted
  bool sigbus = false;  // a traced process died of SIGBUS
  std::optional<int64_t> shm_size_bytes, shm_used_peak_bytes;
  std::optional<int64_t> shm_free_bytes;   // the most of it free at a sample: the room the loader has
  std::optional<int64_t> batch_bytes;      // the largest batch's tensor bytes (the observer's)
  std::optional<int64_t> in_flight_bytes;  // batch_bytes x num_workers x prefetch_factor
  // fd_limit
  std::optional<int64_t> fds_peak, fd_limit;
  // hang
  int64_t hang_ns = 0;
  struct Waiter {
    int64_t pid = 0;
    std::string role;
    std::string wchan;                // where its main thread slept throughout
    std::optional<int64_t> woken_by;  // the thread whose wakeup ended the sleep, when it ended
    // Where its main thread waited in Python (its innermost frame), read when the tracer saw the hang.
    std::optional<ProfileFrame> python_frame;
  };
  std::vector<Waiter> waiters;
  // what ended the run, when it died of this (the job's exit status or signal)
  std::optional<int> fatal_signal;
};

struct HealthAnalysis {
  HealthThresholds thresholds;
  bool sampled = false;  // the run has process samples
  int64_t interval_ns = 0;
  std::vector<HealthFinding> findings;  // most severe first
};

// oom_kill and fatal_signal events, and the batches' waits, as the analysis reads them.
struct HealthInputs {
  const RunContext& context;
  const std::vector<ProcessSampleRecord>& samples;
  const EventSet& events;  // oom_kill, fatal_signal, batch_wait, offcpu_blocked (of the main threads)
  const std::vector<CopyOnWriteBytes>& copy_on_write;  // by pid, then time
  std::optional<int64_t> batch_bytes = std::nullopt;  // the largest batch's tensor bytes, where counted
};
// The ops HealthInputs::events holds.
const std::vector<std::string>& health_ops();

HealthAnalysis analyze_worker_health(const HealthInputs& inputs);
// A hang's waiters: the thread whose wakeup ended each one's sleep (offcpu_blocked events of their
// main threads overlapping the hang), where one did.
void add_hang_wakers(HealthAnalysis& analysis, const EventSet& blocked);
// A hang's waiters: where each one's main thread waited in Python (the stacks of its `hang` events).
void add_hang_stacks(HealthAnalysis& analysis, const std::vector<EventStackRecord>& hang_stacks);

}  // namespace ingero::reports
