// SPDX-License-Identifier: Apache-2.0
// A large synthetic trace with a realistic mix (for the explain benchmark): a main
// thread issuing CUDA calls between batch waits, a pin thread, four worker
// processes alternating on-CPU bursts with preemptions and blocking, page faults.
#pragma once

#include <cstdint>
#include <string>

namespace ingero::reports::testing {

struct SyntheticTraceShape {
  int64_t target_events = 10'000'000;
  int workers = 4;
  uint32_t seed = 42;
};

// Writes the trace to path (replacing it); returns the number of events written.
int64_t write_synthetic_trace(const std::string& path, const SyntheticTraceShape& shape);

}  // namespace ingero::reports::testing
