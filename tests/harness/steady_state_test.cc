// SPDX-License-Identifier: Apache-2.0
// A user's job timed in its steady state (harness/steady_state) on synthetic request times: the
// warm-up skipped, steps or seconds cut into windows, and what is known before the run is done.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/steady_state.h"

namespace ingero::harness {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Requests at t0 and then after each of the given step times (ms): N steps are N + 1 requests.
std::vector<uint64_t> requests(const std::vector<double>& steps_ms, uint64_t t0 = 1'000'000'000'000) {
  std::vector<uint64_t> starts{t0};
  for (double ms : steps_ms) starts.push_back(starts.back() + static_cast<uint64_t>(ms * kMs));
  return starts;
}

// A warm-up of `warmup` slow steps (500 ms each: worker start-up), then `n` steps of `ms` each.
std::vector<double> warm_then(int warmup, int n, double ms) {
  std::vector<double> steps(static_cast<size_t>(warmup), 500.0);
  steps.insert(steps.end(), static_cast<size_t>(n), ms);
  return steps;
}

SteadyPlan steps_plan(int warmup, int steps, int windows) {
  SteadyPlan p;
  p.warmup_steps = warmup;
  p.steps = steps;
  p.seconds = 0;
  p.windows = windows;
  return p;
}

SteadyPlan seconds_plan(int warmup, double seconds, int windows) {
  SteadyPlan p;
  p.warmup_steps = warmup;
  p.steps = 0;
  p.seconds = seconds;
  p.windows = windows;
  return p;
}

TEST(SteadyState, StepsModeIsCompleteOnceTheLastWindowsClosingRequestArrives) {
  const SteadyPlan plan = steps_plan(3, 10, 5);
  // 3 warm-up steps + 10 timed: 14 requests.
  const auto starts = requests(warm_then(3, 10, 10.0));
  ASSERT_EQ(starts.size(), 14u);
  const SteadyMeasure m = measure_steady(starts, plan);
  EXPECT_TRUE(m.complete);
  ASSERT_EQ(m.seconds_per_step.size(), 5u);
  for (double s : m.seconds_per_step) EXPECT_NEAR(s, 0.010, 1e-12);
  EXPECT_EQ(m.measured_steps, 10);
  EXPECT_NEAR(m.measured_s, 0.100, 1e-12);
  EXPECT_NEAR(m.steps_per_s(), 100.0, 1e-9);
}

TEST(SteadyState, StepsModeOneRequestShortIsIncompleteWithTheWindowsSoFar) {
  const SteadyPlan plan = steps_plan(3, 10, 5);
  auto starts = requests(warm_then(3, 10, 10.0));
  starts.pop_back();  // the 10th timed step has not ended: its closing request is missing
  const SteadyMeasure m = measure_steady(starts, plan);
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.seconds_per_step.size(), 4u);  // the windows that ended, not a partial fifth
  EXPECT_EQ(m.measured_steps, 8);
  EXPECT_NEAR(m.measured_s, 0.080, 1e-12);
  // More requests than the plan needs change nothing: the plan's steps are what is timed.
  auto more = requests(warm_then(3, 30, 10.0));
  const SteadyMeasure full = measure_steady(more, plan);
  EXPECT_TRUE(full.complete);
  EXPECT_EQ(full.measured_steps, 10);
  EXPECT_EQ(full.seconds_per_step.size(), 5u);
}

TEST(SteadyState, EachWindowIsItsOwnSecondsPerStep) {
  // 2 warm-up steps, then 5 windows of 4 steps each at 10, 20, 30, 40, 50 ms a step.
  std::vector<double> steps(2, 700.0);
  for (int w = 1; w <= 5; ++w) steps.insert(steps.end(), 4, 10.0 * w);
  const SteadyMeasure m = measure_steady(requests(steps), steps_plan(2, 20, 5));
  ASSERT_TRUE(m.complete);
  ASSERT_EQ(m.seconds_per_step.size(), 5u);
  for (int w = 0; w < 5; ++w) EXPECT_NEAR(m.seconds_per_step[w], 0.010 * (w + 1), 1e-12) << "window " << w;
  EXPECT_EQ(m.measured_steps, 20);
  EXPECT_NEAR(m.measured_s, 4 * (0.010 + 0.020 + 0.030 + 0.040 + 0.050), 1e-12);
}

TEST(SteadyState, TheWarmUpIsNotTimed) {
  // The warm-up steps take 1 s each; not one window may see them.
  std::vector<double> steps(5, 1000.0);
  steps.insert(steps.end(), 10, 2.0);
  const SteadyMeasure m = measure_steady(requests(steps), steps_plan(5, 10, 5));
  ASSERT_TRUE(m.complete);
  for (double s : m.seconds_per_step) EXPECT_NEAR(s, 0.002, 1e-12);
  EXPECT_NEAR(m.measured_s, 0.020, 1e-12);
  // Without a warm-up the first (slow) steps are timed: the same requests, another answer.
  const SteadyMeasure cold = measure_steady(requests(steps), steps_plan(0, 10, 5));
  ASSERT_TRUE(cold.complete);
  EXPECT_NEAR(cold.seconds_per_step.front(), 1.0, 1e-12);
}

TEST(SteadyState, StepsModeTimesTheStepsAskedForWhenTheyDoNotDivideIntoTheWindows) {
  // --steps 12 in 5 windows: the run is said to time 12 steps ("then 12 steps timed in 5 windows").
  const SteadyPlan plan = steps_plan(3, 12, 5);
  const SteadyMeasure m = measure_steady(requests(warm_then(3, 40, 10.0)), plan);
  ASSERT_TRUE(m.complete);
  EXPECT_EQ(m.seconds_per_step.size(), 5u);
  EXPECT_EQ(m.measured_steps, 12) << "windows of " << plan.steps / plan.windows << " steps time only "
                                  << m.measured_steps << " of the " << plan.steps << " steps asked for";
}

TEST(SteadyState, SecondsModeWindowsEndAtTheFirstRequestAtOrAfterTheirEnd) {
  // 2 s in 4 windows of 0.5 s; steps of 30 ms after the warm-up: windows end on a request, so
  // each holds whole steps (17, 17, 16, 17 steps: the first request at or past 0.5, 1.0, 1.5, 2.0 s).
  const SteadyPlan plan = seconds_plan(3, 2.0, 4);
  const auto starts = requests(warm_then(3, 100, 30.0));
  const SteadyMeasure m = measure_steady(starts, plan);
  ASSERT_TRUE(m.complete);
  ASSERT_EQ(m.seconds_per_step.size(), 4u);
  for (double s : m.seconds_per_step) EXPECT_NEAR(s, 0.030, 1e-12);
  EXPECT_EQ(m.measured_steps, 67);  // ceil(2.0 / 0.03)
  EXPECT_NEAR(m.measured_s, 67 * 0.030, 1e-9);
  EXPECT_GE(m.measured_s, plan.seconds);
  EXPECT_LT(m.measured_s, plan.seconds + 0.030);
}

TEST(SteadyState, SecondsModeIsIncompleteUntilARequestReachesTheLastWindowsEnd) {
  const SteadyPlan plan = seconds_plan(3, 2.0, 4);
  // 60 steps of 30 ms: 1.8 s after the warm-up, short of 2 s.
  const SteadyMeasure m = measure_steady(requests(warm_then(3, 60, 30.0)), plan);
  EXPECT_FALSE(m.complete);
  EXPECT_EQ(m.seconds_per_step.size(), 3u);  // the windows that ended at 0.5, 1.0 and 1.5 s
  EXPECT_EQ(m.measured_steps, 50);           // to the first request at or past 1.5 s: step 50
  EXPECT_NEAR(m.measured_s, 1.5, 1e-9);
}

TEST(SteadyState, SecondsModeStepsSlowerThanAWindowLeaveNoEmptyWindow) {
  // One step of 1.2 s spans two 0.5 s windows: it is one window of one step, not an empty one.
  const SteadyPlan plan = seconds_plan(1, 2.0, 4);
  const SteadyMeasure m = measure_steady(requests({100.0, 1200.0, 1200.0}), plan);
  EXPECT_TRUE(m.complete);
  for (double s : m.seconds_per_step) EXPECT_GT(s, 0.0);
  EXPECT_EQ(m.measured_steps, 2);
  EXPECT_NEAR(m.measured_s, 2.4, 1e-9);
}

TEST(SteadyState, FewerRequestsThanTheWarmUpMeasureNothing) {
  const SteadyPlan plan = steps_plan(5, 10, 5);
  for (size_t n : {0u, 1u, 4u, 5u, 6u}) {
    std::vector<uint64_t> starts = requests(std::vector<double>(n, 10.0));
    starts.resize(n);
    const SteadyMeasure m = measure_steady(starts, plan);
    EXPECT_FALSE(m.complete) << n << " requests";
    EXPECT_TRUE(m.seconds_per_step.empty()) << n << " requests";
    EXPECT_EQ(m.measured_steps, 0) << n << " requests";
    EXPECT_EQ(m.steps_per_s(), 0.0) << n << " requests";
  }
  // Seconds mode alike.
  const SteadyMeasure s = measure_steady(requests({10.0, 10.0}), seconds_plan(5, 1.0, 5));
  EXPECT_FALSE(s.complete);
  EXPECT_TRUE(s.seconds_per_step.empty());
}

TEST(SteadyState, TimedForIsTheTimeSinceTheFirstTimedRequest) {
  const SteadyPlan plan = steps_plan(3, 10, 5);
  const auto starts = requests({100.0, 100.0, 100.0, 10.0, 10.0});  // requests 0..5; request 3 at +300 ms
  const uint64_t first_timed = starts[3];
  // Before the warm-up has passed: nothing is timed yet.
  EXPECT_FALSE(timed_for_s({starts.begin(), starts.begin() + 3}, plan, first_timed + 5 * kMs).has_value());
  EXPECT_FALSE(timed_for_s({}, plan, first_timed).has_value());
  // A clock before the first timed request (another clock, a stale reading): not timed either.
  EXPECT_FALSE(timed_for_s(starts, plan, first_timed - 1).has_value());
  auto at = timed_for_s(starts, plan, first_timed + 250 * kMs);
  ASSERT_TRUE(at.has_value());
  EXPECT_NEAR(*at, 0.250, 1e-12);
  // Counted from the first timed request even when only it has arrived.
  auto only = timed_for_s({starts.begin(), starts.begin() + 4}, plan, first_timed + 40 * kMs);
  ASSERT_TRUE(only.has_value());
  EXPECT_NEAR(*only, 0.040, 1e-12);
  EXPECT_NEAR(*timed_for_s(starts, steps_plan(0, 10, 5), starts[0] + kMs), 0.001, 1e-12);
}

}  // namespace
}  // namespace ingero::harness
