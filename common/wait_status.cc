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

std::string signal_text(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  if (!abbreviation) return fmt::format("signal {}", signal);
  return fmt::format("SIG{} (signal {}, {})", abbreviation, signal, strsignal(signal));
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by " + signal_text(WTERMSIG(status));
  return "stopped";
}

}  // namespace ingero
