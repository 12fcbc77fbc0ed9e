// SPDX-License-Identifier: Apache-2.0
// A memory cgroup with a limit and no swap (v2 where its memory controller is there, else v1), made
// here and removed when it goes; path() is empty where none can be made.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace ingero::testing {

class MemoryCgroup {
 public:
  MemoryCgroup(const std::string& name, int64_t limit_bytes) {
    if (std::ifstream("/sys/fs/cgroup/cgroup.controllers").good()) {
      std::string controllers;
      std::getline(std::ifstream("/sys/fs/cgroup/cgroup.controllers"), controllers);
      if (controllers.find("memory") != std::string::npos) {
        path_ = "/sys/fs/cgroup/" + name;
        limit_file_ = "memory.max";
      }
    } else if (std::filesystem::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
      path_ = "/sys/fs/cgroup/memory/" + name;
      limit_file_ = "memory.limit_in_bytes";
    }
    if (path_.empty() || mkdir(path_.c_str(), 0755) != 0) {
      path_.clear();
      return;
    }
    std::ofstream(path_ + "/" + limit_file_) << limit_bytes;
    if (limit_file_ == "memory.max") std::ofstream(path_ + "/memory.swap.max") << 0;
  }
  ~MemoryCgroup() {
    if (!path_.empty()) rmdir(path_.c_str());
  }
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;
  const std::string& path() const { return path_; }
  // Moves the calling process into it.
  bool enter() const { return !path_.empty() && static_cast<bool>(std::ofstream(path_ + "/cgroup.procs") << getpid()); }

 private:
  std::string path_, limit_file_;
};

}  // namespace ingero::testing
