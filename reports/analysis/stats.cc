// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ingero::reports {
namespace {

size_t nearest_rank_index(size_t n, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
  return std::clamp<size_t>(rank, 1, n) - 1;
}

}  // namespace

LatencyStats latency_stats(std::vector<int64_t>& values) {
  int64_t* first = values.data();
  int64_t* last = first + values.size();
  LatencyStats stats;
  const auto n = static_cast<size_t>(last - first);
  stats.count = static_cast<int64_t>(n);
  if (n == 0) return stats;
  stats.total_ns = std::accumulate(first, last, int64_t{0});
  // Ascending selection: each nth_element works on the tail left by the previous one.
  int64_t* begin = first;
  for (auto [p, out] : {std::pair{0.50, &stats.p50_ns}, {0.90, &stats.p90_ns}, {0.99, &stats.p99_ns}}) {
    int64_t* nth = first + nearest_rank_index(n, p);
    std::nth_element(begin, nth, last);
    *out = *nth;
    begin = nth;
  }
  stats.max_ns = *std::max_element(begin, last);
  return stats;
}

std::optional<BucketBounds> histogram_quantile(const std::vector<int64_t>& slot_counts, double q) {
  const int64_t total = std::accumulate(slot_counts.begin(), slot_counts.end(), int64_t{0});
  if (total <= 0) return std::nullopt;
  const auto rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(total)));
  int64_t seen = 0;
  for (size_t slot = 0; slot < slot_counts.size(); ++slot) {
    seen += slot_counts[slot];
    if (seen >= std::max<int64_t>(rank, 1)) {
      const double lower = slot == 0 ? 0.0 : std::ldexp(1.0, static_cast<int>(slot));
      return BucketBounds{lower, std::ldexp(1.0, static_cast<int>(slot) + 1)};
    }
  }
  return std::nullopt;
}

}  // namespace ingero::reports
