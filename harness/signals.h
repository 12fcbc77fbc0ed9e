// SPDX-License-Identifier: Apache-2.0
// The harness's own stop handling: Ctrl-C, SIGTERM, and the other signals that would
// otherwise end it with no cleanup (SIGHUP from a dropped SSH session, SIGQUIT, SIGUSR1,
// SIGALRM). Each only remembers the request; the run loop forwards it to the traced
// processes, drains the tracer and closes the DB, then exits with the shell's code for the
// signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
// A signal ignored when the harness started (SIGHUP under nohup, SIGINT and SIGQUIT for
// `cmd &` in a script) stays ignored, in the harness and in what it launches, as a shell
// leaves it: whoever started us asked for that.
#pragma once

#include <array>
#include <csignal>

namespace ingero::harness {

// Every signal install_interrupt_handlers() catches; a child starts with each at its default
// unless it was ignored at start-up.
inline constexpr std::array<int, 6> kStopSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM};

void install_interrupt_handlers();
bool interrupt_requested();
int interrupt_signal();     // the signal received (one of kStopSignals), 0 if none
int interrupt_exit_code();  // 128 + the signal
// What to send the launched processes: SIGINT for Ctrl-C, SIGTERM for every other stop
// signal (a workload or a job handles those two; SIGQUIT would dump its core).
int interrupt_forward_signal();
// A stop request that reached the harness through its job: Ctrl-C typed while the job held
// the terminal ends the job alone, and the run is interrupted as if the harness had it too.
void record_interrupt(int sig);

// Whether sig (a stop signal, SIGPIPE, or a terminal stop signal) was ignored when
// install_interrupt_handlers() first ran. Async-signal-safe.
bool ignored_at_startup(int sig);
// For a forked child before exec (async-signal-safe): nothing blocked, and the stop signals
// and SIGPIPE as the harness found them: ignored when they were, else at their default.
void restore_startup_signals();

}  // namespace ingero::harness
