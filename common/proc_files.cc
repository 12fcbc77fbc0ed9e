// SPDX-License-Identifier: Apache-2.0
#include "common/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/list_text.h"

namespace ingero::proc {

namespace {

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) return out;
  while (dirent* entry = readdir(d.get())) {
    const auto value = parse_digits(entry->d_name, INT32_MAX);
    if (value && *value > 0) out.push_back(static_cast<pid_t>(*value));
  }
  return out;
}

}  // namespace

std::optional<std::string> read_all(int fd) {
  std::string text;
  char buffer[16384];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
}

std::optional<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto text = read_all(fd);
  ::close(fd);
  return text;
}

std::optional<std::string> read_first_line(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::nullopt;
  return text->substr(0, text->find('\n'));
}

std::optional<Stat> parse_stat(const std::string& text) {
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  //  stime cutime cstime priority nice num_threads itrealvalue starttime ..."
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  Stat stat;
  stat.pid = static_cast<pid_t>(std::atoi(text.c_str()));
  stat.comm = text.substr(open + 1, close - open - 1);
  int ppid = 0;
  unsigned long long start = 0;
  // After ") ": state, ppid, then 17 fields before starttime (field 22).
  if (std::sscanf(text.c_str() + close + 1,
                  " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                  &stat.state, &ppid, &start) != 3)
    return std::nullopt;
  stat.ppid = ppid;
  stat.start_time = start;
  return stat;
}

std::optional<Stat> read_stat(pid_t pid) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return parse_stat(*text);
}

bool is_alive(pid_t pid, uint64_t start_time) {
  auto stat = read_stat(pid);
  return stat && stat->start_time == start_time && stat->state != 'Z' && stat->state != 'X';
}

std::optional<uid_t> process_uid(pid_t pid) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!text) return std::nullopt;
  const size_t at = text->find("\nUid:");
  if (at == std::string::npos) return std::nullopt;
  return static_cast<uid_t>(std::strtoul(text->c_str() + at + 5, nullptr, 10));
}

std::optional<std::string> environment_value(pid_t pid, const std::string& name) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/environ");
  if (!text) return std::nullopt;
  const std::string key = name + "=";
  for (size_t at = 0; at < text->size();) {
    size_t end = text->find('\0', at);
    if (end == std::string::npos) end = text->size();
    if (text->compare(at, key.size(), key) == 0) return text->substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return std::nullopt;
}

std::vector<pid_t> all_pids() { return numeric_entries("/proc"); }

std::vector<pid_t> thread_ids(pid_t pid) { return numeric_entries("/proc/" + std::to_string(pid) + "/task"); }

std::optional<std::string> thread_name(pid_t pid, pid_t tid) {
  return read_first_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
}

std::optional<uint64_t> thread_cpu_ns(pid_t pid, pid_t tid) {
  const auto text = read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
  if (!text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long ns = std::strtoull(text->c_str(), &end, 10);
  if (end == text->c_str() || errno != 0) return std::nullopt;
  return static_cast<uint64_t>(ns);
}

}  // namespace ingero::proc
