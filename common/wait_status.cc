// SPDX-License-Identifier: Apache-2.0
#include "common/wait_status.h"

#include <sys/wait.h>

#include <cstring>

#include <fmt/format.h>

namespace ingero {

int shell_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  return "stopped";
}

}  // namespace ingero
