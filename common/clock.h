// SPDX-License-Identifier: Apache-2.0
// The one clock of a trace: CLOCK_MONOTONIC nanoseconds, which is what the kernel's
// bpf_ktime_get_ns() returns, so the workload's own timings and the kernel's events
// share one time axis. Wall-clock seconds only anchor a run in calendar time.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace ingero {

inline int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace ingero
