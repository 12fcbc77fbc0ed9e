// SPDX-License-Identifier: Apache-2.0
// CPU profiles against the real kernel: the profile program on the software CPU clock, the
// samples' stacks symbolized from the sampled program's own symbols, stored as interned frames,
// stacks and counts. Needs root (CAP_BPF, CAP_PERFMON).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sqlite.h"
#include "tests/tracer/trace_run.h"
#include "tracer/trace_db.h"

namespace ingero::tracer::testing {
namespace {

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

// One thread's samples by the Python functions in their stacks (each function once per sample),
// with the frames' files and lines.
struct PythonShares {
  int64_t samples = 0;                                  // of the thread, all
  std::map<std::string, int64_t> inclusive;             // qualified name -> samples with it in the stack
  std::map<std::string, std::set<std::string>> files;   // name -> files
  std::map<std::string, std::set<int64_t>> lines;       // name -> lines ('executing')
  std::set<std::string> files_under_burn;               // the Python files of stacks through burn_a or burn_b
};

PythonShares python_shares(const TracedRun& run, pid_t tid) {
  struct Frame {
    std::string kind, name, file, line_kind;
    int64_t line = 0;
  };
  std::map<int64_t, Frame> frames;
  std::map<int64_t, std::pair<int64_t, int64_t>> stacks;  // id -> (parent or 0, frame)
  const std::string run_id = std::to_string(run.run_id);
  auto f = sql::Statement::prepare(run.db.get(), "SELECT frame_id, kind, name, coalesce(file, ''), coalesce(line, 0), "
                                                 "coalesce(line_kind, '') FROM profile_frames WHERE run_id = " + run_id);
  for (auto row = f->step(); row.ok() && *row; row = f->step())
    frames[f->column_int(0)] = {f->column_text(1), f->column_text(2), f->column_text(3), f->column_text(5), f->column_int(4)};
  auto st = sql::Statement::prepare(run.db.get(), "SELECT stack_id, coalesce(parent_id, 0), frame_id FROM profile_stacks "
                                                  "WHERE run_id = " + run_id);
  for (auto row = st->step(); row.ok() && *row; row = st->step()) stacks[st->column_int(0)] = {st->column_int(1), st->column_int(2)};
  PythonShares shares;
  auto s = sql::Statement::prepare(run.db.get(), "SELECT stack_id, sum(samples) FROM profile_samples WHERE run_id = " +
                                                     run_id + " AND tid = " + std::to_string(tid) + " GROUP BY stack_id");
  for (auto row = s->step(); row.ok() && *row; row = s->step()) {
    const int64_t n = s->column_int(1);
    shares.samples += n;
    std::set<std::string> seen, files;
    for (int64_t id = s->column_int(0); id != 0; id = stacks[id].first) {
      const Frame& frame = frames[stacks[id].second];
      if (frame.kind != "python") continue;
      if (seen.insert(frame.name).second) shares.inclusive[frame.name] += n;
      shares.files[frame.name].insert(frame.file);
      files.insert(frame.file);
      if (frame.line_kind == "executing") shares.lines[frame.name].insert(frame.line);
    }
    if (seen.count("burn_a") || seen.count("burn_b")) shares.files_under_burn.insert(files.begin(), files.end());
  }
  return shares;
}

// The script's own measure of its split: burn_a's share of the time in burn_a and burn_b.
double timed_share_of_a(const std::string& path) {
  std::ifstream in(path);
  const auto spent = nlohmann::json::parse(in, nullptr, false);
  if (!spent.is_object()) return -1;
  const double a = spent.value("burn_a", 0.0), b = spent.value("burn_b", 0.0);
  return a + b > 0 ? a / (a + b) : -1;
}

int exec_split(const std::string& out, const char* seconds) {
  execl("/usr/bin/python3", "python3", INGERO_PROFILE_SPLIT_PY, out.c_str(), seconds, static_cast<char*>(nullptr));
  return 127;
}

#define REQUIRE_PYTHON()                                                                            \
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3: Python frames not tested"

// burn_a's share of the samples in burn_a or burn_b matches the script's timers, and the frames
// name the script's functions, its file and lines inside them.
void expect_known_split(const TracedRun& run, pid_t main_tid, const std::string& timers) {
  const double timed = timed_share_of_a(timers);
  ASSERT_GT(timed, 0) << "the script wrote no timers to " << timers;
  const PythonShares shares = python_shares(run, main_tid);
  const int64_t a = shares.inclusive.count("burn_a") ? shares.inclusive.at("burn_a") : 0;
  const int64_t b = shares.inclusive.count("burn_b") ? shares.inclusive.at("burn_b") : 0;
  ASSERT_GT(a + b, 200) << "too few samples in burn_a/burn_b of " << shares.samples;
  const double sampled = static_cast<double>(a) / static_cast<double>(a + b);
  EXPECT_NEAR(sampled, timed, 0.05) << "sampled " << a << " in burn_a, " << b << " in burn_b";
  EXPECT_EQ(shares.files.at("burn_a"), std::set<std::string>{INGERO_PROFILE_SPLIT_PY});
  // Every Python frame of those stacks is the script's own (a freed code object's address taken by
  // another must not name the old one).
  EXPECT_EQ(shares.files_under_burn, std::set<std::string>{INGERO_PROFILE_SPLIT_PY});
  // spin's body is lines 11-16 of the script; the loop runs there.
  ASSERT_TRUE(shares.lines.count("spin"));
  for (int64_t line : shares.lines.at("spin")) {
    EXPECT_GE(line, 11);
    EXPECT_LE(line, 16);
  }
  EXPECT_EQ(run.query_int("SELECT count(*) FROM run_settings WHERE" + run.where() +
                          "AND key = 'profile_python' AND value = 'ok'"),
            1);
}

// A thread's samples are its time on the CPU (thread_stats, exact) at `hz`, within a quarter.
void expect_samples_match_cpu_time(const TracedRun& run, pid_t tid, int64_t samples, int hz) {
  const int64_t oncpu_ns = run.query_int("SELECT oncpu_ns FROM thread_stats WHERE" + run.where() + "AND tid = " +
                                         std::to_string(tid));
  const double expected = static_cast<double>(oncpu_ns) * hz / 1e9;
  EXPECT_GE(expected, 30) << "thread " << tid << " ran only " << oncpu_ns << " ns";
  EXPECT_NEAR(static_cast<double>(samples), expected, expected / 4) << "thread " << tid << " ran " << oncpu_ns << " ns";
}

// The run's profile_python_walks setting: the kernel's Python walks by outcome.
nlohmann::json python_walks(const TracedRun& run) {
  auto stmt = sql::Statement::prepare(run.db.get(), "SELECT value FROM run_settings WHERE run_id = ? AND key = "
                                                    "'profile_python_walks'");
  EXPECT_TRUE(stmt.ok());
  stmt->bind(1, run.run_id);
  auto row = stmt->step();
  if (!row.ok() || !*row) return nlohmann::json();
  return nlohmann::json::parse(stmt->column_text(0), nullptr, false);
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
  // A sample per 1/99 s of the thread's time on the CPU (up to 1.5 s: less while other work shares
  // the CPUs), nearly all in the loop.
  expect_samples_match_cpu_time(*run, run->root_pid, all, 99);
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
  EXPECT_EQ(run->setting_int("profile_hz"), 99);
  EXPECT_EQ(run->setting_int("profile_bucket_ns"),
            100'000'000);
  // Buckets are starts of 100 ms buckets: 1.5 s spans at least 15 of them.
  EXPECT_GE(run->query_int("SELECT count(DISTINCT bucket_ns) FROM profile_samples WHERE" + run->where()), 14);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM profile_samples WHERE" + run->where() + "AND bucket_ns % 100000000 != 0"),
            0);
  EXPECT_GT(run->query_int("SELECT count(*) FROM run_settings WHERE" + run->where() + "AND key = 'profile_sample_ns' "
                           "AND CAST(value AS REAL) > 0"),
            0);
  // A C++ program has no interpreter: each sample's Python walk is counted as without a layout.
  const nlohmann::json walks = python_walks(*run);
  ASSERT_TRUE(walks.is_object()) << walks;
  EXPECT_EQ(walks.size(), 6u) << walks;
  EXPECT_EQ(walks.value("no_layout", 0), delivered) << walks;
  EXPECT_EQ(walks.value("ok", -1), 0) << walks;
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
  expect_samples_match_cpu_time(*run, static_cast<pid_t>(reader), all, 99);
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
  EXPECT_EQ(run->setting_int("profile_hz"), 0);
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

TEST(CpuProfile, PythonFramesSplitAJobAsItsOwnTimersDo) {
  REQUIRE_ROOT();
  REQUIRE_PYTHON();
  TempDir dir;
  TraceOptions opts = profile_options();
  opts.profile_hz = 199;  // about 800 samples: the share's sampling error is under 2 points
  const std::string timers = dir.file("timers.json");
  auto run = run_traced(dir, opts, [&] { return exec_split(timers, "4"); });
  ASSERT_RUN(run);
  ASSERT_EQ(WEXITSTATUS(run->wait_status), 0);
  expect_known_split(*run, run->root_pid, timers);
}

// A Python job that runs already, traced by attaching to it or system-wide (`system_wide`).
void expect_running_job_split(bool system_wide) {
  TempDir dir;
  const std::string timers = dir.file("timers.json");
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) _exit(exec_split(timers, "4"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // running its loop
  auto db = TraceDb::open(dir.file("attach.db"));
  ASSERT_TRUE(db.ok());
  RunStart start;
  start.label = "attach test";
  start.kind = "attach";
  start.machine_json = "{}";
  auto run_id = db->begin_run(start);
  ASSERT_TRUE(run_id.ok());
  TraceOptions opts = profile_options();
  opts.profile_hz = 199;
  opts.system_wide = system_wide;
  auto tracer = Tracer::start(opts, dir.file("attach.db"), *run_id);
  ASSERT_RUN(tracer);
  if (!system_wide) {
    ASSERT_TRUE((*tracer)->attach(target).ok());
  }
  int status = 0;
  while (waitpid(target, &status, WNOHANG) != target) {
    (*tracer)->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto totals = (*tracer)->stop();
  ASSERT_RUN(totals);
  ASSERT_TRUE(db->write_totals(*run_id, *totals).ok());
  ASSERT_EQ(WEXITSTATUS(status), 0);
  TracedRun run;
  run.run_id = *run_id;
  auto reader = sql::open(dir.file("attach.db"), sql::Mode::read_only, 5000);
  ASSERT_TRUE(reader.ok());
  run.db = std::move(*reader);
  // The share is of the time traced: the timers count the whole run, the split is the same throughout.
  expect_known_split(run, target, timers);
}

TEST(CpuProfile, AttachedPythonJobGetsTheSameFrames) {
  REQUIRE_ROOT();
  REQUIRE_PYTHON();
  expect_running_job_split(false);
}

TEST(CpuProfile, SystemWideGetsTheSameFrames) {
  REQUIRE_ROOT();
  REQUIRE_PYTHON();
  expect_running_job_split(true);
}


// Each frame of the stack an event carries (event_stacks), innermost first, as "kind name file:line".
std::vector<std::string> event_stack_frames(const TracedRun& run, int64_t tid, int64_t ts_ns, const std::string& op) {
  std::vector<std::string> frames;
  auto stmt = sql::Statement::prepare(
      run.db.get(),
      "WITH RECURSIVE walk(stack_id, depth) AS ("
      " SELECT stack_id, 0 FROM event_stacks WHERE run_id = ?1 AND tid = ?2 AND ts_ns = ?3"
      "  AND op = (SELECT op FROM ops WHERE name = ?4)"
      " UNION ALL SELECT st.parent_id, w.depth + 1 FROM walk w JOIN profile_stacks st"
      "  ON st.run_id = ?1 AND st.stack_id = w.stack_id WHERE st.parent_id IS NOT NULL)"
      " SELECT f.kind || ' ' || f.name || ' ' || coalesce(f.file, '') || ':' || coalesce(f.line, '') || ' ' ||"
      "  coalesce(f.line_kind, '') FROM walk w JOIN profile_stacks st ON st.run_id = ?1 AND st.stack_id = w.stack_id"
      " JOIN profile_frames f ON f.run_id = ?1 AND f.frame_id = st.frame_id ORDER BY w.depth");
  EXPECT_TRUE(stmt.ok());
  stmt->bind(1, run.run_id).bind(2, tid).bind(3, ts_ns).bind(4, op);
  for (auto row = stmt->step(); row.ok() && *row; row = stmt->step()) frames.push_back(stmt->column_text(0));
  return frames;
}

// Every stored slow call carries the stack that made it, taken in the kernel as the call returned:
// the Python function that called the library, with its file and the call's line, on Debian's
// CPython without frame pointers.
TEST(CpuProfile, StoredSlowCallCarriesItsPythonCaller) {
  REQUIRE_ROOT();
  REQUIRE_PYTHON();
  TempDir dir;
  TraceOptions opts = profile_options();
  opts.library_paths = {INGERO_FAKE_CUDART};
  auto run = run_traced(dir, opts, [] {
    execl("/usr/bin/python3", "python3", INGERO_CALL_STACK_PY, INGERO_FAKE_CUDART, "8", static_cast<char*>(nullptr));
    return 127;
  });
  ASSERT_RUN(run);
  ASSERT_EQ(WEXITSTATUS(run->wait_status), 0);
  auto calls = sql::Statement::prepare(run->db.get(), "SELECT tid, ts_ns FROM events WHERE run_id = ?1 AND op = "
                                                      "(SELECT op FROM ops WHERE name = 'cudaDeviceSynchronize')");
  ASSERT_TRUE(calls.ok());
  calls->bind(1, run->run_id);
  int n = 0;
  const std::string caller = std::string("python wait_for_gpu ") + INGERO_CALL_STACK_PY + ":11 executing";
  const std::string its_caller = std::string("python main ") + INGERO_CALL_STACK_PY + ":18 executing";
  for (auto row = calls->step(); row.ok() && *row; row = calls->step(), ++n) {
    const auto frames = event_stack_frames(*run, calls->column_int(0), calls->column_int(1), "cudaDeviceSynchronize");
    std::string listed;
    for (const std::string& f : frames) listed += "\n  " + f;
    auto at = std::find(frames.begin(), frames.end(), caller);
    ASSERT_NE(at, frames.end()) << "call " << n << "'s stack:" << listed;
    EXPECT_NE(std::find(at, frames.end(), its_caller), frames.end()) << "call " << n << "'s stack:" << listed;
    EXPECT_EQ(frames.front().rfind("native ", 0), 0u) << "the innermost frame is where the call returns to:" << listed;
  }
  EXPECT_EQ(n, 8);
  // Every walk of those stacks read its frames (the interpreter's layout was published first).
  EXPECT_GE(python_walks(*run).value("ok", 0), 8) << python_walks(*run);
  // A call's stack is not a sample.
  EXPECT_EQ(run->query_int("SELECT sum(samples) FROM profile_samples WHERE" + run->where()), delivered_samples(run->totals));
}

}  // namespace
}  // namespace ingero::tracer::testing
