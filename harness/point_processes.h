// SPDX-License-Identifier: Apache-2.0
// What a sweep point's job leaves running once it is stopped: the descendants that escaped its
// process group (setsid, nohup, daemons: TensorBoard, data servers, W&B agents), which would pile
// up and slow the later points. They are held in a cgroup v2 folder of the point's own where the
// harness can make one (it joins the folder to launch the job and leaves it after: the job and
// everything it starts stay there), else found by scanning /proc for the harness's descendants
// while the job runs (a process that escapes between two scans is missed).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ingero::harness {

class PointProcesses {
 public:
  enum class Hold { cgroup_or_scan, scan };
  // Call before the job is launched: what starts from now on is held.
  static PointProcesses begin(Hold hold = Hold::cgroup_or_scan);
  PointProcesses(PointProcesses&& other) noexcept;
  PointProcesses& operator=(PointProcesses&&) = delete;
  ~PointProcesses();  // leaves and removes the folder

  // While the job runs (cheap to call often): the scan notes the harness's descendants.
  void poll();
  // After the job: every process of it still alive ends (SIGTERM, then SIGKILL 2 s later);
  // returns them as "sleep (pid 123)".
  std::vector<std::string> end_leftovers();
  bool in_cgroup() const { return !folder_.empty(); }

  // The cgroup v2 folder this process is in, where the points' folders are made; empty when none.
  static std::string cgroup_home();
  // The points' folders in home that a harness no longer running left behind (it crashed or was
  // killed before its destructor ran): each removed when empty. begin() does this first. Returns
  // the folders removed.
  static std::vector<std::string> remove_stale_folders(const std::string& home);

 private:
  PointProcesses() = default;
  void leave();
  std::vector<std::pair<pid_t, uint64_t>> alive() const;  // pid and start time

  std::string folder_;  // the point's cgroup; empty: the scan
  std::string home_;    // the harness's own cgroup, to go back to
  bool left_ = false;
  std::vector<std::pair<pid_t, uint64_t>> seen_;  // the scan's descendants, with their start times
  int64_t next_scan_ns_ = 0;
};

}  // namespace ingero::harness
