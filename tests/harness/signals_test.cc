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

bool ignored(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

// Started as nohup starts it: SIGHUP stays ignored, by the harness and by what it launches;
// the other stop signals are caught, and a launched process gets them at their default.
TEST(Signals, ASignalIgnoredAtStartUpStaysIgnoredInTheHarnessAndItsChild) {
  const pid_t harness = fork();
  if (harness == 0) {
    signal(SIGHUP, SIG_IGN);
    install_interrupt_handlers();
    raise(SIGHUP);
    if (interrupt_requested() || !ignored(SIGHUP) || !ignored_at_startup(SIGHUP)) _exit(10);
    if (ignored_at_startup(SIGTERM) || ignored(SIGTERM)) _exit(11);
    const pid_t job = fork();
    if (job == 0) {
      restore_startup_signals();
      struct sigaction term {};
      sigaction(SIGTERM, nullptr, &term);
      _exit(ignored(SIGHUP) && term.sa_handler == SIG_DFL && !ignored(SIGPIPE) ? 0 : 1);
    }
    int status = 0;
    if (waitpid(job, &status, 0) != job || !WIFEXITED(status) || WEXITSTATUS(status) != 0) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(harness, &status, 0), harness);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
}

}  // namespace
}  // namespace ingero::harness
