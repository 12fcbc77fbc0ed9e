// SPDX-License-Identifier: Apache-2.0
// A call count estimated from duty-cycled probes (tracer/call_probes.h), as the readers hold it.
#pragma once

#include <cstdint>
#include <optional>

namespace ingero::reports {

// The estimate and its 95 % interval, with the exact counts of what was not sampled added in.
struct CountEstimate {
  int64_t calls = 0;
  int64_t low = 0;
  std::optional<int64_t> high;  // none: no upper bound (the probes' own traps took most of the windows)
  double duty_share = 1;        // of the sampled processes' time, how much the probes were attached
};

}  // namespace ingero::reports
