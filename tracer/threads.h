// SPDX-License-Identifier: Apache-2.0
// The processes and threads of a traced tree, built from the process events (fork,
// thread_start, exec, rename, exit) and from /proc for what was running before tracing
// began, and the role each thread plays.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "bpf/events.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

class ThreadTable {
 public:
  // Records what a process event says about a thread; other events are ignored.
  void apply(const ib_event& event);
  // Adds a thread seen elsewhere (enrolment, counters) if not yet known.
  ThreadInfo& ensure(pid_t tid, pid_t pid);
  // A launched or attached process: its main thread plays the 'main' role.
  void add_root(pid_t pid);
  // A process with a torch.distributed rank: its main thread is that rank's main loop.
  void set_rank(pid_t pid, int rank);
  // Every thread with its role; names still missing are read from /proc.
  std::vector<ThreadInfo> rows() const;

 private:
  std::optional<int> rank_of(pid_t pid) const;
  bool execed_with_rank(pid_t pid) const;

  std::map<pid_t, ThreadInfo> threads_;
  std::set<pid_t> roots_;
  std::map<pid_t, int> ranks_;
};

}  // namespace ingero::tracer
