// SPDX-License-Identifier: Apache-2.0
// The on-CPU time of the threads that call a duty-cycled function, read from the scheduler
// programs' maps at the edges of its windows, so that its count can be estimated per second of
// the callers' own running time (duty_cycle.h: CallerTime) rather than per wall second.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "tracer/duty_cycle.h"

namespace ingero::tracer {

// A loaded BPF program's run time so far (BPF_STATS_RUN_TIME; no runs while the statistics are
// off): read at a window's edges, it times the return probe's program inside the job's traps
// (trap_cost_scale). Empty when there is no program (fd -1) or it cannot be read (errno says why).
std::optional<ProgramRunTime> read_program_run_time(int program_fd);

// A thread's on-CPU time so far, from its task clock in one lookup: its slices up to its last
// switch plus the slice it is running; once it has exited, thread_stats' total. Copyable: it
// holds two map fds, and a LinkCloser thread reads through a copy as a window's probes stop.
class OnCpuReader {
 public:
  OnCpuReader() = default;
  OnCpuReader(int thread_stats_fd, int task_clocks_fd) : stats_fd_(thread_stats_fd), clocks_fd_(task_clocks_fd) {}
  // Empty when the scheduler programs have never seen the thread run.
  std::optional<uint64_t> oncpu_ns(uint32_t tid) const;
  // Every thread of `tids` whose time is known: tid -> ns.
  std::map<uint32_t, uint64_t> read(const std::vector<uint32_t>& tids) const;

 private:
  int stats_fd_ = -1;
  int clocks_fd_ = -1;
};

// A sampled function's callers and their on-CPU time at the last edge of its windows.
class CallerMarks {
 public:
  std::vector<uint32_t> tids() const;
  bool has(uint32_t tid) const { return at_.count(tid) > 0; }
  // Sets the callers' marks (callers absent from `times` could not be read: known() turns false).
  void mark(const std::vector<uint32_t>& tids, const std::map<uint32_t, uint64_t>& times);
  // The callers' on-CPU time from their marks to `times`, which become their marks.
  uint64_t advance(const std::map<uint32_t, uint64_t>& times);
  // As advance, with no thread counted longer than `span_ns`, the wall time its two readings were at
  // most apart: a thread cannot run longer. A reading can come out low, though (a running thread whose
  // switch in the scheduler programs did not see reads as off the CPU until a probe or its switch out
  // says otherwise), and the next one then holds time that ran before the span: that excess, summed
  // over the callers, is `before_span`.
  uint64_t advance_within(const std::map<uint32_t, uint64_t>& times, uint64_t span_ns, uint64_t& before_span);
  // Every caller's time was read at every edge.
  bool known() const { return known_; }

 private:
  std::map<uint32_t, uint64_t> at_;
  bool known_ = true;
};

}  // namespace ingero::tracer
