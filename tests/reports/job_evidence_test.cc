// SPDX-License-Identifier: Apache-2.0
// The evidence for a job we did not write: waits from wake-ups, the main thread's host share, the
// GPU's busy share, and the verdict they make together.
#include <gtest/gtest.h>

#include "common/trace_contract.h"
#include "reports/analysis/job_evidence.h"

namespace ingero::reports {
namespace {

constexpr int64_t kMs = 1'000'000;

// A launched trainer (pid 100) with one worker process (200) and a pin thread (101), over 1 s.
RunContext trainer_with_worker() {
  RunContext c;
  c.run.kind = "attach";
  c.run.start_ns = 0;
  c.run.end_ns = 1000 * kMs;
  c.threads = {{100, 100, 1, "python3", "main", 0, std::nullopt, std::nullopt, std::nullopt},
               {101, 100, std::nullopt, "pt_data_pin", "pin", 0, std::nullopt, std::nullopt, std::nullopt},
               {102, 100, std::nullopt, "python3", "other", 0, std::nullopt, std::nullopt, std::nullopt},
               {200, 200, 100, "python3", "worker", 0, std::nullopt, std::nullopt, std::nullopt},
               {201, 200, std::nullopt, "python3", "worker", 0, std::nullopt, std::nullopt, std::nullopt}};
  return c;
}

TimeWindow whole(const RunContext& c) { return analysis_window(c.run, std::nullopt, std::nullopt); }

int64_t waker(int64_t pid, int64_t tid) { return IB_WAKER(pid, tid); }

TEST(WakeupWaits, OnlyWaitsAProducerEndedCountAndShortPinWaitsAreBoundedSeparately) {
  const RunContext c = trainer_with_worker();
  const EventList blocked = {
      {0, 300 * kMs, 100, waker(200, 201)},   // the worker's feeder thread: a batch arrived
      {400 * kMs, 100 * kMs, 100, waker(100, 101)},  // the pin thread, long: a batch
      {600 * kMs, 3 * kMs, 100, waker(100, 101)},    // the pin thread, under 5 ms: maybe the GIL
      {700 * kMs, 50 * kMs, 100, waker(100, 102)},   // another thread of the trainer: not data
      {800 * kMs, 20 * kMs, 100, 0},                 // woken from an interrupt: unknown, not data
  };
  auto estimate = estimate_waits_from_wakeups(c, {blocked, {}, {}, {}}, whole(c));
  ASSERT_TRUE(estimate);
  const WakeupWaits& w = estimate->parts;
  EXPECT_EQ(w.by_workers_ns, 300 * kMs);
  EXPECT_EQ(w.by_pin_ns, 103 * kMs);
  EXPECT_EQ(w.pin_short_ns, 3 * kMs);
  EXPECT_EQ(w.by_others_ns, 70 * kMs);
  EXPECT_EQ(w.main_threads, 1);
  EXPECT_EQ(estimate->waits.size(), 3u);
  EXPECT_NEAR(w.share(), 0.403, 1e-6);
  EXPECT_NEAR(w.share_without_short_pin(), 0.400, 1e-6);
  EXPECT_FALSE(w.receive_cpu_ns) << "no hand-off: the receive is not estimated";
  EXPECT_EQ(w.receive_ns, 0);
}

constexpr int64_t kUs = 1'000;

// Two batches on a busy machine. Each time a worker wakes the main thread (100), it receives the batch
// for 400 us of CPU and hands the next index to its queue's feeder thread (102, "other"). After the
// first hand-off the feeder takes the CPU and the main thread waits 2.59 ms for it before next()
// returns; before the second batch's block it was preempted for 100 us within r/2 of CPU of
// blocking; a preemption in the middle of its step is not next()'s.
TEST(WakeupWaits, NextsTimeAroundTheArrivalIsEstimatedFromTheHandOffs) {
  const RunContext c = trainer_with_worker();
  WakeupTrace kernel;
  kernel.blocked = {{0, 10 * kMs, 100, waker(200, 201)}, {20100 * kUs, 4900 * kUs, 100, waker(200, 201)}};
  kernel.preempted = {{10410 * kUs, 2590 * kUs, 100, 0},   // at the first hand-off
                      {16 * kMs, 2 * kMs, 100, 0},         // in the step
                      {19900 * kUs, 100 * kUs, 100, 0}};   // getting ready to block for the second batch
  kernel.handoff_blocked = {{5 * kMs, 5400 * kUs, 102, waker(100, 100)},   // woken at the switch in, 10.4 ms
                            {11 * kMs, 14600 * kUs, 102, waker(100, 100)},  // switched in at 25.6 ms ...
                            {30 * kMs, 5 * kMs, 102, waker(100, 102)}};     // not the main thread's hand-off
  kernel.handoff_runq = {{25400 * kUs, 200 * kUs, 102, 0}};                 // ... woken at 25.4 ms
  auto estimate = estimate_waits_from_wakeups(c, kernel, whole(c));
  ASSERT_TRUE(estimate);
  const WakeupWaits& w = estimate->parts;
  EXPECT_EQ(w.by_workers_ns, 14900 * kUs);
  EXPECT_EQ(w.handoffs, 2);
  ASSERT_TRUE(w.receive_cpu_ns);
  EXPECT_EQ(*w.receive_cpu_ns, 400 * kUs);
  // [10, 10.4] and [25, 25.4] receiving, [10.41, 13] at the hand-off, [19.9, 20.0] before the block.
  EXPECT_EQ(w.receive_ns, (400 + 2590 + 100 + 400) * kUs);
  EXPECT_EQ(w.receive_runq_ns, (2590 + 100) * kUs);
  EXPECT_NEAR(w.share(), (14.9 + 3.49) / 1000, 1e-9);
  EXPECT_NEAR(w.blocked_share(), 14.9 / 1000, 1e-9);
}

TEST(WakeupWaits, AWorkerProcessWhoseThreadIsUnknownStillCountsByItsProcess) {
  const RunContext c = trainer_with_worker();
  auto estimate = estimate_waits_from_wakeups(c, {{{0, 10 * kMs, 100, waker(200, 299)}}, {}, {}, {}}, whole(c));
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->parts.by_workers_ns, 10 * kMs);
}

TEST(WakeupWaits, WithoutProducersWakeupsSayNothingAboutData) {
  RunContext c = trainer_with_worker();
  c.threads.resize(1);  // the main thread alone: num_workers=0
  EXPECT_FALSE(estimate_waits_from_wakeups(c, {{{0, 10 * kMs, 100, waker(100, 100)}}, {}, {}, {}}, whole(c)));
}

TEST(HostShare, TheMainThreadsOnCpuTimeOutsideCudaCallsOverItsLifetime) {
  RunContext c = trainer_with_worker();
  ThreadStatsRecord main{100, 100, {}};
  main.counters.oncpu_ns = 900 * kMs;
  c.thread_stats = {main};
  c.cuda_ns_by_tid[100] = 200 * kMs;
  auto share = main_host_share(c, whole(c));
  ASSERT_TRUE(share);
  EXPECT_NEAR(*share, 0.7, 0.001);
  TimeWindow part = whole(c);
  part.whole_run = false;
  EXPECT_FALSE(main_host_share(c, part)) << "kernel totals cover the whole run, not a window";
}

TEST(GpuBusy, TheMeanOverTheGpusTheJobKeptBusy) {
  RunContext c = trainer_with_worker();
  const std::string util(contract::gpu_metric::kGpuUtil);
  c.gpu_samples = {{0, 100 * kMs, util, 80}, {0, 300 * kMs, util, 60}, {1, 100 * kMs, util, 0},
                   {1, 300 * kMs, util, 0},  {0, 2000 * kMs, util, 5}};  // the last is after the run
  auto busy = gpu_busy(c, whole(c));
  ASSERT_TRUE(busy);
  ASSERT_TRUE(busy->gpu_util);
  EXPECT_NEAR(*busy->gpu_util, 0.70, 1e-9);
  EXPECT_EQ(busy->gpus, 1);
  EXPECT_FALSE(busy->sm_active);
  c.gpu_samples.clear();
  EXPECT_FALSE(gpu_busy(c, whole(c)));
}

TEST(Verdict, WaitsFirstThenTheGpuThenTheHost) {
  EXPECT_EQ(classify_run(0.74, 0.1, 0.9, true), InputBound::highly);
  EXPECT_EQ(classify_run(0.02, 0.1, 0.9, true), InputBound::gpu_bound);
  EXPECT_EQ(classify_run(0.02, 0.9, 0.1, true), InputBound::host_bound);
  EXPECT_EQ(classify_run(0.02, 0.9, std::nullopt, false), InputBound::not_input_bound)
      << "on a CPU-only job the CPU is the device: busy is not host-bound";
  EXPECT_EQ(classify_run(std::nullopt, 0.9, std::nullopt, false), InputBound::host_bound);
  EXPECT_EQ(classify_run(std::nullopt, 0.2, std::nullopt, false), InputBound::unknown);
}

TEST(ObservedConfig, AttachedTheWorkerProcessesSeenAreTheWorkerCount) {
  RunContext c = trainer_with_worker();
  c.threads.push_back({300, 300, 100, "python3", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});  // exited
  auto cfg = effective_config(c);
  EXPECT_EQ(cfg.mode, "python");
  EXPECT_EQ(cfg.num_workers, 1) << "the workers still alive at the end: an earlier epoch's are gone";
  EXPECT_TRUE(cfg.pin_memory);
  c.threads.resize(1);
  EXPECT_TRUE(effective_config(c).mode.empty());
}

TEST(ObservedConfig, TheLoaderIteratedMostIsTheConfiguration) {
  RunContext c = trainer_with_worker();
  EXPECT_FALSE(observed_config(c));
  c.loaders.push_back({100, 0, {{"num_workers", 4}, {"pin_memory", true}, {"batch_size", 256}}, nullptr, 1, 90, 0, {}});
  c.loaders.push_back({100, 1, {{"num_workers", 0}}, nullptr, 1, 10, 0, {}});
  auto cfg = effective_config(c);
  EXPECT_EQ(cfg.mode, "python");
  EXPECT_EQ(cfg.num_workers, 4);
  EXPECT_EQ(cfg.prefetch_factor, 2);
  EXPECT_TRUE(cfg.pin_memory);
  EXPECT_EQ(cfg.batch_size, 256);
}

}  // namespace
}  // namespace ingero::reports
