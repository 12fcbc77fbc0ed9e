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

ProgramRunTime operator-(const ProgramRunTime& later, const ProgramRunTime& earlier) {
  if (later.runs < earlier.runs || later.ns < earlier.ns) return {};  // not one program's statistics
  return {later.runs - earlier.runs, later.ns - earlier.ns};
}

std::optional<double> trap_cost_scale(const SampledCalls& sampled) {
  if (sampled.calibrated_return_program_ns <= 0) return std::nullopt;
  ProgramRunTime windows;
  for (const SampleWindow& w : sampled.windows) {
    const double own = static_cast<double>(w.calls) + 1.0;
    if (static_cast<double>(w.return_program.runs) > own * (1.0 + kMaxForeignReturnShare)) continue;
    windows.runs += w.return_program.runs;
    windows.ns += w.return_program.ns;
  }
  if (windows.runs < kMinTimedReturnHits) return std::nullopt;
  const double per_hit = static_cast<double>(windows.ns) / static_cast<double>(windows.runs);
  return std::clamp(per_hit / sampled.calibrated_return_program_ns, kMinTrapCostScale, kMaxTrapCostScale);
}

double SampledCalls::duty_share() const {
  if (until_ns <= since_ns) return 1.0;
  return std::min(1.0, static_cast<double>(attached_ns()) / static_cast<double>(until_ns - since_ns));
}

namespace {

double seconds(uint64_t later, uint64_t earlier) { return later > earlier ? (later - earlier) * 1e-9 : 0.0; }

// The windows and the gaps around them on one clock (seconds of wall time, or of the callers'
// on-CPU time): each window's length, the calls its rate is taken from and the share of it the
// probes' traps took; gaps[i] comes before window i, the last gap after the last window.
struct Spans {
  struct Window {
    double length = 0;
    double calls = 0;
    double trapped_share = 0;
  };
  std::vector<Window> windows;
  std::vector<double> gaps;
  double counted_in_gaps = 0;  // calls probed in the gaps' time: counted, not to be estimated
  bool on_cpu = false;
};

Spans wall_spans(const SampledCalls& sampled) {
  const auto& w = sampled.windows;
  Spans spans;
  for (size_t i = 0; i < w.size(); ++i) {
    spans.windows.push_back({seconds(w[i].end_ns, w[i].start_ns), static_cast<double>(w[i].calls), w[i].trapped_share});
    spans.gaps.push_back(seconds(w[i].start_ns, i ? w[i - 1].end_ns : sampled.since_ns));
  }
  spans.gaps.push_back(seconds(sampled.until_ns, w.back().end_ns));
  return spans;
}

// Empty unless every window and gap has the callers' on-CPU time, and every window that counted
// their calls saw them run.
std::optional<Spans> on_cpu_spans(const SampledCalls& sampled) {
  if (!sampled.callers_tail_ns) return std::nullopt;
  Spans spans;
  spans.on_cpu = true;
  for (const SampleWindow& w : sampled.windows) {
    if (!w.callers || (w.callers->calls > 0 && w.callers->window_ns == 0)) return std::nullopt;
    const CallerTime& c = *w.callers;
    const double length = static_cast<double>(c.window_ns) * 1e-9;
    spans.windows.push_back({length, static_cast<double>(c.calls), length > 0 ? c.trapped_ns * 1e-9 / length : 0.0});
    spans.gaps.push_back(static_cast<double>(c.gap_before_ns) * 1e-9);
    spans.counted_in_gaps += static_cast<double>(c.counted_in_gaps);
  }
  spans.gaps.push_back(static_cast<double>(*sampled.callers_tail_ns) * 1e-9);
  // Callers never seen running in any window give no rate at all: the wall clock still does.
  if (std::none_of(spans.windows.begin(), spans.windows.end(), [](const Spans::Window& w) { return w.length > 0; }))
    return std::nullopt;
  return spans;
}

// The detached gaps' calls and the half-width of their 95 % interval, at rates from the windows
// with their trapped shares scaled by `cost_scale`.
struct Extrapolation {
  double calls = 0;
  double half = 0;
};
Extrapolation extrapolate(const Spans& spans, double cost_scale) {
  const auto& w = spans.windows;
  // A window of no length (its callers never ran in it) says nothing of their rate: each gap
  // takes the rates of the nearest windows that have one on either side.
  std::vector<double> rate, calls, untrapped;  // of the windows that have a rate
  std::vector<size_t> at;
  double window_length = 0, window_calls = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].length <= 0) continue;
    const double ran = w[i].length * (1.0 - std::min(kMaxTrappedShare, w[i].trapped_share * cost_scale));
    window_length += w[i].length;
    window_calls += w[i].calls;
    rate.push_back(w[i].calls / ran);
    calls.push_back(w[i].calls);
    untrapped.push_back(ran);
    at.push_back(i);
  }
  const size_t n = rate.size();
  Extrapolation e;
  if (n == 0) return e;
  double gap_squares = 0;
  size_t next = 0;  // the first rated window at or after gap i
  for (size_t i = 0; i < spans.gaps.size(); ++i) {
    while (next < n && at[next] < i) ++next;
    // Before the first window at its rate, after the last at its rate, between two at their pooled
    // rate (their calls over their untrapped time: a short window weighs less than a whole one).
    const double r = next == 0   ? rate.front()
                     : next == n ? rate.back()
                                 : (calls[next - 1] + calls[next]) / (untrapped[next - 1] + untrapped[next]);
    e.calls += spans.gaps[i] * r;
    gap_squares += spans.gaps[i] * spans.gaps[i];
  }
  e.calls = std::max(0.0, e.calls - spans.counted_in_gaps);
  if (n < 3) {
    e.half = e.calls;
    return e;
  }
  double differences = 0;
  for (size_t i = 1; i < n; ++i) differences += (rate[i] - rate[i - 1]) * (rate[i] - rate[i - 1]);
  const double variation = differences / (2.0 * static_cast<double>(n - 1));
  // Counting noise of one window's rate (Poisson), at least as if one call had been seen.
  const double mean_window = window_length / static_cast<double>(n);
  const double counting = mean_window > 0 ? (std::max(1.0, window_calls) / window_length) / mean_window : 0.0;
  e.half = 1.96 * std::sqrt(std::max(variation, counting) * gap_squares);
  return e;
}

}  // namespace

CallEstimate estimate_calls(const SampledCalls& sampled) {
  const double probed = static_cast<double>(sampled.probed_calls());
  const double unbounded = std::numeric_limits<double>::infinity();
  // Sampling began, so the probes were out for a while: with no window to give that time a rate, what
  // they counted is all that is known, a lower bound (a burst that ends before the first window).
  if (sampled.windows.empty()) return {probed, probed, unbounded, false, std::nullopt};
  const Spans spans = on_cpu_spans(sampled).value_or(wall_spans(sampled));
  const auto rated = std::count_if(spans.windows.begin(), spans.windows.end(),
                                   [](const Spans::Window& w) { return w.length > 0; });
  if (rated < kMinRatedWindows) return {probed, probed, unbounded, spans.on_cpu, std::nullopt};
  const std::optional<double> measured = trap_cost_scale(sampled);
  const double scale = measured.value_or(1.0);
  const Extrapolation mid = extrapolate(spans, scale);
  const Extrapolation cheap = extrapolate(spans, 0.5 * scale);
  const Extrapolation dear = extrapolate(spans, 2.0 * scale);
  // Windows trapped past the cap (on average, at twice the cost) bound the rate from below only.
  double weighted = 0, calls = 0;
  for (const Spans::Window& w : spans.windows) {
    weighted += w.trapped_share * w.calls;
    calls += w.calls;
  }
  const double dear_share = calls > 0 ? 2.0 * scale * weighted / calls : 0.0;
  const double low = std::max(probed, probed + cheap.calls - cheap.half);
  // Traps that took most of the windows leave their rate a floor only: no point estimate either.
  if (dear_share >= kMaxTrappedShare) return {low, low, unbounded, spans.on_cpu, measured};
  return {probed + mid.calls, low, probed + dear.calls + dear.half, spans.on_cpu, measured};
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
