// SPDX-License-Identifier: Apache-2.0
// What the tracer hands back, as a value, when it stops: everything about a run that is
// not an individual event. tracer/trace_db writes it; the harness summarises it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bpf/events.h"
#include "tracer/cpu_profile.h"
#include "tracer/duty_cycle.h"
#include "tracer/nvml_sampler.h"
#include "tracer/process_sampler.h"

namespace ingero::tracer {

struct ThreadInfo {
  pid_t tid = 0;
  pid_t pid = 0;
  std::optional<pid_t> ppid;  // set for a process's main thread
  std::string comm;
  std::string role;           // contract::kRole*
  std::optional<int> rank;    // torch.distributed RANK of the process
  std::optional<uid_t> uid;
  std::optional<uint64_t> start_ns;
  std::optional<uint64_t> exit_ns;
  std::optional<int> exit_code;
  // Facts the roles are decided from (not stored): the process was launched or attached
  // (a root), or is a fork of its parent that never exec'd (a copy of its parent's program).
  bool root = false;
  bool forked_copy = false;
  std::vector<std::string> cmdline;  // a process found running (attach): its command line, from /proc
  // A Python process (its executable python*): the PYTHONPATH it exec'd with ("" when unset), so
  // that a launched job's harness can tell a Python the observer was taken off (not stored).
  std::optional<std::string> python_path;
};

// One row of the losses table.
struct TraceLoss {
  std::string source;               // contract::kKernelLossSources, "queue", "writer"
  uint64_t dropped = 0;
  std::optional<uint64_t> offered;  // events the source tried to deliver, where counted
};

struct ProbedLibrary {
  std::string path;
  std::string kind;                  // "cuda_runtime" | "cuda_driver" | "nccl"
  std::vector<std::string> attached;
  std::vector<std::string> missing;  // symbols the library does not export
};

// A hot function duty-cycled in one process (pid 0: in every process, system-wide): its
// windows and the count estimated from them (call_sampling table), once its span is final.
struct SampledFunction {
  uint32_t pid = 0;
  uint16_t op = 0;
  SampledCalls calls;
  CallEstimate estimate;
};

struct TraceTotals {
  std::vector<ThreadInfo> threads;
  std::vector<std::pair<uint32_t, ib_thread_stats>> thread_stats;  // by tid
  std::vector<std::pair<ib_hist_key, ib_hist>> histograms;
  std::vector<std::pair<ib_call_key, ib_call_stats>> call_stats;
  std::vector<std::pair<ib_call_hist_key, ib_call_hist>> call_histograms;
  std::vector<TraceLoss> losses;
  std::vector<std::pair<std::string, std::string>> settings;  // run_settings rows
  std::vector<ProbedLibrary> libraries;
  std::vector<GpuInfo> gpus;           // NVML's view of the GPUs while tracing
  std::vector<GpuSample> gpu_samples;
  std::vector<ProcessSample> process_samples;  // the health sampler's rows (process_samples table)
  std::string cuda_detail;            // the --cuda-detail level used
  std::vector<SampledFunction> sampled;
  CpuProfile profile;                 // empty when profiles were off
  std::vector<std::string> problems;  // what went wrong while tracing, in words
  uint64_t events_written = 0;

  // Events that could not be delivered (sources that lose events, not only totals).
  uint64_t events_lost() const;
  // Some CUDA or NCCL function was probed.
  bool calls_traced() const;
};

}  // namespace ingero::tracer
