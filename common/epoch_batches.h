// SPDX-License-Identifier: Apache-2.0
// How many batches an epoch of a workload holds: one definition for the workload that runs it
// and the readers that scale a bounded epoch (--max-batches) to a whole one.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ingero {

// Batches in one epoch of `samples` at `batch_size`; only its first `max_batches` when > 0.
inline int64_t epoch_batches(int64_t samples, int64_t batch_size, bool drop_last, int64_t max_batches = 0) {
  if (batch_size <= 0) return 0;
  const int64_t all = drop_last ? samples / batch_size : (samples + batch_size - 1) / batch_size;
  return max_batches > 0 ? std::min(all, max_batches) : all;
}

}  // namespace ingero
