// SPDX-License-Identifier: Apache-2.0
// A call count estimated from duty-cycled probes (tracer/call_probes.h), as the readers hold it.
#pragma once

#include <cstdint>
#include <optional>

namespace ingero::reports {

// The estimate and its 95 % interval, with the exact counts of what was not sampled added in.
// Without an upper bound only the lower bound is known: calls is then that bound ("at least").
struct CountEstimate {
  int64_t calls = 0;
  int64_t low = 0;
  // none: no upper bound (no window, too few, or the probes' own traps took most of them)
  std::optional<int64_t> high;
  double duty_share = 1;  // of the sampled processes' time, how much the probes were attached
  bool lower_bound_only() const { return !high; }
};

// A count as stored (call_sampling), as the readers hold it: without an upper bound, only its lower
// bound is known (files before schema version 9 stored a point estimate there too).
inline CountEstimate count_estimate(int64_t calls, int64_t low, std::optional<int64_t> high, double duty_share) {
  return {high ? calls : low, low, high, duty_share};
}

}  // namespace ingero::reports
