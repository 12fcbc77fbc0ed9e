// SPDX-License-Identifier: Apache-2.0
// Reading /proc without surprises. A process can exit between opening one of its files
// and reading it, and the read then fails (ESRCH): every function here turns that, and
// any other failure, into an empty result. Nothing here throws.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingero::proc {

// The whole file read with read(2); empty optional when it cannot be opened or read.
std::optional<std::string> read_file(const std::string& path);
// The same from an open descriptor, up to its end (the descriptor stays open).
std::optional<std::string> read_all(int fd);
// The first line without its newline; empty optional when unreadable.
std::optional<std::string> read_first_line(const std::string& path);

struct Stat {
  pid_t pid = 0;
  std::string comm;
  char state = '?';
  pid_t ppid = 0;
  uint64_t start_time = 0;  // field 22: clock ticks after boot; with the pid, names one process
};
// /proc/PID/stat (comm may hold spaces and parentheses).
std::optional<Stat> read_stat(pid_t pid);
std::optional<Stat> parse_stat(const std::string& text);

// True while the process that had this start time still runs (a reused pid is not it).
bool is_alive(pid_t pid, uint64_t start_time);

std::optional<uid_t> process_uid(pid_t pid);                     // real uid, from /proc/PID/status
std::optional<std::string> environment_value(pid_t pid, const std::string& name);  // /proc/PID/environ
std::vector<pid_t> all_pids();             // every numeric entry of /proc
std::vector<pid_t> thread_ids(pid_t pid);  // /proc/PID/task

// A thread's name (/proc/PID/task/TID/comm, without its newline).
std::optional<std::string> thread_name(pid_t pid, pid_t tid);
// The CPU time a thread has run, in ns: the first field of /proc/PID/task/TID/schedstat (the
// scheduler's own sum, kept whether or not schedstats are on), for threads not our own to clock.
std::optional<uint64_t> thread_cpu_ns(pid_t pid, pid_t tid);

}  // namespace ingero::proc
