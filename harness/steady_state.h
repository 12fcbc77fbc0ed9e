// SPDX-License-Identifier: Apache-2.0
// A user's job measured in its steady state, from the times its training loop asked for each
// batch: the first steps (worker start-up, warm caches, compilation) are skipped, then a number
// of steps or of seconds is timed, cut into equal windows whose seconds per step are the
// samples a sweep's statistics work on. Pure: tested on synthetic times.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ingero::harness {

struct SteadyPlan {
  int warmup_steps = 10;
  int steps = 50;       // steps to time (0: time `seconds` instead)
  double seconds = 0;   // seconds to time, when steps is 0
  int windows = 5;      // samples per run
};

struct SteadyMeasure {
  bool complete = false;                 // the plan's steps (or seconds) have been seen
  std::vector<double> seconds_per_step;  // one per window that ended
  int64_t measured_steps = 0;            // steps inside the windows
  double measured_s = 0;                 // time the windows cover
  double steps_per_s() const { return measured_s > 0 ? static_cast<double>(measured_steps) / measured_s : 0; }
};

// starts: when each step's batch was asked for (ns, ascending). A step is the time from one
// request to the next, so N steps need N + 1 requests after the warm-up.
SteadyMeasure measure_steady(const std::vector<uint64_t>& starts, const SteadyPlan& plan);

// Seconds since the first timed request, or none before the warm-up has passed.
std::optional<double> timed_for_s(const std::vector<uint64_t>& starts, const SteadyPlan& plan, uint64_t now_ns);

}  // namespace ingero::harness
