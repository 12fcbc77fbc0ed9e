// SPDX-License-Identifier: Apache-2.0
// The duty cycle's arithmetic: what is hot, where windows go, and how a count is estimated
// from them, on synthetic call streams whose true count is known.
#include "tracer/duty_cycle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace ingero::tracer {
namespace {

constexpr ProbeCost kCost{800, 1200};

TEST(TrapShare, AFunctionIsHotWhenItsTrapsWouldCostMoreThanTheShare) {
  SamplingPolicy policy;  // 1 %
  EXPECT_NEAR(trap_share(10'000, true, kCost), 0.012, 1e-9);
  EXPECT_TRUE(is_hot(10'000, true, kCost, policy));
  EXPECT_TRUE(is_hot(10'000, false, {2000, 0}, policy));  // entry-only: its own cost
  EXPECT_FALSE(is_hot(1'000, true, kCost, policy));    // 0.12 %
  EXPECT_FALSE(is_hot(100, true, kCost, policy));      // a #154318 epoch's launches
  policy.enabled = false;
  EXPECT_FALSE(is_hot(1e6, true, kCost, policy));
}

// Calls at `rate(t)` per second (t in seconds from 0), except in the windows, as the schedule
// places them, where the probes' traps slow the caller to (1 - trapped) of that pace. *truth:
// the calls made so.
SampledCalls sample(const std::function<double(double)>& rate, double seconds, double trapped, uint64_t seed,
                    double* truth) {
  SamplingPolicy policy;
  SampledCalls s;
  s.since_ns = 0;
  s.until_ns = static_cast<uint64_t>(seconds * 1e9);
  WindowSchedule schedule(policy, 0, seed);
  *truth = 0;
  for (double t = 0; t < seconds; t += 1e-4) *truth += rate(t) * 1e-4;
  for (uint64_t start = schedule.next_start(0); start + policy.window_ns <= s.until_ns;
       start = schedule.next_start(start + policy.window_ns + 1'000'000)) {
    double calls = 0;
    const uint64_t end = start + policy.window_ns;
    for (uint64_t t = start; t < end; t += 100'000) calls += rate(t * 1e-9) * 1e-4 * (1 - trapped);
    s.windows.push_back({start, end, static_cast<uint64_t>(std::llround(calls)), trapped, std::nullopt, {}});
    *truth -= calls * trapped / (1 - trapped);  // the calls the traps cost
  }
  return s;
}

TEST(EstimateCalls, ASteadyRateIsRecoveredFromTenPercentWindows) {
  double truth = 0;
  const SampledCalls s = sample([](double) { return 100'000.0; }, 2.0, 0, 1, &truth);
  EXPECT_NEAR(s.duty_share(), 0.1, 0.01);
  const CallEstimate e = estimate_calls(s);
  EXPECT_NEAR(e.calls, truth, 0.01 * truth);
  EXPECT_LE(e.low, truth);
  EXPECT_GE(e.high, truth);
  EXPECT_GE(e.low, static_cast<double>(s.probed_calls()));
}

TEST(EstimateCalls, WindowsSlowedByTheirOwnTrapsAreCorrected) {
  double truth = 0;
  const SampledCalls s = sample([](double) { return 120'000.0; }, 2.0, 0.2, 2, &truth);
  SampledCalls uncorrected = s;
  for (auto& w : uncorrected.windows) w.trapped_share = 0;
  EXPECT_LT(estimate_calls(uncorrected).calls, 0.85 * truth);  // what ignoring the traps would say
  const CallEstimate e = estimate_calls(s);
  EXPECT_NEAR(e.calls, truth, 0.01 * truth);
  EXPECT_LE(e.low, truth);
  EXPECT_GE(e.high, truth);
}

// The traps cost the job 1.3x what the calibration said (its windows ran at 0.74 of the pace, not
// 0.8), and the return probe's program took 1.3x its calibrated time per hit in the windows.
TEST(EstimateCalls, TrapsDearerInTheJobThanCalibratedAreScaledByTheReturnProgramsTime) {
  double truth = 0;
  SampledCalls s = sample([](double) { return 120'000.0; }, 2.0, 0.26, 2, &truth);
  for (auto& w : s.windows) w.trapped_share = 0.2;  // the calibrated cost's share
  const CallEstimate calibrated = estimate_calls(s);
  EXPECT_FALSE(calibrated.trap_cost_scale);
  EXPECT_LT(calibrated.calls, 0.95 * truth);  // the lean the calibration alone leaves
  s.calibrated_return_program_ns = 100;
  for (auto& w : s.windows) w.return_program = {w.calls, w.calls * 130};
  const CallEstimate measured = estimate_calls(s);
  ASSERT_TRUE(measured.trap_cost_scale);
  EXPECT_NEAR(*measured.trap_cost_scale, 1.3, 1e-9);
  EXPECT_NEAR(measured.calls, truth, 0.01 * truth);
  EXPECT_LE(measured.low, truth);
  EXPECT_GE(measured.high, truth);
}

TEST(TrapCostScale, IsMeasuredOnlyFromEnoughTimedHitsAgainstATimedCalibration) {
  SampledCalls s;
  s.windows.push_back({0, 5, 400, 0.1, std::nullopt, {400, 400 * 150}});
  s.windows.push_back({10, 15, 500, 0.1, std::nullopt, {500, 500 * 150}});
  EXPECT_FALSE(trap_cost_scale(s)) << "the calibration's program time is unknown";
  s.calibrated_return_program_ns = 100;
  EXPECT_FALSE(trap_cost_scale(s)) << "900 hits are too few";
  // Other functions' returns (written out, dearer) made up most of this window's program runs.
  s.windows.push_back({20, 25, 100, 0.1, std::nullopt, {800, 800 * 900}});
  EXPECT_FALSE(trap_cost_scale(s)) << "a window of mostly others' returns is left out";
  s.windows.push_back({30, 35, 200, 0.1, std::nullopt, {200, 200 * 150}});
  ASSERT_TRUE(trap_cost_scale(s));
  EXPECT_NEAR(*trap_cost_scale(s), 1.5, 1e-9);
  s.windows.push_back({40, 45, 100'000, 0.1, std::nullopt, {100'000, 100'000 * 2'000}});  // an outlandish gauge
  EXPECT_EQ(*trap_cost_scale(s), kMaxTrapCostScale);
  EXPECT_EQ((ProgramRunTime{5, 50} - ProgramRunTime{7, 10}).runs, 0u) << "not one program's statistics";
}

TEST(EstimateCalls, ALoopThatStopsMidTraceIsNotExtrapolatedPastItsEnd) {
  double truth = 0;
  const SampledCalls s = sample([](double t) { return t < 1.3 ? 150'000.0 : 0.0; }, 3.0, 0, 3, &truth);
  const CallEstimate e = estimate_calls(s);
  EXPECT_NEAR(e.calls, truth, 0.05 * truth);
  EXPECT_LE(e.low, truth);
  EXPECT_GE(e.high, truth);
}

TEST(EstimateCalls, StepsThatRepeatAtThePeriodAreNotSeenAtOnePhaseOnly) {
  // 40 ms of launches, then 10 ms without, every 50 ms: a window at a fixed offset would see one
  // phase only (all or nothing). At random offsets the estimate is off by at most ~11 % in this
  // worst case (the period of the steps is the sampling period), and its interval still covers.
  double truth = 0;
  const SampledCalls s = sample([](double t) { return std::fmod(t, 0.05) < 0.04 ? 100'000.0 : 0.0; }, 4.0, 0, 4, &truth);
  const CallEstimate e = estimate_calls(s);
  EXPECT_NEAR(e.calls, truth, 0.15 * truth);
  EXPECT_LE(e.low, truth);
  EXPECT_GE(e.high, truth);
}

// 20 M calls in 0.4 s once gave "≈ 291,937 [64,847, —]": with no upper bound the point is no
// estimate either; only the lower bound stands.
TEST(EstimateCalls, WindowsMostlyTrappedGiveOnlyALowerBound) {
  double truth = 0;
  const SampledCalls s = sample([](double) { return 100'000.0; }, 1.0, 0.6, 5, &truth);
  const CallEstimate e = estimate_calls(s);
  EXPECT_TRUE(std::isinf(e.high));
  EXPECT_LE(e.low, truth);
  EXPECT_EQ(e.calls, e.low);
}

// A burst of 1,000,000 calls that ended within ~0.1 s, before the first window, once gave "≈ 9,838
// [9,838, 9,838]": a certainty 100x below the truth. The probes were out after sampling began, so
// what they counted is a lower bound, with no upper one.
TEST(EstimateCalls, ABurstThatEndsBeforeTheFirstWindowIsALowerBoundNotACertainty) {
  SampledCalls s;
  s.since_ns = 100'000'000;
  s.until_ns = 130'000'000;
  s.calls_before = 9'838;
  const CallEstimate e = estimate_calls(s);
  EXPECT_EQ(e.low, 9'838);
  EXPECT_EQ(e.calls, 9'838);
  EXPECT_TRUE(std::isinf(e.high));
  // One window gives the gaps no rate to trust either.
  s.until_ns = 200'000'000;
  s.windows = {{150'000'000, 155'000'000, 400, 0, std::nullopt, {}}};
  const CallEstimate one = estimate_calls(s);
  EXPECT_EQ(one.low, 10'238);
  EXPECT_TRUE(std::isinf(one.high));
}

// No estimate has an interval of no width, whatever its windows held.
TEST(EstimateCalls, NoEstimateClaimsAnIntervalOfNoWidth) {
  for (double rate : {0.0, 10.0, 1e5, 1e7})
    for (double trapped : {0.0, 0.3, 0.6, 0.95})
      for (double seconds : {0.02, 0.12, 0.5, 2.0}) {
        double truth = 0;
        const CallEstimate e = estimate_calls(sample([&](double) { return rate; }, seconds, trapped, 3, &truth));
        EXPECT_GT(e.high, e.low) << rate << "/s, trapped " << trapped << ", " << seconds << " s";
      }
}

TEST(EstimateCalls, FewWindowsGiveAnIntervalAsWideAsTheEstimate) {
  SampledCalls s;
  s.since_ns = 0;
  s.until_ns = 100'000'000;
  s.calls_before = 10;
  s.windows = {{0, 5'000'000, 500, 0, std::nullopt, {}}, {50'000'000, 55'000'000, 500, 0, std::nullopt, {}}};
  const CallEstimate e = estimate_calls(s);
  EXPECT_NEAR(e.calls, 10 + 100'000 * 0.1, 1);  // 100 K/s over the 100 ms
  EXPECT_EQ(e.low, 1010);                       // what was counted
  EXPECT_NEAR(e.high, 1010 + 2 * (e.calls - 1010), 1);
  // No window: what was counted, as a lower bound.
  EXPECT_EQ(estimate_calls(SampledCalls{0, 10, 7, {}, std::nullopt}).calls, 7);
  EXPECT_TRUE(std::isinf(estimate_calls(SampledCalls{0, 10, 7, {}, std::nullopt}).high));
}

// A caller that runs 90 % of the time in the gaps but only half of each window (a busy machine
// holds the tracer's thread too, and a window's end waits for it, so windows stretch over the
// busy moments): per wall second the windows read low; per second of the caller's own running
// time they do not.
SampledCalls preempted_in_windows(double calls_per_running_s, double* truth) {
  constexpr uint64_t kPeriod = 50'000'000, kWindow = 5'000'000;
  constexpr double kTrapped = 0.1;  // of the caller's running time in a window
  SampledCalls s;
  s.since_ns = 0;
  s.until_ns = 40 * kPeriod;
  *truth = 0;
  for (uint64_t start = 0; start < s.until_ns; start += kPeriod) {
    const uint64_t gap_oncpu = (start ? kPeriod - kWindow : 0) * 9 / 10;
    const uint64_t window_oncpu = kWindow / 2;
    const double calls = calls_per_running_s * (1 - kTrapped) * window_oncpu * 1e-9;
    const double trapped_ns = kTrapped * static_cast<double>(window_oncpu);
    const auto counted = static_cast<uint64_t>(std::llround(calls));
    s.windows.push_back({start, start + kWindow, counted, trapped_ns / kWindow,
                         CallerTime{gap_oncpu, window_oncpu, counted, trapped_ns}, {}});
    *truth += calls + calls_per_running_s * gap_oncpu * 1e-9;
  }
  const uint64_t tail_oncpu = (kPeriod - kWindow) * 9 / 10;
  s.callers_tail_ns = tail_oncpu;
  *truth += calls_per_running_s * tail_oncpu * 1e-9;
  return s;
}

TEST(EstimateCalls, ACallerPreemptedInTheWindowsIsEstimatedOnItsOwnClock) {
  double truth = 0;
  const SampledCalls s = preempted_in_windows(100'000, &truth);
  const CallEstimate e = estimate_calls(s);
  EXPECT_TRUE(e.on_cpu_clock);
  EXPECT_NEAR(e.calls, truth, 0.01 * truth);
  EXPECT_LE(e.low, truth);
  EXPECT_GE(e.high, truth);
  // The same windows on the wall clock: about half the calls of the gaps.
  SampledCalls wall = s;
  wall.callers_tail_ns.reset();
  const CallEstimate on_wall = estimate_calls(wall);
  EXPECT_FALSE(on_wall.on_cpu_clock);
  EXPECT_LT(on_wall.calls, 0.7 * truth);
}

// A window in which the callers never ran (held off the CPU) tells nothing of their rate: the
// gaps beside it take the rates of the windows around it, not zero.
TEST(EstimateCalls, AWindowInWhichTheCallersNeverRanIsPassedOver) {
  double truth = 0;
  SampledCalls s = preempted_in_windows(100'000, &truth);
  for (size_t i : {7, 8}) {
    truth -= static_cast<double>(s.windows[i].calls);
    s.windows[i].calls = 0;
    s.windows[i].callers->window_ns = 0;
    s.windows[i].callers->calls = 0;
    s.windows[i].callers->trapped_ns = 0;
  }
  const CallEstimate e = estimate_calls(s);
  EXPECT_TRUE(e.on_cpu_clock);
  EXPECT_NEAR(e.calls, truth, 0.01 * truth);
}

// Calls the probes caught just before the callers' first reading or after their last (as the
// probes went in or came out) lie in the gaps' time on the callers' clock: counted once, in the
// probed calls, not estimated again.
TEST(EstimateCalls, CallsCaughtAtAWindowsEdgesAreCountedOnce) {
  double truth = 0;
  SampledCalls s = preempted_in_windows(100'000, &truth);
  const CallEstimate inside = estimate_calls(s);
  constexpr uint64_t kAtEdges = 20;
  uint64_t moved = 0;
  for (auto& w : s.windows) {
    // The same gap and window time; the edges' calls move from the gaps' truth into the counts.
    w.calls += kAtEdges;
    w.callers->counted_in_gaps = kAtEdges;
    moved += kAtEdges;
  }
  const CallEstimate e = estimate_calls(s);
  EXPECT_TRUE(e.on_cpu_clock);
  EXPECT_NEAR(e.calls, inside.calls, 1e-6 * truth) << "moved " << moved;
  // Without the edges subtracted, they would be counted twice.
  for (auto& w : s.windows) w.callers->counted_in_gaps = 0;
  EXPECT_NEAR(estimate_calls(s).calls, inside.calls + static_cast<double>(moved), 1e-6 * truth);
}

TEST(EstimateCalls, OneWindowWithoutItsCallersTimeTakesTheWallClockForAll) {
  double truth = 0;
  SampledCalls s = preempted_in_windows(100'000, &truth);
  SampledCalls wall = s;
  wall.callers_tail_ns.reset();
  s.windows[7].callers.reset();
  EXPECT_FALSE(estimate_calls(s).on_cpu_clock);
  EXPECT_DOUBLE_EQ(estimate_calls(s).calls, estimate_calls(wall).calls);
  // A window whose callers called but never ran cannot be right either.
  s = preempted_in_windows(100'000, &truth);
  s.windows[7].callers->window_ns = 0;
  EXPECT_FALSE(estimate_calls(s).on_cpu_clock);
  // Nor can callers that were never seen running in any window (every call from threads found later).
  s = preempted_in_windows(100'000, &truth);
  for (auto& w : s.windows) w.callers = CallerTime{0, 0, 0, 0};
  EXPECT_FALSE(estimate_calls(s).on_cpu_clock);
  EXPECT_DOUBLE_EQ(estimate_calls(s).calls, estimate_calls(wall).calls);
}

TEST(WindowSchedule, OneWindowAPeriodAtRandomPlaces) {
  SamplingPolicy policy;
  WindowSchedule schedule(policy, 1'000'000'000, 7);
  std::set<uint64_t> offsets;
  uint64_t at = 1'000'000'000;
  for (uint64_t period = 0; period < 20; ++period) {
    const uint64_t start = schedule.next_start(at);
    const uint64_t period_start = 1'000'000'000 + period * policy.period_ns;
    EXPECT_GE(start, period_start);
    EXPECT_LE(start + policy.window_ns, period_start + policy.period_ns);
    offsets.insert(start - period_start);
    at = start + policy.window_ns;
  }
  EXPECT_GT(offsets.size(), 10u);
  // Late by a period and a half: the next window is in the period that is still open.
  const uint64_t late = at + policy.period_ns + policy.period_ns / 2;
  EXPECT_GE(schedule.next_start(late), late);
}

}  // namespace
}  // namespace ingero::tracer
