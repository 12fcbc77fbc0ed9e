// SPDX-License-Identifier: Apache-2.0
// The worker-health sampler: what it reads from /proc (a fake tree, and this process's own
// entry), and that its rows reach process_samples with NULLs where /proc could not tell.
#include "tracer/process_sampler.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/common/temp_dir.h"
#include "tracer/trace_db.h"

namespace ingero::tracer {
namespace {

using testing::TempDir;

constexpr const char* kRollup =
    "55d0c000-7ffd0000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:              204800 kB\n"
    "Pss:              150000 kB\n"
    "Pss_Anon:         100000 kB\n"
    "Shared_Dirty:       1000 kB\n"
    "Private_Dirty:    180000 kB\n"
    "Swap:                 12 kB\n"
    "SwapPss:              12 kB\n";

constexpr const char* kLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max open files            64                   524288               files     \n";

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(ProcessSampler, ParsesTheRollupInBytesAndIgnoresTheOtherFields) {
  ProcessSample s;
  parse_smaps_rollup(kRollup, s);
  EXPECT_EQ(s.rss_bytes, 204800ull * 1024);
  EXPECT_EQ(s.pss_bytes, 150000ull * 1024);  // not Pss_Anon
  EXPECT_EQ(s.private_dirty_bytes, 180000ull * 1024);
  EXPECT_EQ(s.swap_bytes, 12ull * 1024);  // not SwapPss
}

TEST(ProcessSampler, TheSoftOpenFilesLimitAndNoneWhenUnlimited) {
  EXPECT_EQ(parse_open_files_limit(kLimits), 64u);
  EXPECT_FALSE(parse_open_files_limit("Max open files            unlimited            unlimited            files\n"));
  EXPECT_FALSE(parse_open_files_limit("Max cpu time              unlimited            unlimited            seconds\n"));
}

TEST(ProcessSampler, TheProcessCpuTimeIsUserAndSystemTicks) {
  EXPECT_EQ(parse_stat_cpu_ticks("42 (py (x) y) S 1 42 42 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 3 0 9"), 280u);
  EXPECT_FALSE(parse_stat_cpu_ticks("42 (python3"));
}

TEST(ProcessSampler, StatusGivesRssAndSwapInBytes) {
  ProcessSample s;
  parse_status("Name:\tpython3\nVmHWM:\t  9000 kB\nVmRSS:\t  8000 kB\nRssAnon:\t 5000 kB\nVmSwap:\t     4 kB\n", s);
  EXPECT_EQ(s.rss_bytes, 8000ull * 1024);
  EXPECT_EQ(s.swap_bytes, 4ull * 1024);
  EXPECT_FALSE(s.private_dirty_bytes);
}

// A rollup walks the page tables: after one that took d, the process's next waits until it has run
// what keeps its rollups within rollup_share, and its rows meanwhile still carry what status gives.
TEST(ProcessSampler, AnExpensiveRollupIsReadLessOftenThanTheRest) {
  ProcessSamplerOptions options;
  options.interval = std::chrono::milliseconds(20);
  options.rollup_share = 1e-7;          // any read's time / 1e-7: far beyond this test
  options.rollup_ns_per_rss_mb = 0;     // the first is expected to cost nothing: read at once
  auto sampler = ProcessSampler::start([] { return std::vector<pid_t>{getpid()}; }, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  std::vector<ProcessSample> samples = sampler->stop();
  ASSERT_GE(samples.size(), 3u);
  EXPECT_TRUE(samples.front().private_dirty_bytes);
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_FALSE(samples[i].private_dirty_bytes) << i;
    EXPECT_TRUE(samples[i].rss_bytes) << i;
  }
}

// The first rollup is paid for too: a 1 GB process (10 ms expected at 10 µs per MB) is not walked
// before it has run 10 ms / rollup_share on the CPU (its /proc/PID/stat says how long it ran).
TEST(ProcessSampler, TheFirstRollupWaitsUntilTheProcessHasRunItsExpectedCost) {
  TempDir proc;
  write_file(proc.file("42/status"), "Name:\tpython3\nVmRSS:\t1048576 kB\n");
  write_file(proc.file("42/smaps_rollup"), kRollup);
  write_file(proc.file("42/fd/0"), "");
  auto set_cpu_s = [&](int seconds) {
    const long ticks = seconds * sysconf(_SC_CLK_TCK);
    write_file(proc.file("42/stat.new"), "42 (python3) S 1 42 42 0 -1 0 0 0 0 0 " + std::to_string(ticks) + " 0 0 0\n");
    std::filesystem::rename(proc.file("42/stat.new"), proc.file("42/stat"));  // never read half-written
  };
  set_cpu_s(0);
  ProcessSamplerOptions options;
  options.proc_root = proc.path();
  options.interval = std::chrono::milliseconds(10);
  options.rollup_share = 0.01;             // 10 ms of rollup per 1 s of the process's CPU
  options.rollup_ns_per_rss_mb = 10'000;
  auto sampler = ProcessSampler::start([] { return std::vector<pid_t>{42}; }, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  set_cpu_s(2);  // now it has run what its first rollup costs, twice over
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  std::vector<ProcessSample> samples = sampler->stop();
  ASSERT_GE(samples.size(), 4u);
  EXPECT_FALSE(samples.front().private_dirty_bytes);
  EXPECT_EQ(samples.front().rss_bytes, 1ull << 30);  // from status
  EXPECT_EQ(samples.back().private_dirty_bytes, 180000ull * 1024);
}

// A fake process that sleeps in wchan and has run cpu_s seconds (its stat written whole).
void fake_process(TempDir& proc, int pid, const std::string& wchan, long ticks) {
  const std::string dir = std::to_string(pid) + "/";
  write_file(proc.file(dir + "status"), "Name:\tpython3\nVmRSS:\t1000 kB\n");
  write_file(proc.file(dir + "wchan"), wchan);
  write_file(proc.file(dir + "fd/0"), "");
  write_file(proc.file(dir + "stat.new"), std::to_string(pid) + " (python3) S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(ticks) + " 0 0 0\n");
  std::filesystem::rename(proc.file(dir + "stat.new"), proc.file(dir + "stat"));
}

// Every process asleep and none running for hang_after: on_hang, once, with the processes.
TEST(ProcessSampler, AHangIsSeenOnceWhenEveryProcessSleepsWithoutRunning) {
  TempDir proc;
  fake_process(proc, 42, "futex_wait_queue", 100);
  fake_process(proc, 43, "anon_pipe_read", 7);
  ProcessSamplerOptions options;
  options.proc_root = proc.path();
  options.interval = std::chrono::milliseconds(10);
  options.hang_after = std::chrono::milliseconds(60);
  std::mutex mutex;
  std::vector<std::vector<pid_t>> hangs;
  options.on_hang = [&](const std::vector<pid_t>& pids, uint64_t) {
    std::lock_guard lock(mutex);
    hangs.push_back(pids);
  };
  auto sampler = ProcessSampler::start([] { return std::vector<pid_t>{43, 42}; }, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  sampler->stop();
  ASSERT_EQ(hangs.size(), 1u);
  EXPECT_EQ(hangs[0], (std::vector<pid_t>{42, 43}));
}

// A process that keeps running (its CPU time climbing) is no hang, asleep at each sample or not.
TEST(ProcessSampler, NoHangWhileAProcessRuns) {
  TempDir proc;
  fake_process(proc, 42, "futex_wait_queue", 0);
  ProcessSamplerOptions options;
  options.proc_root = proc.path();
  options.interval = std::chrono::milliseconds(10);
  options.hang_after = std::chrono::milliseconds(60);
  std::atomic<int> hangs{0};
  options.on_hang = [&](const std::vector<pid_t>&, uint64_t) { ++hangs; };
  auto sampler = ProcessSampler::start([] { return std::vector<pid_t>{42}; }, options);
  for (long ticks = 0; ticks < 250; ticks += 5) {  // 50 ms of CPU per 5 ms: running flat out
    fake_process(proc, 42, "futex_wait_queue", ticks * sysconf(_SC_CLK_TCK) / 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  sampler->stop();
  EXPECT_EQ(hangs.load(), 0);
}

TEST(ProcessSampler, AFakeProcessIsReadAndAMissingOneIsNothing) {
  TempDir proc;
  write_file(proc.file("42/smaps_rollup"), kRollup);
  write_file(proc.file("42/limits"), kLimits);
  write_file(proc.file("42/wchan"), "futex_wait_queue");
  for (const char* fd : {"0", "1", "2", "7"}) write_file(proc.file(std::string("42/fd/") + fd), "");
  auto s = read_process_sample(proc.path(), 42, 1234);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 42);
  EXPECT_EQ(s->ts_ns, 1234u);
  EXPECT_EQ(s->fds, 4u);
  EXPECT_EQ(s->fd_limit, 64u);
  EXPECT_EQ(s->wchan, "futex_wait_queue");
  EXPECT_EQ(s->private_dirty_bytes, 180000ull * 1024);
  EXPECT_FALSE(s->shm_size_bytes);  // no root/dev/shm in the fake tree
  EXPECT_FALSE(read_process_sample(proc.path(), 43, 1234));
}

TEST(ProcessSampler, ThisProcessIsSampledOnItsThreadAtTheInterval) {
  ProcessSamplerOptions options;
  options.interval = std::chrono::milliseconds(20);
  options.rollup_ns_per_rss_mb = 0;  // expected to cost nothing: this test's process has run little
  auto sampler = ProcessSampler::start([] { return std::vector<pid_t>{getpid()}; }, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  std::vector<ProcessSample> samples = sampler->stop();
  ASSERT_GE(samples.size(), 3u);
  ASSERT_LE(samples.size(), 10u);
  const ProcessSample& s = samples.back();
  EXPECT_GT(s.ts_ns, samples.front().ts_ns);
  EXPECT_GT(s.rss_bytes.value_or(0), 1u << 20);
  EXPECT_GE(s.fds.value_or(0), 3u);
  EXPECT_TRUE(samples.front().private_dirty_bytes);  // the first rollup, expected free, is read at once
  EXPECT_TRUE(s.shm_free_bytes || !std::filesystem::exists("/dev/shm"));
  EXPECT_TRUE(sampler->note().empty());
}

TEST(ProcessSampler, SamplesAreStoredWithNullsForWhatWasNotRead) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("t.db"));
  ASSERT_TRUE(db.ok()) << db.error().message;
  RunStart start;
  start.label = "health";
  start.kind = "command";
  start.command = {"test"};
  start.machine_json = "{}";
  auto run = db->begin_run(start);
  ASSERT_TRUE(run.ok());
  TraceTotals totals;
  ProcessSample a;
  a.pid = 7;
  a.ts_ns = 100;
  a.rss_bytes = 4096;
  a.private_dirty_bytes = 1024;
  a.fds = 9;
  totals.process_samples = {a};
  ASSERT_TRUE(db->write_totals(*run, totals).ok());
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db->connection().get(),
                               "SELECT count(*) FROM process_samples WHERE pid = 7 AND ts_ns = 100 AND rss_bytes = 4096 "
                               "AND private_dirty_bytes = 1024 AND fds = 9 AND pss_bytes IS NULL AND fd_limit IS NULL "
                               "AND shm_free_bytes IS NULL",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
}

}  // namespace
}  // namespace ingero::tracer
