// SPDX-License-Identifier: Apache-2.0
// CPU profiles against the real kernel: the profile program on the software CPU clock, the
// samples' stacks symbolized from the sampled program's own symbols, stored as interned frames,
// stacks and counts. Needs root (CAP_BPF, CAP_PERFMON).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/sqlite.h"
#include "tests/tracer/trace_run.h"
#include "tracer/trace_db.h"

namespace ingero::tracer::testing {
namespace {

#define REQUIRE_ROOT()                                                                              \
  if (geteuid() != 0) GTEST_SKIP() << "needs root for eBPF: run the tracer tests as root (sudo ctest)"

#define ASSERT_RUN(result) ASSERT_TRUE((result).ok()) << (result).error().message << " " << (result).error().hint

int exec_burn(const char* what, const char* seconds) {
  execl(INGERO_PROFILE_BURN, INGERO_PROFILE_BURN, what, seconds, static_cast<char*>(nullptr));
  return 127;
}

TraceOptions profile_options() {
  TraceOptions opts;
  opts.calibrate = false;  // not what these tests look at; it takes the CPU for a while
  opts.profile_hz = 99;
  return opts;
}

// Samples of one thread by the innermost frame of their stacks: "name|file" -> samples.
std::map<std::string, int64_t> leaf_samples(const TracedRun& run, pid_t tid) {
  std::map<std::string, int64_t> leaves;
  auto stmt = sql::Statement::prepare(
      run.db.get(),
      "SELECT f.name, coalesce(f.file, ''), sum(s.samples) FROM profile_samples s "
      "JOIN profile_stacks st ON st.run_id = s.run_id AND st.stack_id = s.stack_id "
      "JOIN profile_frames f ON f.run_id = st.run_id AND f.frame_id = st.frame_id "
      "WHERE s.run_id = ? AND s.tid = ? GROUP BY f.frame_id");
  EXPECT_TRUE(stmt.ok());
  stmt->bind(1, run.run_id).bind(2, int64_t{tid});
  for (auto row = stmt->step(); row.ok() && *row; row = stmt->step())
    leaves[stmt->column_text(0) + "|" + stmt->column_text(1)] += stmt->column_int(2);
  return leaves;
}

int64_t delivered_samples(const TraceTotals& totals) {
  for (const TraceLoss& loss : totals.losses)
    if (loss.source == "profile") return static_cast<int64_t>(loss.offered.value_or(0) - loss.dropped);
  return -1;
}

TEST(CpuProfile, BurningFunctionIsTheLeafOfItsSamplesWithItsCaller) {
  REQUIRE_ROOT();
  TempDir dir;
  auto run = run_traced(dir, profile_options(), [] { return exec_burn("cpu", "1.5"); });
  ASSERT_RUN(run);
  ASSERT_EQ(WEXITSTATUS(run->wait_status), 0);
  const auto leaves = leaf_samples(*run, run->root_pid);
  const std::string burn = std::string("ingero_burn_cpu|") + INGERO_PROFILE_BURN;
  int64_t all = 0;
  for (const auto& [leaf, n] : leaves) all += n;
  ASSERT_TRUE(leaves.count(burn)) << "no sample's leaf is ingero_burn_cpu in " << INGERO_PROFILE_BURN;
  // 1.5 s on the CPU at 99 Hz: about 148 samples, nearly all in the loop.
  EXPECT_GE(all, 100);
  EXPECT_GE(leaves.at(burn), all * 8 / 10);
  // The frame-pointer walk reaches its caller.
  EXPECT_GT(run->query_int(
                "SELECT count(*) FROM profile_stacks leaf JOIN profile_frames lf ON lf.run_id = leaf.run_id AND "
                "lf.frame_id = leaf.frame_id JOIN profile_stacks up ON up.run_id = leaf.run_id AND up.stack_id = "
                "leaf.parent_id JOIN profile_frames uf ON uf.run_id = up.run_id AND uf.frame_id = up.frame_id "
                "WHERE leaf.run_id = " + std::to_string(run->run_id) +
                " AND lf.name = 'ingero_burn_cpu' AND uf.name = 'main' AND lf.kind = 'native'"),
            0);
  // Every sample the kernel delivered is counted once.
  const int64_t delivered = delivered_samples(run->totals);
  EXPECT_GT(delivered, 0);
  EXPECT_EQ(run->query_int("SELECT sum(samples) FROM profile_samples WHERE" + run->where()), delivered);
  EXPECT_EQ(run->query_int("SELECT value FROM run_settings WHERE" + run->where() + "AND key = 'profile_hz'"), 99);
  EXPECT_EQ(run->query_int("SELECT value FROM run_settings WHERE" + run->where() + "AND key = 'profile_bucket_ns'"),
            100'000'000);
  // Buckets are starts of 100 ms buckets: 1.5 s spans at least 15 of them.
  EXPECT_GE(run->query_int("SELECT count(DISTINCT bucket_ns) FROM profile_samples WHERE" + run->where()), 14);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM profile_samples WHERE" + run->where() + "AND bucket_ns % 100000000 != 0"),
            0);
  EXPECT_GT(run->query_int("SELECT count(*) FROM run_settings WHERE" + run->where() + "AND key = 'profile_sample_ns' "
                           "AND CAST(value AS REAL) > 0"),
            0);
}

TEST(CpuProfile, ThreadInSyscallsGetsKernelFrames) {
  REQUIRE_ROOT();
  TempDir dir;
  auto run = run_traced(dir, profile_options(), [] { return exec_burn("syscalls", "1.5"); });
  ASSERT_RUN(run);
  ASSERT_EQ(WEXITSTATUS(run->wait_status), 0);
  // The reading thread is the process's other thread.
  const int64_t reader = run->query_int("SELECT tid FROM profile_samples WHERE" + run->where() + "AND tid != " +
                                        std::to_string(run->root_pid) + " GROUP BY tid ORDER BY sum(samples) DESC");
  ASSERT_GT(reader, 0);
  const std::string its = "FROM profile_samples s WHERE s.run_id = " + std::to_string(run->run_id) +
                          " AND s.tid = " + std::to_string(reader);
  const int64_t all = run->query_int("SELECT sum(samples) " + its);
  // Samples whose leaf is a kernel frame (copying zeros to the user's buffer), of which a
  // caller is the read system call.
  const int64_t in_kernel = run->query_int(
      "SELECT coalesce(sum(samples), 0) " + its +
      " AND (SELECT kind FROM profile_stacks st JOIN profile_frames f ON f.run_id = st.run_id AND f.frame_id = "
      "st.frame_id WHERE st.run_id = s.run_id AND st.stack_id = s.stack_id) = 'kernel'");
  EXPECT_GE(all, 80);
  EXPECT_GE(in_kernel, all / 2);
  EXPECT_GT(run->query_int("SELECT count(*) FROM profile_frames WHERE" + run->where() +
                           "AND kind = 'kernel' AND file = '[kernel]' AND name LIKE '%_read'"),
            0);
}

TEST(CpuProfile, ProfileOffWritesNoProfile) {
  REQUIRE_ROOT();
  TempDir dir;
  TraceOptions opts = profile_options();
  opts.profile_hz = 0;
  auto run = run_traced(dir, opts, [] { return exec_burn("cpu", "0.3"); });
  ASSERT_RUN(run);
  for (const char* table : {"profile_frames", "profile_stacks", "profile_samples"})
    EXPECT_EQ(run->query_int(std::string("SELECT count(*) FROM ") + table), 0) << table;
  EXPECT_EQ(run->query_int("SELECT value FROM run_settings WHERE" + run->where() + "AND key = 'profile_hz'"), 0);
  EXPECT_EQ(delivered_samples(run->totals), 0);
}

TEST(CpuProfile, AttachedProcessGetsTheSameTopFrame) {
  REQUIRE_ROOT();
  TempDir dir;
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) _exit(exec_burn("cpu", "2"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto db = TraceDb::open(dir.file("attach.db"));
  ASSERT_TRUE(db.ok());
  RunStart start;
  start.label = "attach test";
  start.kind = "attach";
  start.machine_json = "{}";
  auto run_id = db->begin_run(start);
  ASSERT_TRUE(run_id.ok());
  auto tracer = Tracer::start(profile_options(), dir.file("attach.db"), *run_id);
  ASSERT_RUN(tracer);
  ASSERT_TRUE((*tracer)->attach(target).ok());
  int status = 0;
  while (waitpid(target, &status, WNOHANG) != target) {
    (*tracer)->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto totals = (*tracer)->stop();
  ASSERT_RUN(totals);
  ASSERT_TRUE(db->write_totals(*run_id, *totals).ok());
  TracedRun run;
  run.run_id = *run_id;
  auto reader = sql::open(dir.file("attach.db"), sql::Mode::read_only, 5000);
  ASSERT_TRUE(reader.ok());
  run.db = std::move(*reader);
  const auto leaves = leaf_samples(run, target);
  int64_t all = 0;
  for (const auto& [leaf, n] : leaves) all += n;
  const std::string burn = std::string("ingero_burn_cpu|") + INGERO_PROFILE_BURN;
  ASSERT_TRUE(leaves.count(burn));
  EXPECT_GE(leaves.at(burn), all * 8 / 10);
}

}  // namespace
}  // namespace ingero::tracer::testing
