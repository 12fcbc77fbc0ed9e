// SPDX-License-Identifier: Apache-2.0
// The one clock of a trace: CLOCK_MONOTONIC nanoseconds, which is what the kernel's
// bpf_ktime_get_ns() returns, so the workload's own timings and the kernel's events
// share one time axis. Wall-clock seconds only anchor a run in calendar time.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace ingero {

inline int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }

// The calling thread's CPU time: what a helper thread of ours (a sampler, a publisher) itself ran.
inline int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

// CLOCK_REALTIME minus CLOCK_MONOTONIC, from the tightest of a few back-to-back readings: turns a
// wall-clock timestamp another program gave (NVML's samples) into the trace's clock.
inline int64_t realtime_minus_monotonic_ns() {
  int64_t best_gap = INT64_MAX, offset = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t before = clock_ns(CLOCK_MONOTONIC);
    const int64_t real = clock_ns(CLOCK_REALTIME);
    const int64_t after = clock_ns(CLOCK_MONOTONIC);
    if (after - before < best_gap) {
      best_gap = after - before;
      offset = real - (before + (after - before) / 2);
    }
  }
  return offset;
}

inline double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace ingero
