// SPDX-License-Identifier: Apache-2.0
// Worker health for the live view (tracer/live_totals.h): the health sampler's latest sample of each
// traced process, and the OOM kills the rings reported, summed by the role and rank of each process
// at each publish. The DB keeps every sample (process_samples); this keeps the last.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <vector>

#include "tracer/live_totals.h"
#include "tracer/process_sampler.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

class LatestHealth {
 public:
  // A round of the sampler (its thread): processes not in it are gone; a row without smaps_rollup
  // keeps the private dirty last read.
  void update(const std::vector<ProcessSample>& round);
  // An OOM kill of a traced process (the ring consumer's thread).
  void add_oom_kill(pid_t victim);
  // By the role and rank of each process's main thread, as the threads are known now.
  void fill(const std::vector<ThreadInfo>& threads, LiveTotals& live) const;

 private:
  mutable std::mutex mutex_;
  std::map<pid_t, ProcessSample> latest_;
  std::map<pid_t, uint64_t> oom_kills_;
};

// Where a thread is now, from the kernel's task clocks: on the CPU since (0: off it), off it since.
struct ThreadClock {
  uint64_t oncpu_since = 0;
  uint64_t offcpu_since = 0;
};
// How long every live thread of a job's roles (main, worker, pin) in each rank (-1: none) has been off
// the CPU at now_ns: 0 while one of them runs, or while one's whereabouts are unknown.
std::map<int, double> stalled_by_rank(const std::vector<ThreadInfo>& threads,
                                      const std::map<pid_t, ThreadClock>& clocks, uint64_t now_ns);

}  // namespace ingero::tracer
