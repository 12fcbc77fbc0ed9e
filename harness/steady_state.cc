// SPDX-License-Identifier: Apache-2.0
#include "harness/steady_state.h"

#include <algorithm>

namespace ingero::harness {

namespace {

// Windows between consecutive boundary indexes into starts.
SteadyMeasure from_boundaries(const std::vector<uint64_t>& starts, const std::vector<size_t>& bounds) {
  SteadyMeasure m;
  for (size_t w = 0; w + 1 < bounds.size(); ++w) {
    const size_t a = bounds[w], b = bounds[w + 1];
    if (b <= a) continue;
    const double s = static_cast<double>(starts[b] - starts[a]) / 1e9;
    m.seconds_per_step.push_back(s / static_cast<double>(b - a));
    m.measured_steps += static_cast<int64_t>(b - a);
    m.measured_s += s;
  }
  return m;
}

}  // namespace

SteadyMeasure measure_steady(const std::vector<uint64_t>& starts, const SteadyPlan& plan) {
  const size_t first = static_cast<size_t>(std::max(plan.warmup_steps, 0));
  const int windows = std::max(plan.windows, 1);
  if (starts.size() <= first + 1) return {};
  std::vector<size_t> bounds{first};
  if (plan.steps > 0) {
    // Windows of steps * w / windows: all the steps are timed when they do not divide evenly.
    const int parts = std::min(windows, plan.steps);
    for (int w = 1; w <= parts; ++w) {
      const size_t end = first + static_cast<size_t>(static_cast<int64_t>(plan.steps) * w / parts);
      if (end < starts.size()) bounds.push_back(end);
    }
    SteadyMeasure m = from_boundaries(starts, bounds);
    m.complete = static_cast<int>(bounds.size()) == parts + 1;
    return m;
  }
  // Timed by seconds: each window ends at the first request at or after its end.
  const uint64_t t0 = starts[first];
  const double width_ns = plan.seconds * 1e9 / windows;
  for (int w = 1; w <= windows; ++w) {
    const auto end = t0 + static_cast<uint64_t>(width_ns * w);
    auto it = std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(bounds.back()), starts.end(), end);
    if (it == starts.end()) break;
    const auto index = static_cast<size_t>(it - starts.begin());
    if (index > bounds.back()) bounds.push_back(index);
    if (w == windows) {
      SteadyMeasure m = from_boundaries(starts, bounds);
      m.complete = true;
      return m;
    }
  }
  return from_boundaries(starts, bounds);
}

std::optional<double> timed_for_s(const std::vector<uint64_t>& starts, const SteadyPlan& plan, uint64_t now_ns) {
  const size_t first = static_cast<size_t>(std::max(plan.warmup_steps, 0));
  if (starts.size() <= first || now_ns < starts[first]) return std::nullopt;
  return static_cast<double>(now_ns - starts[first]) / 1e9;
}

}  // namespace ingero::harness
