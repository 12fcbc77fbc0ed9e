// SPDX-License-Identifier: Apache-2.0
// The launch loops' own record of when each call was made, for checking a duty-cycled estimate
// window by window (bench/window_truth.py): with LAUNCH_TIMES=FILE in the environment, mark()
// keeps CLOCK_MONOTONIC (the trace's clock) before each call, and the destructor writes them to
// FILE as little-endian int64 nanoseconds. Without it, mark() is a branch on a null pointer.
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

class CallTimes {
 public:
  explicit CallTimes(size_t expected) : path_(std::getenv("LAUNCH_TIMES")) {
    if (!path_ || !*path_) return;
    times_ = std::make_unique<std::vector<int64_t>>();
    times_->reserve(expected);
  }
  CallTimes(const CallTimes&) = delete;
  CallTimes& operator=(const CallTimes&) = delete;
  ~CallTimes() {
    if (!times_) return;
    FILE* out = std::fopen(path_, "wb");
    if (!out || std::fwrite(times_->data(), sizeof(int64_t), times_->size(), out) != times_->size())
      std::perror(path_);
    if (out) std::fclose(out);
  }
  void mark() {
    if (!times_) return;
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    times_->push_back(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec);
  }

 private:
  const char* path_;
  std::unique_ptr<std::vector<int64_t>> times_;
};
