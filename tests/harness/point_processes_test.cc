// SPDX-License-Identifier: Apache-2.0
// What a sweep point's job leaves running (harness/point_processes): a detached `sleep` (setsid,
// nohup) and a daemon that double-forks outlive the shell that started them; after the point,
// none is left, and each is named. Both ways: a cgroup v2 folder (where one can be made) and the
// scan of /proc.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "harness/point_processes.h"

namespace ingero::harness {
namespace {

namespace fs = std::filesystem;

// The pids whose command line is `sleep SECONDS`.
std::vector<pid_t> sleeping(const std::string& seconds) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline == "sleep" + std::string(1, '\0') + seconds + std::string(1, '\0')) found.push_back(std::stoi(name));
  }
  return found;
}

// A `sleep` length no other process runs: how this test's sleeps are found.
std::string unique_seconds(int n) { return "300." + std::to_string(getpid()) + std::to_string(n); }

// Runs `script` in sh, as a job does, polling while it runs; returns when it has exited.
void run_job(PointProcesses& processes, const std::string& script) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    processes.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << script;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += n + "; ";
  return out;
}

TEST(PointProcesses, TheScanEndsADetachedSleepTheJobLeftAndNamesIt) {
  PointProcesses processes = PointProcesses::begin(PointProcesses::Hold::scan);
  ASSERT_FALSE(processes.in_cgroup());
  const std::string seconds = unique_seconds(1);
  run_job(processes, "setsid nohup sleep " + seconds + " >/dev/null 2>&1 & sleep 0.5");
  ASSERT_EQ(sleeping(seconds).size(), 1u) << "the job's detached sleep should outlive the job";
  const auto ended = processes.end_leftovers();
  EXPECT_TRUE(sleeping(seconds).empty()) << "still running after the point";
  ASSERT_EQ(ended.size(), 1u) << joined(ended);
  EXPECT_EQ(ended.front().rfind("sleep (pid ", 0), 0u) << ended.front();
  // Nothing left: nothing more to end.
  EXPECT_TRUE(processes.end_leftovers().empty());
}

TEST(PointProcesses, ACgroupFolderHoldsEvenADaemonWhoseParentExitedAtOnce) {
  PointProcesses processes = PointProcesses::begin();
  if (!processes.in_cgroup())
    GTEST_SKIP() << "no writable cgroup v2 folder here (not root, or no cgroup2 mount): the scan is used instead";
  const std::string detached = unique_seconds(2), daemon = unique_seconds(3);
  // The daemon's parent exits at once: no scan could have seen it as the job's.
  run_job(processes, "setsid sleep " + detached + " & (sh -c 'sleep " + daemon + " &' &) ; sleep 0.3");
  EXPECT_EQ(sleeping(detached).size(), 1u);
  EXPECT_EQ(sleeping(daemon).size(), 1u);
  const auto ended = processes.end_leftovers();
  EXPECT_TRUE(sleeping(detached).empty());
  EXPECT_TRUE(sleeping(daemon).empty());
  EXPECT_EQ(ended.size(), 2u) << joined(ended);
  // The harness went back to its own cgroup: it is not in the point's.
  std::ifstream cgroup("/proc/self/cgroup");
  const std::string own((std::istreambuf_iterator<char>(cgroup)), std::istreambuf_iterator<char>());
  EXPECT_EQ(own.find("ingero-bench-point-"), std::string::npos) << own;
}

// A harness that crashed (or was killed) left its point's folder: the next point's begin() removes
// such folders once their harness is gone and they are empty, and leaves a running harness's alone.
TEST(PointProcesses, AFolderACrashedHarnessLeftIsRemovedWhenItsHarnessIsGone) {
  const std::string home = PointProcesses::cgroup_home();
  if (home.empty() || access(home.c_str(), W_OK) != 0)
    GTEST_SKIP() << "no writable cgroup v2 folder here (not root, or no cgroup2 mount)";
  const pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) _exit(0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
  const std::string stale = home + "/ingero-bench-point-" + std::to_string(gone) + "-0";
  const std::string running = home + "/ingero-bench-point-" + std::to_string(getpid()) + "-999";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0) << stale;
  ASSERT_EQ(mkdir(running.c_str(), 0755), 0) << running;
  {
    PointProcesses processes = PointProcesses::begin();
    ASSERT_TRUE(processes.in_cgroup());
    EXPECT_FALSE(fs::exists(stale)) << "left behind by a harness that is gone";
    EXPECT_TRUE(fs::exists(running)) << "a running harness's folder was removed";
  }
  rmdir(running.c_str());
  rmdir(stale.c_str());
}

}  // namespace
}  // namespace ingero::harness
