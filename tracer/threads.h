// The processes and threads of a traced tree, built from the process events
// (fork, thread_start, exec, rename, exit), and the role each thread plays.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "bpf/events.h"

namespace ingero::tracer {

struct ThreadInfo {
  pid_t pid = 0;
  std::optional<pid_t> ppid;  // set for a process's main thread
  std::string comm;
  std::optional<uint64_t> start_ns;
  std::optional<uint64_t> exit_ns;
  std::optional<int> exit_code;
};

// 'worker' for ib-worker-N / pt_data_worker, 'pin' for ib-pin / pt_data_pin,
// 'main' for the root process's main thread, else 'other'.
std::string_view thread_role(pid_t tid, std::string_view comm, pid_t root_pid);

// A wait status (code << 8 | signal) as an exit code: 128 + signal when killed.
int exit_code_from_status(int64_t status);

class ThreadTable {
 public:
  // Records what a process event says about a thread; other events are ignored.
  void apply(const ib_event& event);
  // Adds a thread seen elsewhere (enrollment, counters) if not yet known.
  ThreadInfo& ensure(pid_t tid, pid_t pid);
  const std::map<pid_t, ThreadInfo>& threads() const { return threads_; }

 private:
  std::map<pid_t, ThreadInfo> threads_;
};

}  // namespace ingero::tracer
