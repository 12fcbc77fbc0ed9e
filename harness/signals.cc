// SPDX-License-Identifier: Apache-2.0
#include "harness/signals.h"

#include <signal.h>

namespace ingero::harness {

namespace {
volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;  // the first request is the one reported
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interrupt_requested() { return g_signal != 0; }
int interrupt_signal() { return g_signal; }
int interrupt_exit_code() { return 128 + (g_signal ? g_signal : SIGINT); }
int interrupt_forward_signal() { return g_signal == SIGINT || g_signal == 0 ? SIGINT : SIGTERM; }

}  // namespace ingero::harness
