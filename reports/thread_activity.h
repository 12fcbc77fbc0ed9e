// What one thread was doing over time, rebuilt from its recorded intervals:
// waiting for a CPU (preempted, run queue), allocating pinned memory, blocked,
// else on CPU while alive. Off-CPU intervals are only recorded above the run's
// threshold (run_settings 'offcpu_min_ns'); shorter ones read as on-CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/trace_data.h"

namespace ingero::reports {

// Ordered by precedence when intervals overlap: a preempted thread waiting inside
// a pinned allocation is waiting for a CPU; a blocked one inside it is allocating.
enum class ThreadState : uint8_t { cpu_wait, pinned_alloc, blocked, on_cpu, absent };

struct StateSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  ThreadState state = ThreadState::on_cpu;
};

struct ThreadIntervals {
  std::vector<Event> preempted;     // offcpu_preempted
  std::vector<Event> blocked;       // offcpu_blocked
  std::vector<Event> runq;          // runq_wait
  std::vector<Event> pinned_alloc;  // cudaHostAlloc & co. called by this thread
  std::vector<int64_t> fault_ts;    // page_fault timestamps
};

class ThreadActivity {
 public:
  ThreadActivity(int64_t tid, int64_t alive_start_ns, int64_t alive_end_ns, ThreadIntervals intervals);

  int64_t tid() const { return tid_; }
  int64_t alive_start_ns() const { return alive_start_; }
  int64_t alive_end_ns() const { return alive_end_; }
  const std::vector<StateSegment>& segments() const { return segments_; }

  // Segments (not on-CPU) overlapping [from, to), as index range into segments().
  std::pair<size_t, size_t> segments_overlapping(int64_t from, int64_t to) const;
  // State at t; `cursor` must not decrease between calls (pieces are visited in time order).
  ThreadState state_at(int64_t t, size_t& cursor) const;

  int64_t faults_in(int64_t from, int64_t to) const;
  // Off-CPU intervals (context switches) overlapping [from, to) and the time they cover in it.
  int64_t switches_in(int64_t from, int64_t to) const;
  int64_t offcpu_overlap_ns(int64_t from, int64_t to) const;

 private:
  void build_segments(const ThreadIntervals& intervals);

  int64_t tid_;
  int64_t alive_start_;
  int64_t alive_end_;
  std::vector<StateSegment> segments_;
  std::vector<Event> offcpu_;        // preempted ∪ blocked, sorted by start
  std::vector<int64_t> offcpu_max_end_;  // running max of ends, for overlap search
  std::vector<int64_t> fault_ts_;
};

}  // namespace ingero::reports
