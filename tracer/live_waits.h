// SPDX-License-Identifier: Apache-2.0
// The live estimate of a job's DataLoader waits where no observer records them (an attached job, a
// system-wide trace): a process main thread's blocked intervals, by the thread whose wake-up ended
// each, as the ring consumer sees them; at each publish, those a loader worker or the pin-memory
// thread ended are the main loop's waits for data (tracer/live_totals.h, LiveLoaderWaits). explain's
// estimate (reports/analysis/job_evidence.h) does more with the whole trace; this one is its core,
// a lower bound, labelled estimated.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "bpf/events.h"
#include "tracer/live_totals.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

class WakeWaits {
 public:
  // Distinct (process, waker) pairs kept: a system-wide trace sees many processes, and the view
  // stays small; pairs past it are not counted.
  static constexpr size_t kMaxPairs = 4096;

  // An event from the rings: a blocked interval of a process's main thread, with its waker, counts.
  void add(const ib_event& event);
  // The waits of each process whose main thread (role main) was woken by a thread of role worker or
  // pin, with the process's rank, from the threads as known now.
  std::vector<LiveLoaderWaits> estimate(const std::vector<ThreadInfo>& threads) const;

 private:
  struct Waits {
    uint64_t ns = 0;
    uint64_t count = 0;
    std::array<uint64_t, kBatchWaitBounds.size() + 1> buckets{};
  };
  std::map<std::pair<pid_t, pid_t>, Waits> by_waker_;  // (pid, waker tid)
};

}  // namespace ingero::tracer
