// Starting the traced process so that the tracer can enroll it before it runs a
// single instruction of its own: fork, block the child on a pipe, let the caller
// enroll the pid, then release it into exec.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace ingero::harness {

class PausedChild {
 public:
  // argv[0] is looked up in PATH. The child dies with this process (PR_SET_PDEATHSIG).
  static Result<PausedChild> spawn(const std::vector<std::string>& argv);
  PausedChild(PausedChild&& other) noexcept;
  PausedChild& operator=(PausedChild&&) = delete;
  ~PausedChild();  // a child never released is killed and reaped

  pid_t pid() const { return pid_; }
  // Lets the child exec; an exec failure comes back as bad input naming the command.
  Status release();

 private:
  PausedChild(pid_t pid, int go_fd, int exec_error_fd, std::string command)
      : pid_(pid), go_fd_(go_fd), exec_error_fd_(exec_error_fd), command_(std::move(command)) {}
  pid_t pid_ = -1;
  int go_fd_ = -1;
  int exec_error_fd_ = -1;
  std::string command_;
};

}  // namespace ingero::harness
