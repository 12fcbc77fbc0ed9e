// SPDX-License-Identifier: Apache-2.0
// The embedded eBPF tracer. Life cycle, driven by the harness:
//
//   auto t = Tracer::start(opts, db_path, run_id);   // load + attach; writer thread starts
//   launched: spawn the child paused; t->enroll(pid); release it
//   attached: t->attach(pid) for each running process
//   while it runs: t->poll();                         // every ~20-50 ms: probe CUDA / NCCL libraries
//                                                     // the traced processes have newly mapped (and,
//                                                     // each second, hand opts.live the totals so far)
//   auto totals = t->stop();                          // detach, drain, hand back the totals
//   db.write_totals(run_id, *totals);
//
// Destruction without stop() still detaches every probe and closes every map.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracer/cuda_probes.h"
#include "tracer/duty_cycle.h"
#include "tracer/live_totals.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

struct TraceOptions {
  bool system_wide = false;                  // no tgid filter: every process on the machine
  bool cuda_processes_only = false;          // system-wide: enrol only processes mapping a probed library
  std::vector<std::string> library_paths;    // --cudart: probe these instead of discovering
  CudaDetail cuda_detail = CudaDetail::latency;
  uint64_t call_stream_min_ns = 1'000'000;   // hot calls (launches) stored individually from this long
  uint64_t offcpu_min_ns = 100'000;          // stream off-CPU intervals at least this long
  uint64_t iowait_min_ns = 10'000;           // and I/O waits (offcpu_io) at least this long
  uint64_t runq_min_ns = 100'000;            // stream run-queue waits at least this long
  uint64_t mem_burst_pages = 64;             // page faults / allocations per burst event, at least
  uint64_t mem_burst_min_ns = 10'000'000;    // ... and spanning this long (bounds the event rate)
  uint32_t ringbuf_bytes = 32u << 20;        // per ring buffer (power of two, >= page size)
  size_t queue_capacity = 1u << 20;          // events buffered between ring consumer and writer
  bool gpu_samples = true;                   // sample the GPUs' utilisation through NVML while tracing
  bool wakers = true;                        // record the thread that woke each blocked interval
  // OOM kills from the OOM killer's tracepoint (mark_victim, Linux 6.8 on), else, and where this is off,
  // from the SIGKILL the kernel itself sends (run setting oom_kills_from).
  bool oom_victim_tracepoint = true;
  SamplingPolicy sampling;                   // duty cycle of hot calls (on at count and latency only)
  bool calibrate = true;                     // measure a probe hit's cost at start-up
  bool program_time = true;                  // time the kernel programs (BPF run-time statistics, while tracing)
  unsigned profile_hz = 49;                  // CPU profile samples per second of each CPU; 0: no profile
  uint64_t profile_bucket_ns = 100'000'000;  // profile_samples are counted per bucket of this width
  // A live view (metrics/): the totals so far handed here at most once a second while the tracer is
  // polled, and once more as it stops; the launched job's observer records are read for it.
  std::shared_ptr<LiveSink> live;
  std::optional<std::string> observer_dir;
  // Without an observer (attached, system-wide): the live view estimates the main loops' waits for data
  // from the wake-ups that ended them (tracer/live_waits.h), labelled estimated.
  bool live_wait_estimate = false;
  uint64_t health_interval_ns = 500'000'000;  // sample /proc memory, descriptors, /dev/shm this often; 0 off
  uint64_t hang_after_ns = 60'000'000'000;    // recorded for the analysis: no batch and every thread off CPU this long
  // The cap on the DB file (--db-max-mb; 0: none): the run's oldest events are dropped in whole time
  // slices to keep it under (tracer/event_writer.h), and so are its GPU and process samples before the cut.
  uint64_t db_max_bytes = 0;
};

// Bad option values, found before anything is created or loaded: bad input naming the flag.
Status validate(const TraceOptions& opts);
// Root (CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN) and kernel BTF, or an Error naming what
// is missing and suggesting sudo or --no-trace.
Status check_can_trace();

class Tracer {
 public:
  // Nothing is left attached when this fails.
  static Result<std::unique_ptr<Tracer>> start(const TraceOptions& opts, const std::string& db_path,
                                               int64_t run_id);
  virtual ~Tracer();

  // Adds a launched process (the root of the traced tree) to the in-kernel filter; its
  // descendants are enrolled by the kernel as they are forked.
  virtual Status enroll(pid_t root_pid) = 0;
  // Adds a running process, its threads and its descendants (from /proc) to the filter;
  // children it forks from now on are enrolled by the kernel. A pid that does not exist
  // or exits meanwhile is bad input naming it.
  virtual Status attach(pid_t pid) = 0;
  // Probes CUDA / NCCL libraries the traced processes have mapped since the last call
  // (nothing to do when library_paths were given). In system-wide CUDA mode, also
  // enrolls the processes that map one.
  virtual void poll() = 0;
  // Detaches, drains the rings and the writer, and hands back the totals. Call once.
  virtual Result<TraceTotals> stop() = 0;
};

}  // namespace ingero::tracer
