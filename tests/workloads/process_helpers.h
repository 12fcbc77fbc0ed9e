// SPDX-License-Identifier: Apache-2.0
// Process-table helpers for tests: children of a pid, by scanning /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ingero::testing {

struct ProcInfo {
  pid_t pid;
  pid_t ppid;
  std::string comm;
};

std::vector<ProcInfo> list_processes();
std::vector<pid_t> children_of(pid_t parent);
// Processes whose comm starts with prefix (e.g. "ib-worker-").
std::vector<pid_t> processes_named(const std::string& prefix);

}  // namespace ingero::testing
