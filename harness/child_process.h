// SPDX-License-Identifier: Apache-2.0
// Starting the traced process so that the tracer can enroll it before it runs a
// single instruction of its own: fork, block the child on a pipe, let the caller
// enroll the pid, then release it into exec. And asking a helper program a question.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace ingero::harness {

// Who a child runs as: set (groups first) after the fork, before the exec.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct SpawnOptions {
  // The child leads a new process group, so that a signal can reach every process it starts
  // (a wrapper shell's children too).
  bool own_group = false;
  // The child is killed when this process dies (PR_SET_PDEATHSIG): our workloads and sweep
  // points. A user's own command outlives a killed tracer, as under perf or nsys: the probes
  // go with the tracer's descriptors.
  bool dies_with_parent = true;
  // Variables set (or replaced) in the child's environment, which is otherwise this process's.
  std::vector<std::pair<std::string, std::string>> env;
  // The child's stdout and stderr go to this file (created or truncated).
  std::optional<std::string> output_path;
  // Another user than this process's (a root harness under sudo runs the user's command as them).
  std::optional<Credentials> run_as;
};

class PausedChild {
 public:
  using Environment = std::vector<std::pair<std::string, std::string>>;
  // argv[0] is looked up in PATH.
  static Result<PausedChild> spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  PausedChild(PausedChild&& other) noexcept;
  PausedChild& operator=(PausedChild&&) = delete;
  ~PausedChild();  // a child never released is killed and reaped

  pid_t pid() const { return pid_; }
  // Lets the child exec; an exec failure comes back as an error with exit code 127 (the
  // shell's "command not found") naming the command; the child is reaped then.
  Status release();

 private:
  PausedChild(pid_t pid, UniqueFd go_fd, UniqueFd exec_error_fd, std::string command)
      : pid_(pid), go_fd_(std::move(go_fd)), exec_error_fd_(std::move(exec_error_fd)), command_(std::move(command)) {}
  pid_t pid_ = -1;
  UniqueFd go_fd_;          // writing a byte lets the child exec; closing it makes the child exit
  UniqueFd exec_error_fd_;  // the child's errno when exec failed; end of file when it succeeded
  std::string command_;
};

// Runs argv (argv[0] looked up in PATH) without a shell, its stderr discarded, and waits
// for it: the exit code (-1 when it could not run or died of a signal) and its stdout.
struct CommandOutput {
  int exit_code = -1;               // -1: it did not exit (a signal), or never ran
  std::optional<int> wait_status;   // how it ended, where it was started and waited for
  std::string stdout_text;
};
CommandOutput run_and_capture(const std::vector<std::string>& argv);

}  // namespace ingero::harness
