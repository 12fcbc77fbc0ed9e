// SPDX-License-Identifier: Apache-2.0
// The live view's estimate and health (tracer/live_waits.h, tracer/live_health.h), with threads and
// samples made up: no root, no BPF.
#include <gtest/gtest.h>

#include "common/trace_contract.h"
#include "tracer/live_health.h"
#include "tracer/live_waits.h"

namespace ingero::tracer {
namespace {

ThreadInfo thread(pid_t tid, pid_t pid, const char* role, std::optional<int> rank = std::nullopt) {
  ThreadInfo t;
  t.tid = tid;
  t.pid = pid;
  t.role = role;
  t.rank = rank;
  return t;
}

ib_event blocked(pid_t pid, pid_t tid, pid_t waker_pid, pid_t waker_tid, uint64_t dur_ns) {
  ib_event e{};
  e.op = IB_OP_OFFCPU_BLOCKED;
  e.pid = pid;
  e.tid = tid;
  e.dur_ns = dur_ns;
  e.arg = IB_WAKER(waker_pid, waker_tid);
  return e;
}

// An attached job: the main thread's sleeps a worker or the pin thread ended are its waits for data,
// estimated; those another thread ended, another thread's sleeps, and sleeps without a waker are not.
TEST(LiveView, WaitsAreTheMainThreadsSleepsThatALoaderEnded) {
  const std::vector<ThreadInfo> threads = {thread(100, 100, "main", 2), thread(101, 100, "pin", 2),
                                           thread(102, 100, "other", 2), thread(200, 200, "worker", 2)};
  WakeWaits waits;
  waits.add(blocked(100, 100, 200, 200, 3'000'000));  // a worker's batch: 3 ms
  waits.add(blocked(100, 100, 100, 101, 20'000'000));  // the pin thread's: 20 ms
  waits.add(blocked(100, 100, 100, 102, 50'000'000));  // another thread of the job: not a batch
  waits.add(blocked(100, 102, 200, 200, 9'000'000));   // not the main thread
  ib_event unknown = blocked(100, 100, 0, 0, 7'000'000);
  unknown.arg = 0;
  waits.add(unknown);
  const auto rows = waits.estimate(threads);
  ASSERT_EQ(rows.size(), 1u);
  const LiveLoaderWaits& w = rows[0];
  EXPECT_TRUE(w.estimated);
  EXPECT_EQ(w.loader, -1);
  EXPECT_EQ(w.rank, 2);
  EXPECT_EQ(w.role, "main");
  EXPECT_EQ(w.batches, 2u);
  EXPECT_EQ(w.wait_ns, 23'000'000u);
  ASSERT_EQ(w.wait_buckets.size(), kBatchWaitBounds.size() + 1);
  EXPECT_EQ(w.wait_buckets[4], 1u);  // (2.5 ms, 5 ms]
  EXPECT_EQ(w.wait_buckets[6], 1u);  // (10 ms, 25 ms]
}

ProcessSample sample(pid_t pid, uint64_t dirty, uint64_t fds, uint64_t limit, uint64_t shm_free) {
  ProcessSample s;
  s.pid = pid;
  s.rss_bytes = 10 * dirty;
  s.private_dirty_bytes = dirty;
  s.fds = fds;
  s.fd_limit = limit;
  s.shm_size_bytes = 1 << 30;
  s.shm_free_bytes = shm_free;
  return s;
}

// Health by role and rank: workers' private dirty summed, the most descriptors open against the
// lowest limit, the least /dev/shm free; a row without smaps_rollup keeps the last private dirty,
// a process gone from a round is gone; OOM kills by the victim's role.
TEST(LiveView, HealthIsSummedByRoleAndRankFromTheLatestSamples) {
  const std::vector<ThreadInfo> threads = {thread(100, 100, "main", 0), thread(200, 200, "worker", 0),
                                           thread(300, 300, "worker", 0), thread(400, 400, "worker", 0)};
  LatestHealth health;
  health.update({sample(100, 1000, 50, 1024, 900), sample(200, 4000, 30, 512, 800), sample(300, 6000, 40, 4096, 700),
                 sample(400, 1, 1, 1, 1)});
  ProcessSample no_rollup = sample(200, 0, 31, 512, 800);
  no_rollup.private_dirty_bytes.reset();
  health.update({sample(100, 1000, 50, 1024, 900), no_rollup, sample(300, 7000, 40, 4096, 600)});  // 400 exited
  health.add_oom_kill(300);
  LiveTotals live;
  health.fill(threads, live);
  ASSERT_EQ(live.health.size(), 2u);
  const LiveHealth& workers = live.health[1].role == "worker" ? live.health[1] : live.health[0];
  EXPECT_EQ(workers.processes, 2u);
  EXPECT_EQ(workers.private_dirty_bytes, 11'000u);
  EXPECT_EQ(workers.open_fds, 40u);
  EXPECT_EQ(workers.fd_limit, 512u);
  EXPECT_EQ(workers.rank, 0);
  ASSERT_TRUE(live.shm.has_value());
  EXPECT_EQ(live.shm->free_bytes, 600u);
  EXPECT_EQ(live.oom_kills.at("worker"), 1u);
}

// A rank is stalled while every thread of its job is off the CPU: for as long as since the last
// of them left it; 0 while one runs. Exited threads and threads of other roles do not count.
TEST(LiveView, ARankIsStalledWhileEveryThreadOfItsJobIsOffTheCpu) {
  std::vector<ThreadInfo> threads = {thread(100, 100, "main", 0), thread(200, 200, "worker", 0),
                                     thread(300, 300, "main", 1), thread(301, 300, "other", 1),
                                     thread(302, 300, "worker", 1)};
  threads[4].exit_ns = 5;
  std::map<pid_t, ThreadClock> clocks = {{100, {0, 1'000'000'000}}, {200, {0, 3'000'000'000}},
                                         {300, {0, 2'000'000'000}}, {301, {4'000'000'000, 0}},
                                         {302, {4'000'000'000, 0}}};
  auto stalled = stalled_by_rank(threads, clocks, 10'000'000'000);
  EXPECT_DOUBLE_EQ(stalled.at(0), 7.0);
  EXPECT_DOUBLE_EQ(stalled.at(1), 8.0);
  clocks[200] = {9'000'000'000, 0};  // a worker of rank 0 runs
  stalled = stalled_by_rank(threads, clocks, 10'000'000'000);
  EXPECT_DOUBLE_EQ(stalled.at(0), 0.0);
}

}  // namespace
}  // namespace ingero::tracer
