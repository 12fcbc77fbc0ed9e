// SPDX-License-Identifier: Apache-2.0
#include "tests/workloads/process_helpers.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ingero::testing {

std::vector<ProcInfo> list_processes() {
  std::vector<ProcInfo> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
    auto open = stat.find('(');
    auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (state == 'Z') continue;
    out.push_back({static_cast<pid_t>(pid), ppid, stat.substr(open + 1, close - open - 1)});
  }
  closedir(d);
  return out;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& p : list_processes()) {
    if (p.ppid == parent) out.push_back(p.pid);
  }
  return out;
}

std::vector<pid_t> processes_named(const std::string& prefix) {
  std::vector<pid_t> out;
  for (const auto& p : list_processes()) {
    if (p.comm.rfind(prefix, 0) == 0) out.push_back(p.pid);
  }
  return out;
}

}  // namespace ingero::testing
