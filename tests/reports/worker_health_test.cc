// SPDX-License-Identifier: Apache-2.0
// Worker health on fixture traces: /dev/shm against the batches a loader keeps in flight (the
// observer's batch bytes × num_workers × prefetch_factor), warned before it runs out and named at
// the SIGBUS that ends a run.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/analysis/run_analysis.h"
#include "reports/text/health_text.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

constexpr int64_t kMb = 1 << 20;

// The analysis of the fixture DB at path (its one run), once the fixture is closed.
RunAnalysis analyzed(const std::string& path) {
  auto trace = TraceFile::open(path);
  EXPECT_TRUE(trace.ok()) << trace.error().message;
  auto record = (*trace)->run(std::nullopt);
  EXPECT_TRUE(record.ok());
  auto analysis = analyze_run(**trace, *record, std::nullopt, WaitSelection::slow_or_input_bound);
  EXPECT_TRUE(analysis.ok()) << analysis.error().message;
  return std::move(analysis.value());
}

// A loader run (2 workers × prefetch_factor 2) whose batches hold batch_mb of tensors, sampled with a
// /dev/shm of shm_mb, free_mb of it free at most; sigbus: worker A dies of SIGBUS.
RunAnalysis shm_run(const std::string& name, int64_t batch_mb, int64_t shm_mb, int64_t free_mb, bool sigbus) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  const int64_t run = add_loader_run(*db, 2000 * kMs);
  for (int i = 0; i < 4; ++i)
    db->add_event(run, "batch_wait", i * 100 * kMs, 50 * kMs, kMain, kMain, batch_mb * kMb, i);
  for (int64_t pid : {kMain, kWorkerA, kWorkerB})
    for (int64_t t = 0; t < 4; ++t) {
      const int64_t free = t == 0 ? free_mb : free_mb / 2;  // batches take room once the workers run
      EXPECT_TRUE(db->db()
                      .exec(fmt::format("INSERT INTO process_samples(run_id, pid, ts_ns, rss_bytes, shm_size_bytes, "
                                        "shm_free_bytes) VALUES({}, {}, {}, {}, {}, {})",
                                        run, pid, t * 500 * kMs, 100 * kMb, shm_mb * kMb, free * kMb))
                      .ok());
    }
  if (sigbus) db->add_event(run, "fatal_signal", 1500 * kMs, 0, kWorkerA, kWorkerA, std::nullopt, 7);
  db.reset();
  return analyzed(path);
}

const HealthFinding* shm_finding(const RunAnalysis& a) {
  for (const HealthFinding& f : a.health.findings)
    if (f.kind == HealthKind::shm_exhausted) return &f;
  return nullptr;
}

TEST(WorkerHealth, TheSigbusNamesTheBatchesInFlightAgainstTheFreeShm) {
  const RunAnalysis a = shm_run("shm-sigbus", 8, 16, 16, true);
  const HealthFinding* f = shm_finding(a);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::high);
  EXPECT_EQ(f->pid, kWorkerA);
  EXPECT_EQ(f->batch_bytes, 8 * kMb);
  EXPECT_EQ(f->in_flight_bytes, 32 * kMb);  // 8 MB × 2 workers × prefetch_factor 2
  EXPECT_EQ(f->shm_free_bytes, 16 * kMb);
  const HealthWords w = describe_health(*f);
  EXPECT_NE(w.summary.find("SIGBUS"), std::string::npos) << w.summary;
  EXPECT_NE(w.summary.find("the batches in flight need 33.6 MB (4 × 8.39 MB batches) of the 16.8 MB free"), std::string::npos)
      << w.summary;
}

TEST(WorkerHealth, BatchesInFlightNearTheFreeShmAreAWarningBeforeItRunsOut) {
  // 32 MB in flight of 36 MB free: 89 %, the fullest sample only half full.
  const RunAnalysis a = shm_run("shm-warn", 8, 40, 36, false);
  const HealthFinding* f = shm_finding(a);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::medium);
  EXPECT_FALSE(f->sigbus);
  EXPECT_EQ(f->in_flight_bytes, 32 * kMb);
  EXPECT_NE(describe_health(*f).summary.find("/dev/shm will run out"), std::string::npos)
      << describe_health(*f).summary;
}

TEST(WorkerHealth, BatchesInFlightThatFitAreNothing) {
  EXPECT_EQ(shm_finding(shm_run("shm-fits", 8, 64, 64, false)), nullptr);  // 32 MB of 64 MB free
}

// A worker whose private memory was read once (a large worker in a short run): forked, its first RSS
// already holding what became private, it is counted from its fork; a worker that started small
// (spawned: its imports are private memory from the start) is not.
// A loader run of 6 s, a batch every 500 ms, whose worker A is sampled at t x 500 ms (t = 1..10) with
// an RSS of rss_mb(t) and, at t = rollup_at, a private dirty of rollup_mb (its one smaps_rollup).
template <typename Rss>
int64_t add_sampled_worker_run(TraceFixture& db, Rss rss_mb, int64_t rollup_at, int64_t rollup_mb) {
  const int64_t run = add_loader_run(db, 6000 * kMs);
  for (int i = 0; i < 10; ++i) db.add_event(run, "batch_wait", i * 500 * kMs, 50 * kMs, kMain, kMain, std::nullopt, i);
  for (int64_t t = 1; t <= 10; ++t) {
    const std::string private_dirty = t == rollup_at ? std::to_string(rollup_mb * kMb) : "NULL";
    EXPECT_TRUE(db.db()
                    .exec(fmt::format("INSERT INTO process_samples(run_id, pid, ts_ns, rss_bytes, private_dirty_bytes) "
                                      "VALUES({}, {}, {}, {}, {})",
                                      run, kWorkerA, t * 500 * kMs, rss_mb(t) * kMb, private_dirty))
                    .ok());
  }
  return run;
}

RunAnalysis one_rollup_run(const std::string& name, int64_t first_rss_mb) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  add_sampled_worker_run(*db, [first_rss_mb](int64_t t) { return t == 1 ? first_rss_mb : 500; }, 10, 150);
  db.reset();
  return analyzed(path);
}

TEST(WorkerHealth, AForkedWorkerReadOnceGrewFromNothingAtItsFork) {
  const RunAnalysis a = one_rollup_run("one-rollup-forked", 500);
  ASSERT_EQ(a.health.findings.size(), 1u);
  const HealthFinding& f = a.health.findings.front();
  EXPECT_EQ(f.kind, HealthKind::memory_growth);
  EXPECT_EQ(f.pid, kWorkerA);
  EXPECT_TRUE(f.growth_from_fork);
  EXPECT_TRUE(f.copy_on_write);
  EXPECT_EQ(f.growth_bytes, 150 * kMb);
  EXPECT_NEAR(f.growth_bytes_per_s, 150.0 * kMb / 5, 1);  // from its fork at 0 to the rollup at 5 s
  EXPECT_NE(describe_health(f).evidence.at(1).find("counted from its fork"), std::string::npos);
}

TEST(WorkerHealth, AWorkerThatStartedSmallNeedsTwoRollups) {
  EXPECT_TRUE(one_rollup_run("one-rollup-spawned", 20).health.findings.empty());
}

// A worker sampled every 500 ms for 5 s with rss_mb(t) and one early rollup (40 MB private), whose
// page_faults bursts copied cow_mb(t) in each half second before t (the tracer's counts).
template <typename Rss, typename Cow>
RunAnalysis faulting_run(const std::string& name, Rss rss_mb, Cow cow_mb) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  const int64_t run = add_sampled_worker_run(*db, rss_mb, 2, 40);
  for (int64_t t = 1; t <= 10; ++t)
    db->add_event(run, "page_faults", t * 500 * kMs - 400 * kMs, 300 * kMs, kWorkerA, kWorkerA, cow_mb(t) * kMb, 1000);
  // The observer's loader: 2 workers, an epoch of the 10 batches above.
  EXPECT_TRUE(db->db()
                  .exec(fmt::format("INSERT INTO loaders(run_id, pid, loader, knobs_json, epochs, batches, wait_ns) "
                                    "VALUES({}, {}, 0, '{{\"num_workers\": 2, \"batches_per_epoch\": 10}}', 1, 10, 0)",
                                    run, kMain))
                  .ok());
  db.reset();
  return analyzed(path);
}

TEST(WorkerHealth, ACopyingWorkerIsMeasuredByItsFaultsNotItsFewRollups) {
  // 20 MB copied each half second, its RSS steady: 200 MB by 5 s, where its one rollup read 40 MB.
  const RunAnalysis a = faulting_run("cow-faults", [](int64_t) { return 500; }, [](int64_t) { return 20; });
  ASSERT_EQ(a.health.findings.size(), 1u);
  const HealthFinding& f = a.health.findings.front();
  EXPECT_EQ(f.kind, HealthKind::memory_growth);
  EXPECT_EQ(f.growth_measure, GrowthMeasure::copy_on_write_faults);
  EXPECT_TRUE(f.copy_on_write);
  EXPECT_TRUE(f.growth_from_fork);
  EXPECT_EQ(f.growth_bytes, 200 * kMb);
  EXPECT_NEAR(f.growth_bytes_per_s, 200.0 * kMb / 5, 1);  // from its fork at 0 to its last sample at 5 s
  // Its 10 batches made the epoch, which ended where the worker is now: nothing is projected beyond.
  EXPECT_EQ(f.growth_bytes_per_epoch, 200.0 * kMb);
  EXPECT_EQ(f.projected_epoch_end_bytes, 200 * kMb);
  const HealthWords w = describe_health(f);
  EXPECT_NE(w.evidence.at(0).find("private dirty 41.9 MB at its one smaps_rollup"), std::string::npos) << w.evidence.at(0);
  EXPECT_NE(w.evidence.at(1).find("51200 pages copied on write since its fork"), std::string::npos) << w.evidence.at(1);
}

TEST(WorkerHealth, CopiesThatStoppedEarlyAreNoGrowth) {
  // 200 MB copied in its first second, then nothing for 4 s: it touched its objects once.
  const RunAnalysis a = faulting_run("cow-stopped", [](int64_t) { return 500; },
                                     [](int64_t t) { return t <= 2 ? 100 : 0; });
  EXPECT_TRUE(a.health.findings.empty());
}

TEST(WorkerHealth, WritesThatGrewItsRssAreNotCopyOnWrite) {
  // Its RSS grew with its write faults (pages it first read, then wrote: not shared with the main
  // process), and its one rollup cannot say more: no copy-on-write finding.
  const RunAnalysis a = faulting_run("cow-rss", [](int64_t t) { return 100 + 20 * t; }, [](int64_t) { return 20; });
  for (const HealthFinding& f : a.health.findings) EXPECT_FALSE(f.copy_on_write) << describe_health(f).summary;
}

// A kill seen as the kernel's SIGKILL (kernels before 6.8) says so; one from the OOM killer's own
// tracepoint does not need to.
TEST(WorkerHealth, AnOomKillSeenAsTheKernelsSigkillSaysSo) {
  for (const char* source : {"kernel_sigkill", "mark_victim"}) {
    const std::string path = temp_db_path(std::string("oom-") + source);
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->add_event(run, "oom_kill", 1500 * kMs, 0, kWorkerA, kWorkerA, std::nullopt, 0);
    EXPECT_TRUE(db->db()
                    .exec(fmt::format("INSERT INTO run_settings(run_id, key, value) VALUES({}, 'oom_kills_from', '{}')",
                                      run, source))
                    .ok());
    db.reset();
    const RunAnalysis a = analyzed(path);
    ASSERT_FALSE(a.health.findings.empty()) << source;
    const HealthFinding& f = a.health.findings.front();
    EXPECT_EQ(f.kind, HealthKind::oom_kill);
    const std::string evidence = fmt::format("{}", fmt::join(describe_health(f).evidence, "\n"));
    EXPECT_EQ(evidence.find("before Linux 6.8") != std::string::npos, std::string(source) == "kernel_sigkill")
        << evidence;
  }
}

}  // namespace
}  // namespace ingero::reports::testing
