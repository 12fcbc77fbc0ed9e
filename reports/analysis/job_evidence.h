// SPDX-License-Identifier: Apache-2.0
// Evidence about a traced job that does not come from its own batch timings, so that a job we
// did not write gets a verdict on the same scale as our workloads:
//   - batch waits estimated from the kernel's wake-ups (attached or system-wide traces, where
//     nothing can be injected): the main thread's blocked intervals that a DataLoader worker
//     or the pin-memory thread ended;
//   - the main thread's share of time on CPU outside CUDA calls (host-bound: the loop is busy,
//     not waiting);
//   - the GPU's busy share, sampled by NVML;
//   - the configuration of the DataLoader the job iterated most (the Python observer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/run_metrics.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

struct WakeupEstimate {
  WakeupWaits parts;
  EventList waits;  // the estimated batch waits (blocked intervals a producer ended)
};

// What the kernel recorded, over the window, of the main threads and of the other threads of their
// processes (not the producers): the events estimate_waits_from_wakeups reads.
struct WakeupTrace {
  EventList blocked;          // main threads' offcpu_blocked (arg = the waker)
  EventList preempted;        // main threads' offcpu_preempted
  EventList handoff_blocked;  // the other threads' offcpu_blocked (arg = the waker)
  EventList handoff_runq;     // the other threads' runq_wait
};

// The estimate: a main thread's blocked interval that a loader worker or the pin-memory thread ended
// is a wait for data; it runs from the switch out to the switch in, so it holds the run-queue wait
// after the wake-up. On a busy machine next() also spends time around the batch's arrival that no
// wake-up marks. It is estimated from the trace, per main thread:
//   - the hand-offs: the instants the main thread woke another thread of its own process (in a torch
//     DataLoader, the queue feeder that sends the next index to a worker, the last thing next() does
//     before it returns, and GIL hand-offs), from those threads' blocked intervals and run-queue waits;
//   - r, the CPU to receive a batch (unpickle it, rebuild its tensors from shared memory): the median
//     on-CPU time from a producer's wake-up to the next hand-off;
//   - counted as next()'s, and labelled an estimate: from each producer's wake-up to the next hand-off
//     (or the next producer-ended block), when that stretch holds at most 3 r of CPU; the time off the
//     CPU within the last r/2 of CPU before each producer-ended block (getting ready to wait for the
//     batch); the preemption that begins within 50 us of a hand-off (the woken thread taking the CPU
//     before next() returns).
// Without a hand-off r is unknown and only the blocked intervals count.
// Empty when the run has no main thread or no producer thread: then wake-ups cannot say what waited
// for data.
std::optional<WakeupEstimate> estimate_waits_from_wakeups(const RunContext& context, const WakeupTrace& trace,
                                                          const TimeWindow& window);
// The main threads whose blocked intervals estimate_waits_from_wakeups reads.
std::vector<int64_t> main_thread_ids(const RunContext& context);
// The other threads of the main threads' processes, neither producers nor main: where hand-offs land.
std::vector<int64_t> handoff_thread_ids(const RunContext& context);

// Main threads' on-CPU time outside CUDA calls over their lifetime (whole run only).
std::optional<double> main_host_share(const RunContext& context, const TimeWindow& window);

// NVML's samples over the window: the mean of each metric over the GPUs the job kept busy (any
// sample above 0), or over every GPU when none was.
struct GpuBusy {
  std::optional<double> gpu_util;   // 0..1: share of time a kernel was running
  std::optional<double> sm_active;  // 0..1: GPM SM activity, where sampled
  int64_t samples = 0;
  int gpus = 0;
};
std::optional<GpuBusy> gpu_busy(const RunContext& context, const TimeWindow& window);

// The DataLoader the job iterated most, as a configuration (mode "python": the real PyTorch
// DataLoader); nullopt when the observer saw none.
std::optional<RunConfigSummary> observed_config(const RunContext& context);
// The run's workload configuration, else the observed one, else (attached: nothing was injected) the
// worker processes the trace saw as num_workers; an empty mode when none of them exists.
RunConfigSummary effective_config(const RunContext& context);

}  // namespace ingero::reports
