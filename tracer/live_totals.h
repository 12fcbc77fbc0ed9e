// SPDX-License-Identifier: Apache-2.0
// What a running trace knows so far, for a live view (metrics/ serves it to Prometheus): counters
// since tracing began, read from the in-kernel maps and the Python observer's records at most once a
// second while the harness polls the tracer, and once more as it stops. The DB stays the record;
// this is a view of the same counters, summed to labels of low cardinality (role, rank, loader,
// function), never per batch or per thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ingero::tracer {

// The batch-wait histogram's upper bounds in seconds (the +Inf bucket follows): a loader that
// keeps up waits well under a millisecond; a starving one tens of milliseconds to seconds.
inline constexpr std::array<double, 13> kBatchWaitBounds = {0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                            0.05,   0.1,    0.25,  0.5,    1,     2.5};

// The threads of one role in one rank (no rank: a process without RANK in its environment), summed.
struct LiveThreadGroup {
  std::string role;  // contract::kRole*
  std::optional<int> rank;
  uint64_t oncpu_ns = 0;
  uint64_t offcpu_preempted_ns = 0;  // runnable but switched out
  uint64_t offcpu_io_ns = 0;         // blocked in I/O wait
  uint64_t offcpu_blocked_ns = 0;    // blocked otherwise (locks, queues, sleeps)
  uint64_t runq_ns = 0;              // runnable, waiting for a CPU (after a wakeup or a preemption)
  uint64_t page_faults = 0;
  uint64_t copy_on_write_bytes = 0;  // pages copied at write faults (x86), 4 KiB each
};

// One CUDA / NCCL function over every traced thread.
struct LiveCalls {
  std::string function;
  uint64_t calls = 0;   // exact, or estimated from a duty cycle (then estimated is set)
  bool estimated = false;
  uint64_t errors = 0;
  // Timed calls' latencies: log2 nanosecond slots as the kernel keeps them (slot i: [2^i, 2^(i+1)) ns),
  // their count and their sum.
  std::vector<uint64_t> latency_slots;
  uint64_t timed = 0;
  uint64_t timed_ns = 0;
};

// One DataLoader of one process, as the observer recorded it (or our workload's record, at its run's
// end); or, estimated, the waits of one process's main loop for any of its loaders: the blocked
// intervals of its main thread that a loader worker or the pin-memory thread ended (an attached job,
// a system-wide trace). An estimate is a lower bound: intervals under the trace's off-CPU threshold
// are not seen, nor next()'s time on the CPU; its batches are those wake-ups.
struct LiveLoaderWaits {
  int pid = 0;
  int loader = 0;  // -1: not known (an estimate)
  bool estimated = false;
  std::optional<int> rank;
  std::string role;                     // of the process that iterated it (main)
  uint64_t batches = 0;
  uint64_t wait_ns = 0;
  std::vector<uint64_t> wait_buckets;   // counts per kBatchWaitBounds bucket, +Inf last (not cumulative)
  std::map<std::string, std::string> knobs;  // num_workers, prefetch_factor, pin_memory, ... as text
};

struct LiveGpu {
  unsigned index = 0;
  std::string uuid;   // as NVML gives it ("GPU-..."), which is what DCGM's UUID label holds
  double busy_ratio = 0;  // the last gpu_util sample, 0-1
};

struct LiveLoss {
  std::string source;  // contract::kKernelLossSources, "queue", "writer"
  uint64_t dropped = 0;
};

// Worker health (tracer/process_sampler.h): the processes of one role in one rank as last sampled.
struct LiveHealth {
  std::string role;  // of the process's main thread
  std::optional<int> rank;
  uint64_t processes = 0;
  std::optional<uint64_t> rss_bytes;            // summed
  std::optional<uint64_t> private_dirty_bytes;  // summed (copy-on-write growth of workers shows here)
  std::optional<uint64_t> open_fds;             // the most any one process has open
  std::optional<uint64_t> fd_limit;             // the lowest soft RLIMIT_NOFILE among them
};

struct LiveShm {
  uint64_t size_bytes = 0;
  uint64_t free_bytes = 0;  // the least any traced process sees free
};

struct LiveTotals {
  int64_t run_id = 0;  // counters restart with each run (a sweep's runs): a new id says so
  std::vector<LiveThreadGroup> threads;
  std::vector<LiveCalls> calls;
  std::vector<LiveLoaderWaits> loaders;
  std::vector<LiveGpu> gpus;
  std::vector<LiveLoss> losses;
  std::vector<LiveHealth> health;
  std::optional<LiveShm> shm;
  std::map<std::string, uint64_t> oom_kills;  // by the victim's role, since tracing began
  // How long every traced thread of a rank has been off the CPU (0 while one runs), by rank (-1: none):
  // past --hang-after-s with no batch, a hang.
  std::map<int, double> stalled_seconds;
  // What probe hits and the tracer's kernel programs cost the traced threads, over their on-CPU time
  // (none until a probe's cost is known and some thread ran).
  std::optional<double> tracing_cost_ratio;
};

// Where the tracer hands its live totals (metrics::LiveMetrics). Called from the harness's thread.
class LiveSink {
 public:
  virtual ~LiveSink() = default;
  virtual void publish(const LiveTotals& totals) = 0;
};

}  // namespace ingero::tracer
