// SPDX-License-Identifier: Apache-2.0
// How a child process ended, in the words every report uses.
#pragma once

#include <string>

namespace ingero {

// Exit status as a shell reports it: the code, or 128 + signal.
int shell_exit_code(int wait_status);
// "exited with status N" | "was killed by SIGABRT (signal 6, Aborted)" | "stopped".
std::string describe_wait_status(int wait_status);
// "SIGABRT (signal 6, Aborted)"; "signal N" for a number with no name.
std::string signal_text(int signal);

}  // namespace ingero
