// SPDX-License-Identifier: Apache-2.0
// What a loader reports about itself: part of the result record, so it needs no LibTorch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace ingero::workloads {

// One loader worker's start-up: from fork (measured in the parent) until it was ready to
// take its first task (measured in the worker), CLOCK_MONOTONIC.
struct WorkerStart {
  int id = 0;
  pid_t pid = 0;
  uint64_t fork_ns = 0;
  uint64_t ready_ns = 0;
};

// Loader statistics the tests assert on, and the workers' start-ups.
struct LoaderStats {
  int64_t max_in_flight = 0;   // most batches dispatched but not yet handed to the main loop
  int64_t worker_forks = 0;    // worker processes started so far
  std::vector<WorkerStart> starts;  // every worker that reported ready
};

}  // namespace ingero::workloads
