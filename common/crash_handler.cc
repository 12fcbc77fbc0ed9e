// SPDX-License-Identifier: Apache-2.0
#include "common/crash_handler.h"

#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
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
  // The caller's address is the word at the stack pointer, unless the fault is on the stack
  // itself (an overflow: the stack pointer may already point into the guard page).
  const auto sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  const auto fault = reinterpret_cast<uintptr_t>(info->si_addr);
  const bool stack_fault = sig == SIGSEGV && fault + (1u << 16) > sp && fault < sp + (1u << 16);
  if (!stack_fault) frames[n++] = *reinterpret_cast<void* const*>(sp);
#else
  (void)context;
#endif
  (void)info;
  n += backtrace(frames + n, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

// The handler's own stack: a stack overflow leaves no room on the thread's stack to run it,
// and the kernel would then kill the process with no message. Only the calling thread (the
// main one) gets it.
alignas(64) char g_crash_stack[1 << 17];

}  // namespace

void install_crash_handlers() {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now: not from inside the handler
  stack_t alternate {};
  alternate.ss_sp = g_crash_stack;
  alternate.ss_size = sizeof g_crash_stack;
  const bool on_stack = sigaltstack(&alternate, nullptr) == 0;
  struct sigaction sa {};
  sa.sa_sigaction = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_SIGINFO | (on_stack ? SA_ONSTACK : 0);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
}

}  // namespace ingero
