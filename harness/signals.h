// SPDX-License-Identifier: Apache-2.0
// The harness's own Ctrl-C / SIGTERM handling: remember the request, let the run loop
// forward it to the traced processes, drain the tracer and close the DB, then exit with
// the shell's code for the signal (130 for SIGINT, 143 for SIGTERM).
#pragma once

namespace ingero::harness {

void install_interrupt_handlers();
bool interrupt_requested();
int interrupt_signal();     // the signal received (SIGINT or SIGTERM), 0 if none
int interrupt_exit_code();  // 128 + the signal

}  // namespace ingero::harness
