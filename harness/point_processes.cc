// SPDX-License-Identifier: Apache-2.0
#include "harness/point_processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/proc_files.h"

namespace ingero::harness {

namespace {

constexpr int64_t kScanEveryNs = 100'000'000;  // a /proc scan costs a read per process: not every poll
constexpr auto kGrace = std::chrono::seconds(2);  // after SIGTERM, before SIGKILL
constexpr auto kPollInterval = std::chrono::milliseconds(20);

bool write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

constexpr std::string_view kFolderPrefix = "ingero-bench-point-";

// The cgroup v2 folder this process is in: the cgroup2 mount's path to it; empty when there is none.
std::string own_cgroup_folder() {
  auto cgroup = proc::read_file("/proc/self/cgroup");
  auto mounts = proc::read_file("/proc/self/mountinfo");
  if (!cgroup || !mounts) return "";
  std::string path;
  std::istringstream lines(*cgroup);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  if (path.empty()) return "";
  std::istringstream mount_lines(*mounts);
  for (std::string line; std::getline(mount_lines, line);) {
    // "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS ... - FSTYPE SOURCE SUPER_OPTIONS"
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    if (!(fields >> id >> parent >> dev >> root >> mount_point)) continue;
    if (root != "/" && path.rfind(root, 0) != 0) continue;  // this mount does not show our folder
    const std::string below = root == "/" ? path : path.substr(root.size());
    return mount_point + (below == "/" ? "" : below);
  }
  return "";
}

// Every descendant of `root` now, with its start time (children before grandchildren).
std::vector<std::pair<pid_t, uint64_t>> descendants_of(const std::vector<pid_t>& roots) {
  std::multimap<pid_t, std::pair<pid_t, uint64_t>> children;
  for (pid_t pid : proc::all_pids())
    if (auto stat = proc::read_stat(pid); stat && stat->state != 'Z')
      children.emplace(stat->ppid, std::make_pair(pid, stat->start_time));
  std::vector<std::pair<pid_t, uint64_t>> out;
  std::vector<pid_t> todo = roots;
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    auto [from, to] = children.equal_range(parent);
    for (auto it = from; it != to; ++it) {
      if (std::find(out.begin(), out.end(), it->second) != out.end()) continue;
      out.push_back(it->second);
      todo.push_back(it->second.first);
    }
  }
  return out;
}

}  // namespace

std::string PointProcesses::cgroup_home() { return own_cgroup_folder(); }

std::vector<std::string> PointProcesses::remove_stale_folders(const std::string& home) {
  std::vector<std::string> removed;
  DIR* dir = ::opendir(home.c_str());
  if (dir == nullptr) return removed;
  while (const dirent* entry = ::readdir(dir)) {
    // "ingero-bench-point-PID-N": PID is the harness that made it.
    const std::string_view name = entry->d_name;
    if (entry->d_type != DT_DIR || name.rfind(kFolderPrefix, 0) != 0) continue;
    const std::string_view rest = name.substr(kFolderPrefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos) continue;
    const std::string pid_text(rest.substr(0, dash));
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    // A running harness's folder (or one of a process that took its pid) is left alone; the
    // kernel refuses to remove a folder that still holds a process (EBUSY): nothing is ended here.
    if (proc::read_stat(pid)) continue;
    const std::string path = home + "/" + std::string(name);
    if (::rmdir(path.c_str()) == 0) removed.push_back(path);
  }
  ::closedir(dir);
  return removed;
}

PointProcesses PointProcesses::begin(Hold hold) {
  PointProcesses p;
  if (hold == Hold::scan) return p;
  const std::string home = own_cgroup_folder();
  if (home.empty()) return p;
  (void)remove_stale_folders(home);  // best effort: a folder left is only an empty entry
  static std::atomic<int> serial{0};
  const std::string folder = fmt::format("{}/{}{}-{}", home, kFolderPrefix, getpid(), serial++);
  if (::mkdir(folder.c_str(), 0755) != 0) return p;  // not cgroup2, or not writable: the scan
  if (!write_text(folder + "/cgroup.procs", std::to_string(getpid()))) {
    ::rmdir(folder.c_str());
    return p;
  }
  p.folder_ = folder;
  p.home_ = home;
  return p;
}

PointProcesses::PointProcesses(PointProcesses&& other) noexcept
    : folder_(std::move(other.folder_)), home_(std::move(other.home_)), left_(other.left_),
      seen_(std::move(other.seen_)), next_scan_ns_(other.next_scan_ns_) {
  other.folder_.clear();
  other.left_ = true;
}

PointProcesses::~PointProcesses() {
  if (folder_.empty()) return;
  leave();
  ::rmdir(folder_.c_str());  // fails while a process is left in it: it is then left for the system
}

// The harness goes back to its own cgroup; the job's processes stay in the point's.
void PointProcesses::leave() {
  if (left_ || folder_.empty()) return;
  left_ = write_text(home_ + "/cgroup.procs", std::to_string(getpid()));
}

void PointProcesses::poll() {
  if (!folder_.empty()) return;
  const int64_t now = monotonic_ns();
  if (now < next_scan_ns_) return;
  next_scan_ns_ = now + kScanEveryNs;
  for (const auto& process : descendants_of({getpid()}))
    if (std::find(seen_.begin(), seen_.end(), process) == seen_.end()) seen_.push_back(process);
}

std::vector<std::pair<pid_t, uint64_t>> PointProcesses::alive() const {
  std::vector<std::pair<pid_t, uint64_t>> out;
  if (!folder_.empty()) {
    auto text = proc::read_file(folder_ + "/cgroup.procs");
    std::istringstream pids(text.value_or(""));
    for (pid_t pid; pids >> pid;)
      if (auto stat = proc::read_stat(pid); stat && pid != getpid() && stat->state != 'Z')
        out.emplace_back(pid, stat->start_time);
    return out;
  }
  std::vector<pid_t> roots;
  for (const auto& [pid, start] : seen_)
    if (proc::is_alive(pid, start)) {
      out.emplace_back(pid, start);
      roots.push_back(pid);
    }
  // What they started since the last scan.
  for (const auto& process : descendants_of(roots))
    if (std::find(out.begin(), out.end(), process) == out.end()) out.push_back(process);
  return out;
}

std::vector<std::string> PointProcesses::end_leftovers() {
  leave();
  if (!folder_.empty() && !left_) {
    // Still in the folder: never end the harness with its job; the scan's way, one by one, then.
    seen_ = alive();
    folder_.clear();
  }
  const auto left = alive();
  std::vector<std::string> names;
  for (const auto& [pid, start] : left) {
    auto stat = proc::read_stat(pid);
    names.push_back(fmt::format("{} (pid {})", stat ? stat->comm : "?", pid));
  }
  auto signal_all = [&](int sig) {
    for (const auto& [pid, start] : alive()) ::kill(pid, sig);  // alive(): never a reused pid
  };
  auto wait_all = [&] {
    const auto until = std::chrono::steady_clock::now() + kGrace;
    while (!alive().empty() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(kPollInterval);
    return alive().empty();
  };
  if (left.empty()) return names;
  signal_all(SIGTERM);
  if (!wait_all()) {
    // cgroup.kill also reaches processes that left the tree; where it cannot be written, SIGKILL to each is next.
    if (!folder_.empty()) (void)write_text(folder_ + "/cgroup.kill", "1");
    signal_all(SIGKILL);
    (void)wait_all();  // names are what survived SIGTERM, whether or not SIGKILL has reaped them yet
  }
  return names;
}

}  // namespace ingero::harness
