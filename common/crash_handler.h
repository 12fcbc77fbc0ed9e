// SPDX-License-Identifier: Apache-2.0
// What a crash of an ingero-bench process (the harness or the workload program) leaves
// behind: a backtrace on stderr, then death by the same signal.
#pragma once

namespace ingero {

// SIGSEGV and kin print a backtrace to stderr, then end the process with that signal.
void install_crash_handlers();

}  // namespace ingero
