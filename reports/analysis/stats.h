// SPDX-License-Identifier: Apache-2.0
// Exact order statistics over all recorded values, and quantile bounds from the
// kernel's log2 histograms (which only locate a quantile inside a bucket).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ingero::reports {

struct LatencyStats {
  int64_t count = 0;
  int64_t p50_ns = 0;
  int64_t p90_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  int64_t total_ns = 0;
};

// Nearest-rank percentiles (the smallest value with at least p·n values at or
// below it) over every value. Reorders `values`.
LatencyStats latency_stats(std::vector<int64_t>& values);

// [lower, upper) of the log2 bucket holding a quantile, in the histogram's unit.
struct BucketBounds {
  double lower = 0;
  double upper = 0;
};

// slot_counts[k] counts values in [2^k, 2^(k+1)) of the histogram's unit (µs for the
// scheduler histograms, ns for call latency); slot 0 also holds the values below 1.
std::optional<BucketBounds> histogram_quantile(const std::vector<int64_t>& slot_counts, double q);

}  // namespace ingero::reports
