// SPDX-License-Identifier: Apache-2.0
// The crash handler runs on a stack of its own: a stack overflow (deep JSON once caused one)
// still prints where it happened instead of dying with no word.
#include <gtest/gtest.h>

#include <csignal>

#include "common/crash_handler.h"

namespace ingero {
namespace {

// Never set: a way out the compiler cannot rule out, so it does not warn of infinite recursion.
volatile bool g_enough = false;

// Recurses until the stack runs out; the frame's array and the call after it keep the compiler
// from turning this into a loop.
int overflow(int depth) {
  if (g_enough) return depth;
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  return overflow(depth + 1) + frame[0];
}

TEST(CrashHandlerDeathTest, AStackOverflowStillPrintsWhereItHappened) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_crash_handlers();
        overflow(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "ingero-bench crashed");
}

}  // namespace
}  // namespace ingero
