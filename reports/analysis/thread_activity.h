// SPDX-License-Identifier: Apache-2.0
// What one thread was doing over time, rebuilt from its recorded intervals:
// waiting for a CPU (preempted, run queue), allocating pinned memory, waiting for
// I/O, blocked otherwise, else on CPU while alive. Off-CPU intervals are only recorded above the run's
// threshold (run_settings 'offcpu_min_ns', I/O waits 'iowait_min_ns'); shorter ones read as on-CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/data/trace_data.h"

namespace ingero::reports {

// Ordered by precedence when intervals overlap: a preempted thread waiting inside
// a pinned allocation is waiting for a CPU; a blocked one inside it is allocating.
enum class ThreadState : uint8_t { cpu_wait, pinned_alloc, io_wait, blocked, on_cpu, absent };

struct StateSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  ThreadState state = ThreadState::on_cpu;
};

// A recorded interval of one thread, [start, start + dur). The thread is implied,
// which keeps the per-thread copies of millions of intervals a third smaller.
struct TimeSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool empty() const { return end_ns <= start_ns; }
};
using IntervalList = std::vector<TimeSpan>;

// A burst of page faults: `count` faults between start and end (the tracer reports at least
// mem_burst_pages of a thread's faults, over at least mem_burst_min_ns, as one such burst).
struct FaultBurst {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t count = 0;
};

// One thread's recorded intervals, each list in any order (time order per list,
// the usual case, is read without sorting).
struct ThreadIntervals {
  IntervalList preempted;           // offcpu_preempted
  IntervalList blocked;             // offcpu_blocked
  IntervalList io;                  // offcpu_io: blocked in I/O wait
  IntervalList runq;                // runq_wait
  IntervalList pinned_alloc;        // cudaHostAlloc & co. called by this thread
  std::vector<FaultBurst> faults;   // page_faults bursts
  std::vector<FaultBurst> block_io; // block_io requests issued by this thread: count = bytes
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

  // Page faults in [from, to): each burst counted in proportion to its overlap (a burst
  // inside the interval counts whole; the faults of a burst are taken as spread evenly).
  double faults_in(int64_t from, int64_t to) const;
  // Off-CPU intervals (context switches) overlapping [from, to) and the time they cover in it.
  int64_t switches_in(int64_t from, int64_t to) const;
  int64_t offcpu_overlap_ns(int64_t from, int64_t to) const;
  // The part of that spent in I/O wait.
  int64_t io_wait_overlap_ns(int64_t from, int64_t to) const;
  // Bytes of the block I/O requests issued by this thread that completed in [from, to).
  int64_t block_io_bytes_in(int64_t from, int64_t to) const;

 private:
  // One kind of recorded off-CPU interval (preempted or blocked), sorted by start.
  class OffCpuList {
   public:
    OffCpuList() = default;
    explicit OffCpuList(IntervalList intervals);
    // Intervals overlapping [from, to) and the time they cover in it.
    int64_t count_overlapping(int64_t from, int64_t to) const;
    int64_t overlap_ns(int64_t from, int64_t to) const;

   private:
    size_t first_ending_after(int64_t t) const;
    IntervalList intervals_;
    std::vector<int64_t> max_end_;  // running max of ends, for overlap search
  };

  void build_segments(const ThreadIntervals& intervals);
  void index_block_io(std::vector<FaultBurst>& requests);

  int64_t tid_;
  int64_t alive_start_;
  int64_t alive_end_;
  std::vector<StateSegment> segments_;
  // Kept apart rather than merged: the queries are sums over intervals, and a
  // merged copy would be one more buffer of millions of intervals to fault in.
  OffCpuList preempted_;
  OffCpuList blocked_;
  OffCpuList io_;
  std::vector<FaultBurst> faults_;       // sorted by start
  std::vector<int64_t> io_ends_;         // block I/O completions, ascending
  std::vector<int64_t> io_bytes_before_; // bytes completed before each of them (prefix sums)
};

}  // namespace ingero::reports
