// SPDX-License-Identifier: Apache-2.0
// The harness's stop signals: SIGHUP (a dropped SSH session), SIGQUIT, SIGUSR1 and SIGALRM are
// remembered like SIGTERM, so that the run loop saves the finished epochs and removes its
// private folder, instead of the signal ending the process on the spot.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/signals.h"

namespace ingero::harness {
namespace {

// In a child: the handlers are process-wide and the first signal stays recorded.
int raise_in_child(int sig) {
  const pid_t child = fork();
  if (child == 0) {
    install_interrupt_handlers();
    raise(sig);
    if (!interrupt_requested() || interrupt_signal() != sig) _exit(10);
    if (interrupt_exit_code() != 128 + sig) _exit(11);
    if (interrupt_forward_signal() != (sig == SIGINT ? SIGINT : SIGTERM)) _exit(12);
    raise(SIGTERM);  // a later one does not replace the first
    _exit(interrupt_signal() == sig ? 0 : 13);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(Signals, EveryStopSignalIsRememberedAndEndsTheRunLikeSigterm) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM}) EXPECT_EQ(raise_in_child(sig), 0) << strsignal(sig);
}

}  // namespace
}  // namespace ingero::harness
