// SPDX-License-Identifier: Apache-2.0
#include "common/crash_handler.h"

#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <initializer_list>

namespace ingero {

namespace {

// A crash prints where it happened (async-signal-safe: write and backtrace_symbols_fd
// only): the faulting instruction and its caller from the saved registers, whose frame
// the unwinder may not reach (a call through a bad pointer), then the unwound stack;
// then the process dies of the same signal so the exit status stays truthful.
void on_crash(int sig, siginfo_t* info, void* context) {
  static const char header[] = "ingero-bench crashed; where (faulting instruction, its caller, then the stack):\n";
  (void)!write(STDERR_FILENO, header, sizeof header - 1);
  void* frames[66];
  int n = 0;
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  frames[n++] = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  frames[n++] = *reinterpret_cast<void* const*>(uc->uc_mcontext.gregs[REG_RSP]);
#endif
  (void)info;
  n += backtrace(frames + n, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void install_crash_handlers() {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now: not from inside the handler
  struct sigaction sa {};
  sa.sa_sigaction = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_SIGINFO;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
}

}  // namespace ingero
