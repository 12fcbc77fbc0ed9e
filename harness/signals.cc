// SPDX-License-Identifier: Apache-2.0
#include "harness/signals.h"

#include <signal.h>

namespace ingero::harness {

namespace {
volatile sig_atomic_t g_signal = 0;
bool g_recorded = false;
sigset_t g_ignored_at_startup;  // valid once g_recorded

void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;  // the first request is the one reported
}

bool is_ignored_now(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

// Before any disposition of ours replaces them.
void record_startup_dispositions() {
  if (g_recorded) return;
  sigemptyset(&g_ignored_at_startup);
  for (int sig : kStopSignals)
    if (is_ignored_now(sig)) sigaddset(&g_ignored_at_startup, sig);
  for (int sig : {SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
    if (is_ignored_now(sig)) sigaddset(&g_ignored_at_startup, sig);
  g_recorded = true;
}
}  // namespace

void install_interrupt_handlers() {
  record_startup_dispositions();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals)
    if (!ignored_at_startup(sig)) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interrupt_requested() { return g_signal != 0; }
int interrupt_signal() { return g_signal; }
int interrupt_exit_code() { return 128 + (g_signal ? g_signal : SIGINT); }
int interrupt_forward_signal() { return g_signal == SIGINT || g_signal == 0 ? SIGINT : SIGTERM; }

void record_interrupt(int sig) {
  if (g_signal == 0) g_signal = sig;
}

bool ignored_at_startup(int sig) { return g_recorded && sigismember(&g_ignored_at_startup, sig) == 1; }

void restore_startup_signals() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : kStopSignals) signal(sig, ignored_at_startup(sig) ? SIG_IGN : SIG_DFL);
  signal(SIGPIPE, ignored_at_startup(SIGPIPE) ? SIG_IGN : SIG_DFL);
}

}  // namespace ingero::harness
