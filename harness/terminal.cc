// SPDX-License-Identifier: Apache-2.0
#include "harness/terminal.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <utility>

#include "harness/signals.h"

namespace ingero::harness {

namespace {

// tcsetpgrp from a background group sends the caller SIGTTOU unless it is blocked.
void set_foreground(int tty, pid_t group) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  // A terminal that cannot be handed over leaves the job in the background: it runs all the same, only
  // without the terminal's keys (Ctrl-C still reaches it through ingero-bench's own handler).
  (void)tcsetpgrp(tty, group);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

std::optional<TerminalLoan> TerminalLoan::open() {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!tty) return std::nullopt;  // ENXIO: no controlling terminal
  return TerminalLoan(std::move(tty));
}

TerminalLoan::TerminalLoan(TerminalLoan&& other) noexcept
    : tty_(std::move(other.tty_)), lent_(std::exchange(other.lent_, false)) {}

TerminalLoan::~TerminalLoan() { take_back(); }

bool TerminalLoan::in_foreground() const { return tty_ && tcgetpgrp(tty_.get()) == getpgrp(); }

void TerminalLoan::lend_to(pid_t job_group) {
  if (!in_foreground()) return;
  set_foreground(tty_.get(), job_group);
  lent_ = true;
}

void TerminalLoan::take_back() {
  if (!lent_) return;
  set_foreground(tty_.get(), getpgrp());
  lent_ = false;
}

void TerminalLoan::relay_stop(pid_t job_group, int stop_signal) {
  take_back();
  // Stopped here until the shell continues us. An orphaned group (no job-control shell above)
  // discards the signal, and one ignored at start-up asks not to stop: the job goes on.
  if (!ignored_at_startup(stop_signal)) raise(stop_signal);
  lend_to(job_group);
  kill(-job_group, SIGCONT);
}

bool is_terminal_stop(int sig) { return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

}  // namespace ingero::harness
