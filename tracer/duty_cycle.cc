// SPDX-License-Identifier: Apache-2.0
#include "tracer/duty_cycle.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ingero::tracer {

double trap_share(double calls_per_s, bool return_probe, const ProbeCost& cost) {
  return calls_per_s * cost.per_call_ns(return_probe) * 1e-9;
}

bool is_hot(double calls_per_s, bool return_probe, const ProbeCost& cost, const SamplingPolicy& policy) {
  return policy.enabled && trap_share(calls_per_s, return_probe, cost) > policy.hot_share;
}

uint64_t SampledCalls::probed_calls() const {
  uint64_t calls = calls_before;
  for (const SampleWindow& w : windows) calls += w.calls;
  return calls;
}

uint64_t SampledCalls::attached_ns() const {
  uint64_t ns = 0;
  for (const SampleWindow& w : windows) ns += w.end_ns > w.start_ns ? w.end_ns - w.start_ns : 0;
  return ns;
}

double SampledCalls::duty_share() const {
  if (until_ns <= since_ns) return 1.0;
  return std::min(1.0, static_cast<double>(attached_ns()) / static_cast<double>(until_ns - since_ns));
}

namespace {

double seconds(uint64_t later, uint64_t earlier) { return later > earlier ? (later - earlier) * 1e-9 : 0.0; }

// The detached gaps' calls and the half-width of their 95 % interval, at rates from the windows
// with their trapped shares scaled by `cost_scale`.
struct Extrapolation {
  double calls = 0;
  double half = 0;
};
Extrapolation extrapolate(const SampledCalls& sampled, double cost_scale) {
  const auto& w = sampled.windows;
  const size_t n = w.size();
  std::vector<double> rate(n);
  double window_s = 0, window_calls = 0;
  for (size_t i = 0; i < n; ++i) {
    const double len = seconds(w[i].end_ns, w[i].start_ns);
    const double untrapped = 1.0 - std::min(kMaxTrappedShare, w[i].trapped_share * cost_scale);
    window_s += len;
    window_calls += static_cast<double>(w[i].calls);
    rate[i] = len > 0 ? static_cast<double>(w[i].calls) / len / untrapped : 0.0;
  }
  std::vector<std::pair<double, double>> gaps;  // (seconds, calls per second)
  gaps.emplace_back(seconds(w.front().start_ns, sampled.since_ns), rate.front());
  for (size_t i = 0; i + 1 < n; ++i) gaps.emplace_back(seconds(w[i + 1].start_ns, w[i].end_ns), (rate[i] + rate[i + 1]) / 2);
  gaps.emplace_back(seconds(sampled.until_ns, w.back().end_ns), rate.back());
  Extrapolation e;
  double gap_squares = 0;
  for (const auto& [len, r] : gaps) {
    e.calls += len * r;
    gap_squares += len * len;
  }
  if (n < 3) {
    e.half = e.calls;
    return e;
  }
  double differences = 0;
  for (size_t i = 1; i < n; ++i) differences += (rate[i] - rate[i - 1]) * (rate[i] - rate[i - 1]);
  const double variation = differences / (2.0 * static_cast<double>(n - 1));
  // Counting noise of one window's rate (Poisson), at least as if one call had been seen.
  const double mean_window_s = window_s / static_cast<double>(n);
  const double counting = mean_window_s > 0 ? (std::max(1.0, window_calls) / window_s) / mean_window_s : 0.0;
  e.half = 1.96 * std::sqrt(std::max(variation, counting) * gap_squares);
  return e;
}

}  // namespace

CallEstimate estimate_calls(const SampledCalls& sampled) {
  const double probed = static_cast<double>(sampled.probed_calls());
  if (sampled.windows.empty()) return {probed, probed, probed};
  const Extrapolation mid = extrapolate(sampled, 1.0);
  const Extrapolation cheap = extrapolate(sampled, 0.5);
  const Extrapolation dear = extrapolate(sampled, 2.0);
  // Windows trapped past the cap (on average, at twice the cost) bound the rate from below only.
  double weighted = 0, calls = 0;
  for (const SampleWindow& w : sampled.windows) {
    weighted += w.trapped_share * static_cast<double>(w.calls);
    calls += static_cast<double>(w.calls);
  }
  const double dear_share = calls > 0 ? 2.0 * weighted / calls : 0.0;
  const double high = dear_share >= kMaxTrappedShare ? std::numeric_limits<double>::infinity()
                                                     : probed + dear.calls + dear.half;
  return {probed + mid.calls, std::max(probed, probed + cheap.calls - cheap.half), high};
}

WindowSchedule::WindowSchedule(const SamplingPolicy& policy, uint64_t start_ns, uint64_t seed)
    : window_ns_(policy.window_ns), period_ns_(std::max(policy.period_ns, policy.window_ns)),
      period_start_(start_ns), random_(seed) {}

uint64_t WindowSchedule::next_start(uint64_t now_ns) {
  const uint64_t slack = period_ns_ - window_ns_;
  for (;;) {
    const uint64_t period = period_start_;
    const uint64_t start = period + (slack ? random_() % (slack + 1) : 0);
    period_start_ += period_ns_;
    if (start >= now_ns) return start;
    // Late (the tracer was held up): still this period if a whole window fits in it.
    if (now_ns + window_ns_ <= period + period_ns_) return now_ns;
  }
}

}  // namespace ingero::tracer
