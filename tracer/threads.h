// SPDX-License-Identifier: Apache-2.0
// The processes and threads of a traced tree, built from the process events (fork,
// thread_start, exec, rename, exit) and from /proc for what was running before tracing
// began, and the role each thread plays.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
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
  // A thread known so far, or null.
  const ThreadInfo* find(pid_t tid) const;
  // A launched or attached process: its main thread plays the 'main' role.
  void add_root(pid_t pid);
  // A process with a torch.distributed rank (and the WORLD_SIZE it was started with, when
  // set): its main thread is that rank's main loop.
  void set_rank(pid_t pid, int rank, std::optional<int> world_size = std::nullopt);
  // The distinct world sizes the ranked processes were started with (one in a single job).
  const std::set<int>& world_sizes() const { return world_sizes_; }
  // A process found running at attach time that is a fork of its parent which never exec'd.
  void mark_forked_copy(pid_t pid);
  // Every thread with its role by name and place (assign_roles refines it); names still missing
  // are read from /proc.
  std::vector<ThreadInfo> rows() const;

 private:
  std::optional<int> rank_of(pid_t pid) const;
  bool execed_with_rank(pid_t pid) const;

  std::map<pid_t, ThreadInfo> threads_;
  std::set<pid_t> roots_;
  std::set<pid_t> forked_copies_;
  std::map<pid_t, int> ranks_;
  std::set<int> world_sizes_;
};

// What is known of a job's processes from outside the kernel's view (the Python observer).
struct RoleHints {
  std::set<pid_t> trainers;     // processes that iterated a DataLoader
  std::set<pid_t> workers;      // DataLoader worker processes
  std::set<pid_t> pin_threads;  // pin-memory threads (tids)
};

// The roles of a traced job's threads. Named loader threads keep their names' roles; the
// observer's workers and pin threads get theirs. 'main' is the main thread of the trainer:
// a process that called CUDA or NCCL or iterated a DataLoader (the observer), else a
// ranked process (DDP), else the launched or attached process, unless that is a wrapper
// (timeout, bash -c, a shell script) whose exec'd descendant did the work: then the
// process, among the root and the exec'd ones, that spent the most time on CPU. A fork of
// a trainer that never exec'd is a worker (torch < 2.3 leaves DataLoader workers unnamed).
// Idempotent: the tracer assigns them, and the harness again once the observer has spoken.
void assign_roles(TraceTotals& totals, const RoleHints& hints);

// The job's world size as a run setting (contract::kWorldSizeSetting), so that the runs of its
// nodes can be told from other jobs' runs; processes of several jobs disagree, and then no
// world size is recorded but a problem says why.
void record_world_size(const std::set<int>& world_sizes, TraceTotals& totals);

// A process's rank from its environment (a value of each variable, where set): RANK, else LOCAL_RANK
// (a launcher that sets only the rank on its node; `instance` tells nodes apart in Prometheus). A value
// that is not a small non-negative number is no rank.
std::optional<int> rank_from_environment(const std::optional<std::string>& rank,
                                         const std::optional<std::string>& local_rank);
// A small non-negative number (RANK, WORLD_SIZE), if the text is one.
std::optional<int> small_number(const std::optional<std::string>& text);

}  // namespace ingero::tracer
