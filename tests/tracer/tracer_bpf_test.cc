// SPDX-License-Identifier: Apache-2.0
// The tracer against the real kernel: CUDA uprobes on the toolkit's libcudart,
// scheduler, process tree, memory, losses and clean-up. Needs root (CAP_BPF).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/unique_fd.h"
#include "tests/common/memory_cgroup.h"
#include "tests/tracer/cuda_calls.h"
#include "tests/tracer/trace_run.h"
#include "tracer/trace_db.h"

namespace ingero::tracer::testing {
namespace {

#define REQUIRE_CUDART()                                                                             \
  if (access(INGERO_CUDART, R_OK) != 0 || access(INGERO_CUDA_CALLS, X_OK) != 0)                      \
    GTEST_SKIP() << INGERO_CUDART << " (or the test program calling it) is absent; CUDA probes not tested"; \
  if (access("/dev/nvidiactl", F_OK) == 0)                                                           \
    GTEST_SKIP() << "a GPU is present: cuda_calls passes made-up stream handles, meant for machines without one"

using Clock = std::chrono::steady_clock;

void spin_for(std::chrono::milliseconds d) {
  auto end = Clock::now() + d;
  volatile uint64_t x = 0;
  while (Clock::now() < end) x = x + 1;
}

int wait_all_children() {
  int status = 0, worst = 0;
  while (wait(&status) > 0)
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) worst = 1;
  return worst;
}

// A process outside the traced tree that keeps switching until it is killed.
pid_t spawn_outsider() {
  pid_t pid = fork();
  if (pid == 0)
    for (;;) usleep(1000);
  return pid;
}

// Two processes passing a byte back and forth: two context switches per round trip.
int ping_pong(int round_trips) {
  int ping[2], pong[2];
  if (pipe(ping) || pipe(pong)) return 1;
  char c = 0;
  if (fork() == 0) {
    while (read(ping[0], &c, 1) == 1 && c)
      if (write(pong[1], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  for (int i = 0; i < round_trips; ++i) {
    c = 1;
    if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) return 1;
  }
  c = 0;
  if (write(ping[1], &c, 1) != 1) return 1;
  return wait_all_children();
}

std::string op_is(const std::string& name) { return " op = (SELECT op FROM ops WHERE name = '" + name + "') "; }

int64_t call_stat(const TracedRun& run, const std::string& column, const std::string& name) {
  return run.query_int("SELECT coalesce(sum(" + column + "), 0) FROM call_stats WHERE" + run.where() + "AND" +
                       op_is(name));
}

// cuda_calls makes a known number of each call; the exact counts live in call_stats at
// every detail level, the events hold every call except fast launches below `full`.
void expect_cuda_calls_traced(const TracedRun& run, CudaDetail detail) {
  auto count = [&](const std::string& name, const std::string& extra = "") {
    return run.query_int("SELECT count(*) FROM events WHERE" + run.where() + "AND" + op_is(name) + extra);
  };
  EXPECT_EQ(count("cudaMalloc"), kMallocCalls);
  EXPECT_EQ(count("cudaMalloc", "AND bytes = " + std::to_string(kMallocBytes)), kMallocCalls);
  EXPECT_EQ(count("cudaMemcpyAsync"), kMemcpyAsyncCalls);
  EXPECT_EQ(count("cudaMemcpyAsync", "AND bytes = " + std::to_string(kMemcpyBytes) +
                                          " AND arg = " + std::to_string(kMemcpyKindHostToDevice) +
                                          " AND stream = " + std::to_string(kStream)),
            kMemcpyAsyncCalls);
  EXPECT_EQ(count("cudaStreamSynchronize", "AND stream = " + std::to_string(kStream)), kStreamSyncCalls);
  EXPECT_EQ(count("cudaDeviceSynchronize"), kDeviceSyncCalls);
  EXPECT_EQ(count("cudaFree"), kFreeCalls);
  // The runtime's launches are probed only at `full` (below, at the driver layer).
  const bool full = detail == CudaDetail::full;
  EXPECT_EQ(count("cudaLaunchKernel", "AND stream = " + std::to_string(kLaunchStream)), full ? kLaunchCalls : 0);
  EXPECT_EQ(call_stat(run, "calls", "cudaLaunchKernel"), full ? kLaunchCalls : 0);
  // A hot call probed at every level: counted always, timed above `count`, stored one by one
  // only at `full` (it fails at once without a GPU: far below call_stream_min_ns).
  EXPECT_EQ(call_stat(run, "calls", "cudaEventRecord"), kEventRecordCalls);
  EXPECT_EQ(call_stat(run, "returns", "cudaEventRecord"), detail == CudaDetail::count ? 0 : kEventRecordCalls);
  EXPECT_EQ(call_stat(run, "streamed", "cudaEventRecord"), full ? kEventRecordCalls : 0);
  EXPECT_EQ(count("cudaEventRecord", "AND arg = " + std::to_string(kEvent) + " AND stream = " + std::to_string(kStream)),
            full ? kEventRecordCalls : 0);
  EXPECT_EQ(run.query_int("SELECT coalesce(sum(count), 0) FROM call_histograms WHERE" + run.where() + "AND" +
                          op_is("cudaEventRecord")),
            detail == CudaDetail::count ? 0 : kEventRecordCalls);
  EXPECT_EQ(call_stat(run, "calls", "cudaMemcpyAsync"), kMemcpyAsyncCalls);
  EXPECT_EQ(call_stat(run, "bytes", "cudaMemcpyAsync"), kMemcpyAsyncCalls * int64_t(kMemcpyBytes));
  EXPECT_EQ(call_stat(run, "errors", "cudaMemcpyAsync"), kMemcpyAsyncCalls);  // no GPU: every call fails
  std::string cuda = "AND op IN (SELECT op FROM ops WHERE category = 'cuda_runtime')";
  EXPECT_EQ(run.query_int("SELECT count(*) FROM events WHERE" + run.where() + cuda + " AND (ret IS NULL OR ret = 0)"),
            0);
  EXPECT_GT(run.query_int("SELECT min(dur_ns) FROM events WHERE" + run.where() + cuda), 0);
  EXPECT_EQ(run.query_int("SELECT count(*) FROM events WHERE" + run.where() + cuda + " AND pid != " +
                          std::to_string(run.root_pid)),
            0);
  EXPECT_TRUE(run.totals.calls_traced());
  EXPECT_EQ(run.query_int("SELECT cuda_probes LIKE '%cudaMemcpyAsync%' FROM runs WHERE" + run.where()), 1);
}

int exec_cuda_calls(const char* delay_ms) {
  execl(INGERO_CUDA_CALLS, INGERO_CUDA_CALLS, "--delay-ms", delay_ms, static_cast<char*>(nullptr));
  return 127;
}

TEST(TracerBpf, CudaCallsWithExplicitLibrary) {
  REQUIRE_ROOT();
  REQUIRE_CUDART();
  TempDir dir;
  TraceOptions opts;
  opts.library_paths = {INGERO_CUDART};
  for (CudaDetail detail : {CudaDetail::count, CudaDetail::latency, CudaDetail::full}) {
    SCOPED_TRACE(std::string(cuda_detail_name(detail)));
    opts.cuda_detail = detail;
    auto run = run_traced(dir.file(std::string(cuda_detail_name(detail)) + ".db"), opts,
                          [] { return exec_cuda_calls("0"); });
    ASSERT_RUN(run);
    EXPECT_EQ(run->wait_status, 0);
    expect_cuda_calls_traced(*run, detail);
    EXPECT_EQ(run->totals.libraries.size(), 1u);
  }
}

TEST(TracerBpf, CudaCallsWithLibraryDiscoveredFromMaps) {
  REQUIRE_ROOT();
  REQUIRE_CUDART();
  TempDir dir;
  // The delay gives poll() (every 20 ms) time to see the mapped library before the first call.
  auto run = run_traced(dir, TraceOptions{}, [] { return exec_cuda_calls("500"); });
  ASSERT_RUN(run);
  EXPECT_EQ(run->wait_status, 0);
  expect_cuda_calls_traced(*run, CudaDetail::latency);
  ASSERT_EQ(run->totals.libraries.size(), 1u);
  EXPECT_NE(run->totals.libraries[0].path.find("libcudart.so"), std::string::npos);
}

// Attach to a process that is already running: its CUDA library is found in its maps and
// every call it makes from then on is counted exactly; a pid that does not exist is bad input.
TEST(TracerBpf, AttachToARunningProcessCountsItsCallsExactly) {
  REQUIRE_ROOT();
  REQUIRE_CUDART();
  TempDir dir;
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) _exit(exec_cuda_calls("1500"));  // maps libcudart, calls it after 1.5 s
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto db = TraceDb::open(dir.file("attach.db"));
  ASSERT_TRUE(db.ok());
  RunStart start;
  start.label = "attach test";
  start.kind = "attach";
  start.machine_json = "{}";
  auto run_id = db->begin_run(start);
  ASSERT_TRUE(run_id.ok());
  // The target calls at 1.5 s: the tracer must be attached by then, so it skips the probe
  // calibration (up to half a second here, on a loaded machine more; CallSampling tests it).
  TraceOptions opts;
  opts.calibrate = false;
  auto tracer = Tracer::start(opts, dir.file("attach.db"), *run_id);
  ASSERT_RUN(tracer);
  auto missing = (*tracer)->attach(999'999'999);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, kExitBadInput);
  ASSERT_TRUE((*tracer)->attach(target).ok());
  int status = 0;
  while (waitpid(target, &status, WNOHANG) != target) {
    (*tracer)->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto totals = (*tracer)->stop();
  ASSERT_RUN(totals);
  ASSERT_TRUE(db->write_totals(*run_id, *totals).ok());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(totals->calls_traced());
  TracedRun run;
  run.run_id = *run_id;
  auto reader = sql::open(dir.file("attach.db"), sql::Mode::read_only, 5000);
  ASSERT_TRUE(reader.ok());
  run.db = std::move(*reader);
  EXPECT_EQ(call_stat(run, "calls", "cudaMemcpyAsync"), kMemcpyAsyncCalls);
  EXPECT_EQ(call_stat(run, "calls", "cudaStreamSynchronize"), kStreamSyncCalls);
  EXPECT_EQ(run.query_int("SELECT count(*) FROM threads WHERE" + run.where() + "AND tid = " + std::to_string(target) +
                          " AND role = 'main' AND exit_code = 0"),
            1);
}

TEST(TracerBpf, NoCudaLibraryStillTracesHost) {
  REQUIRE_ROOT();
  TempDir dir;
  auto run = run_traced(dir, TraceOptions{}, [] {
    usleep(20'000);
    return 0;
  });
  ASSERT_RUN(run);
  EXPECT_FALSE(run->totals.calls_traced());
  EXPECT_GT(run->query_int("SELECT voluntary_switches FROM thread_stats WHERE" + run->where() +
                           "AND tid = " + std::to_string(run->root_pid)),
            0);
}

TEST(TracerBpf, SleepingChildIsOffCpuForItsSleeps) {
  REQUIRE_ROOT();
  TempDir dir;
  constexpr int kSleeps = 20;
  constexpr int64_t kSleepNs = 10'000'000;
  auto run = run_traced(dir, TraceOptions{}, [] {
    for (int i = 0; i < kSleeps; ++i) usleep(kSleepNs / 1000);
    return 0;
  });
  ASSERT_RUN(run);
  std::string me = "FROM thread_stats WHERE" + run->where() + "AND tid = " + std::to_string(run->root_pid);
  EXPECT_GE(run->query_int("SELECT voluntary_switches " + me), kSleeps);
  // A sleep whose switch in sched_switch did not report (about 2 in 1,000 on Linux 6.18) ends where the
  // slice after it began: within tens of microseconds, hence 1 % off. A sleep lost whole is 5 % of these.
  constexpr int64_t kEstimatedSleepNs = kSleepNs * 99 / 100;
  int64_t offcpu = run->query_int("SELECT offcpu_ns " + me);
  EXPECT_GE(offcpu, kSleeps * kEstimatedSleepNs);
  EXPECT_LT(offcpu, kSleeps * kSleepNs * 2);  // wake-up and run-queue delays on a busy machine
  EXPECT_GE(run->query_int("SELECT offcpu_max_ns " + me), kSleepNs);
  EXPECT_GE(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("offcpu_blocked") +
                           "AND dur_ns >= " + std::to_string(kEstimatedSleepNs)),
            kSleeps);
  EXPECT_GE(run->query_int("SELECT sum(count) FROM histograms WHERE" + run->where() + "AND metric = 'offcpu_us'"),
            kSleeps);
  EXPECT_EQ(run->totals.events_lost(), 0u);
}

TEST(TracerBpf, ThreeSpinnersSharingACpuArePreemptedAndWait) {
  REQUIRE_ROOT();
  TempDir dir;
  auto run = run_traced(dir, TraceOptions{}, [] {
    // All three on one CPU: with two, the balancer may leave one spinner alone on its CPU.
    cpu_set_t allowed, cpus;
    sched_getaffinity(0, sizeof allowed, &allowed);
    CPU_ZERO(&cpus);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) {
        CPU_SET(cpu, &cpus);
        break;
      }
    for (int i = 0; i < 3; ++i)
      if (fork() == 0) {
        sched_setaffinity(0, sizeof cpus, &cpus);
        spin_for(std::chrono::milliseconds(700));
        _exit(0);
      }
    return wait_all_children();
  });
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  std::string spinners = "FROM thread_stats WHERE" + run->where() + "AND pid != " + std::to_string(run->root_pid);
  EXPECT_EQ(run->query_int("SELECT count(*) " + spinners), 3);
  EXPECT_EQ(run->query_int("SELECT count(*) " + spinners + " AND involuntary_switches > 0"), 3);
  EXPECT_EQ(run->query_int("SELECT count(*) " + spinners + " AND runq_count > 0 AND runq_ns > 0"), 3);
  EXPECT_EQ(run->query_int("SELECT count(DISTINCT pid) FROM histograms WHERE" + run->where() +
                           "AND metric = 'runq_us' AND pid != " + std::to_string(run->root_pid)),
            3);
  EXPECT_GT(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("runq_wait")), 0);
}

// What a live view (metrics/) is handed: the totals so far, at most once a second while polled and
// once as the tracer stops; the spinners' preempted time is split from their other off-CPU time.
TEST(TracerBpf, TheLiveViewGetsTotalsAtMostOnceASecondAndAsItStops) {
  REQUIRE_ROOT();
  struct Recorder : LiveSink {
    std::vector<std::pair<std::chrono::steady_clock::time_point, LiveTotals>> published;
    void publish(const LiveTotals& totals) override { published.emplace_back(std::chrono::steady_clock::now(), totals); }
  };
  auto recorder = std::make_shared<Recorder>();
  TraceOptions opts;
  opts.live = recorder;
  TempDir dir;
  auto run = run_traced(dir, opts, [] {
    cpu_set_t allowed, cpus;
    sched_getaffinity(0, sizeof allowed, &allowed);
    CPU_ZERO(&cpus);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) {
        CPU_SET(cpu, &cpus);
        break;
      }
    for (int i = 0; i < 3; ++i)
      if (fork() == 0) {
        sched_setaffinity(0, sizeof cpus, &cpus);
        spin_for(std::chrono::milliseconds(1000));
        _exit(0);
      }
    return wait_all_children();
  });
  ASSERT_RUN(run);
  const auto& published = recorder->published;
  ASSERT_GE(published.size(), 3u) << "about three seconds of spinning: a publish a second, and one at the stop";
  for (size_t i = 1; i + 1 < published.size(); ++i)
    EXPECT_GE(published[i].first - published[i - 1].first, std::chrono::milliseconds(950)) << i;
  const LiveTotals& last = published.back().second;
  uint64_t oncpu = 0, preempted = 0, blocked = 0;
  for (const LiveThreadGroup& g : last.threads) {
    oncpu += g.oncpu_ns;
    preempted += g.offcpu_preempted_ns;
    blocked += g.offcpu_blocked_ns;
  }
  // Three spinners sharing a CPU for a second: a second of CPU time between them (less where other
  // work shares that CPU), and each spent most of the rest preempted for the other two.
  EXPECT_GE(oncpu, 200'000'000u) << oncpu;
  EXPECT_GE(preempted, 1'000'000'000u) << preempted;
  EXPECT_GT(blocked, 0u);  // the parent, waiting for them
  EXPECT_EQ(published.back().second.run_id, published.front().second.run_id);
  const auto sched_loss = std::find_if(last.losses.begin(), last.losses.end(),
                                       [](const LiveLoss& l) { return l.source == "sched"; });
  ASSERT_NE(sched_loss, last.losses.end());
  EXPECT_EQ(sched_loss->dropped, 0u);
}

TEST(TracerBpf, ProcessTreeIsEnrolledAndOutsidersAreNot) {
  REQUIRE_ROOT();
  TempDir dir;
  pid_t outsider = spawn_outsider();
  auto run = run_traced(dir, TraceOptions{}, [] {
    pid_t child = fork();
    if (child == 0) {
      pid_t grandchild = fork();
      if (grandchild == 0) {
        usleep(50'000);
        _exit(4);
      }
      waitpid(grandchild, nullptr, 0);
      _exit(3);
    }
    waitpid(child, nullptr, 0);
    return 0;
  });
  kill(outsider, SIGKILL);
  waitpid(outsider, nullptr, 0);
  ASSERT_RUN(run);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("fork")), 2);
  EXPECT_EQ(run->query_int("SELECT count(DISTINCT pid) FROM threads WHERE" + run->where()), 3);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM threads WHERE" + run->where() + "AND exit_code = 3"), 1);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM threads g JOIN threads c ON g.ppid = c.pid AND c.run_id = g.run_id "
                           "WHERE g.run_id = " + std::to_string(run->run_id) +
                           " AND g.exit_code = 4 AND c.exit_code = 3 AND c.ppid = " + std::to_string(run->root_pid)),
            1);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM threads WHERE" + run->where() + "AND role = 'main' AND tid = " +
                           std::to_string(run->root_pid)),
            1);
  EXPECT_EQ(run->query_int("SELECT count(DISTINCT pid) FROM thread_stats WHERE" + run->where()), 3);
  std::string o = std::to_string(outsider);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM thread_stats WHERE" + run->where() + "AND pid = " + o), 0);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND pid = " + o), 0);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM threads WHERE" + run->where() + "AND pid = " + o), 0);
}

TEST(TracerBpf, SystemWideTracesProcessesOutsideTheTree) {
  REQUIRE_ROOT();
  TempDir dir;
  pid_t outsider = spawn_outsider();
  TraceOptions opts;
  opts.system_wide = true;
  auto run = run_traced(dir, opts, [] {
    usleep(100'000);
    return 0;
  });
  kill(outsider, SIGKILL);
  waitpid(outsider, nullptr, 0);
  ASSERT_RUN(run);
  EXPECT_GT(run->query_int("SELECT voluntary_switches FROM thread_stats WHERE" + run->where() + "AND pid = " +
                           std::to_string(outsider)),
            0);
  EXPECT_EQ(run->setting_int("system_wide"), 1);
}

TEST(TracerBpf, TouchingFreshMemoryCountsPageAllocationsAndFaults) {
  REQUIRE_ROOT();
  TempDir dir;
  constexpr size_t kBytes = 256u << 20;
  constexpr int64_t kPages = kBytes / 4096;
  auto run = run_traced(dir, TraceOptions{}, [] {
    auto* p = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return 1;
    madvise(p, kBytes, MADV_NOHUGEPAGE);  // one fault per 4 KiB page
    for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    return 0;
  });
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  std::string me = "FROM thread_stats WHERE" + run->where() + "AND tid = " + std::to_string(run->root_pid);
  EXPECT_GE(run->query_int("SELECT page_faults " + me), kPages);
  EXPECT_GE(run->query_int("SELECT page_allocs " + me), kPages);
  EXPECT_GE(run->query_int("SELECT page_alloc_bytes " + me), int64_t(kBytes));
  // The burst events add up to the counters: nothing is lost between the two.
  std::string bursts = "FROM events WHERE" + run->where() + "AND tid = " + std::to_string(run->root_pid) + " AND";
  EXPECT_EQ(run->query_int("SELECT sum(arg) " + bursts + op_is("page_faults")),
            run->query_int("SELECT page_faults " + me));
  EXPECT_EQ(run->query_int("SELECT sum(arg) " + bursts + op_is("page_allocs")),
            run->query_int("SELECT page_allocs " + me));
  EXPECT_EQ(run->query_int("SELECT sum(bytes) " + bursts + op_is("page_allocs")),
            run->query_int("SELECT page_alloc_bytes " + me));
  // Bursts are bounded in rate, not in size: at most two per mem_burst_min_ns of the thread's
  // faulting (plus the remainder at exit), each but the last holding at least mem_burst_pages.
  const TraceOptions defaults;
  int64_t burst_count = run->query_int("SELECT count(*) " + bursts + op_is("page_faults"));
  int64_t span_ns = run->query_int("SELECT max(ts_ns + dur_ns) - min(ts_ns) " + bursts + op_is("page_faults"));
  EXPECT_GE(burst_count, 1);
  EXPECT_LE(burst_count, 2 * span_ns / int64_t(defaults.mem_burst_min_ns) + 2);
  EXPECT_LE(run->query_int("SELECT count(*) " + bursts + op_is("page_faults") +
                           " AND arg < " + std::to_string(defaults.mem_burst_pages)),
            1);
  EXPECT_EQ(run->setting_int("mem_burst_min_ns"),
            int64_t(defaults.mem_burst_min_ns));
}

// A forked child that writes to every page it shares with its parent copies each one: its page_faults
// bursts carry those copies' bytes, and the parent's first touch of the same pages (fresh, not shared)
// carries none.
TEST(TracerBpf, AForkedChildWritingSharedPagesCountsItsCopyOnWriteBytes) {
  REQUIRE_ROOT();
  TempDir dir;
  constexpr size_t kBytes = 32u << 20;
  auto run = run_traced(dir, TraceOptions{}, [] {
    auto* p = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return 1;
    madvise(p, kBytes, MADV_NOHUGEPAGE);  // one copy per 4 KiB page
    for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    pid_t child = fork();
    if (child == 0) {
      for (size_t i = 0; i < kBytes; i += 4096) p[i] = 2;
      _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  });
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  const std::string root = std::to_string(run->root_pid);
  const int64_t child = run->query_int("SELECT pid FROM threads WHERE" + run->where() + "AND pid != " + root + " LIMIT 1");
  auto cow_bytes = [&](const std::string& pid) {
    return run->query_int("SELECT coalesce(sum(bytes), 0) FROM events WHERE" + run->where() + "AND pid = " + pid +
                          " AND" + op_is("page_faults"));
  };
  // The child copied every page; beyond them only its stack and libc's few written pages.
  EXPECT_GE(cow_bytes(std::to_string(child)), int64_t(kBytes));
  EXPECT_LE(cow_bytes(std::to_string(child)), int64_t(kBytes) + (4 << 20));
  EXPECT_LT(cow_bytes(root), int64_t(kBytes) / 8);
  // Every burst carries its bytes, zero included: a reader can tell "none copied" from an older trace.
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND bytes IS NULL AND" +
                           op_is("page_faults")),
            0);
}

// The OOM killer's kill, from its tracepoint and, as kernels before 6.8 give it, from the SIGKILL the
// kernel itself sends: a traced process that outgrows its memory cgroup is killed, and the run says so.
class OomKill : public ::testing::TestWithParam<bool> {};

TEST_P(OomKill, AProcessOverItsCgroupsLimitIsRecordedAsKilled) {
  REQUIRE_ROOT();
  const bool tracepoint = GetParam();
  ingero::testing::MemoryCgroup cgroup(fmt::format("ingero-oom-{}-{}", getpid(), tracepoint), 64ll << 20);
  if (cgroup.path().empty()) GTEST_SKIP() << "no memory cgroup can be made here (cgroup v2 memory or v1 memory)";
  TempDir dir;
  TraceOptions opts;
  opts.oom_victim_tracepoint = tracepoint;
  auto run = run_traced(dir, opts, [&cgroup] {
    if (!cgroup.enter()) return 3;
    constexpr size_t kBytes = 256u << 20;
    auto* p = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return 1;
    for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    return 0;  // not reached: killed on the way
  });
  ASSERT_RUN(run);
  ASSERT_TRUE(WIFSIGNALED(run->wait_status) && WTERMSIG(run->wait_status) == SIGKILL) << run->wait_status;
  EXPECT_GE(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND pid = " +
                           std::to_string(run->root_pid) + " AND" + op_is("oom_kill")),
            1);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM run_settings WHERE" + run->where() +
                           "AND key = 'oom_kills_from' AND value = '" +
                           std::string(tracepoint ? "mark_victim" : "kernel_sigkill") + "'"),
            1);
}

INSTANTIATE_TEST_SUITE_P(Sources, OomKill, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Tracepoint" : "KernelSigkill"; });

// A thread still running when tracing stops has its page counters from the map that holds them
// beside its bursts (mem.bpf.c), not only threads that exited.
TEST(TracerBpf, AThreadAliveAtStopKeepsItsPageCounters) {
  REQUIRE_ROOT();
  TempDir dir;
  auto db = TraceDb::open(dir.file("t.db"));
  ASSERT_TRUE(db.ok());
  TraceOptions opts;
  opts.calibrate = false;
  auto tracer = Tracer::start(opts, dir.file("t.db"), 1);
  ASSERT_RUN(tracer);
  ASSERT_TRUE((*tracer)->enroll(getpid()).ok());
  constexpr size_t kBytes = 16u << 20;
  auto* p = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, kBytes, MADV_NOHUGEPAGE);
  for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
  auto totals = (*tracer)->stop();
  munmap(p, kBytes);
  ASSERT_RUN(totals);
  const auto me = static_cast<uint32_t>(gettid());
  const ib_thread_stats* mine = nullptr;
  for (const auto& [tid, s] : totals->thread_stats)
    if (tid == me) mine = &s;
  ASSERT_NE(mine, nullptr);
  EXPECT_GE(mine->page_faults, kBytes / 4096);
  EXPECT_GE(mine->page_allocs, kBytes / 4096);
  EXPECT_EQ(mine->pid, static_cast<uint32_t>(getpid()));
}

// The pages of fd's first `bytes` that sit in the page cache.
size_t resident_pages(int fd, size_t bytes) {
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return bytes / 4096;
  std::vector<unsigned char> resident(bytes / 4096);
  size_t in_cache = 0;
  if (mincore(map, bytes, resident.data()) == 0)
    for (unsigned char r : resident) in_cache += r & 1;
  else
    in_cache = resident.size();
  munmap(map, bytes);
  return in_cache;
}

// A file written and flushed, then evicted from the page cache: reading it must go to the disk.
// Returns its size, or 0 (with `why`) when this file system cannot show that (tmpfs, no eviction).
// Every page must have left the cache, so that a reader's block I/O is the whole file.
size_t write_evicted_file(const std::string& path, size_t bytes, std::string* why) {
  struct statfs fs {};
  if (statfs(path.substr(0, path.rfind('/')).c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    *why = "the test folder is on tmpfs: no block device to read from";
    return 0;
  }
  UniqueFd fd(open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600));
  std::vector<char> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>(i * 131 + 7);
  for (size_t done = 0; done < bytes; done += chunk.size())
    if (write(fd.get(), chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) return 0;
  fdatasync(fd.get());
  // A page still in a CPU's batch of new pages is not on the LRU yet and survives one call.
  size_t in_cache = bytes / 4096;
  for (int attempt = 0; attempt < 5 && in_cache > 0; ++attempt) {
    posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    in_cache = resident_pages(fd.get(), bytes);
  }
  if (in_cache > 0) {
    *why = fmt::format("the kernel kept {} of the file's pages after POSIX_FADV_DONTNEED", in_cache);
    return 0;
  }
  return bytes;
}

// How a test reads its evicted file: as it comes, or asking the kernel for all of it first.
enum class ReadAhead { as_read, whole_file_first };

// A 64 MiB file written and evicted from the page cache, which the traced child reads whole.
class ColdFileRead : public ::testing::Test {
 protected:
  static constexpr size_t kBytes = 64u << 20;

  void SetUp() override {
    REQUIRE_ROOT();
    std::string why;
    if (write_evicted_file(path_, kBytes, &why) == 0) GTEST_SKIP() << why;
  }

  Result<TracedRun> read(ReadAhead ahead) {
    return run_traced(dir_, TraceOptions{}, [&] {
      UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
      if (ahead == ReadAhead::whole_file_first) posix_fadvise(fd.get(), 0, 0, POSIX_FADV_WILLNEED);
      std::vector<char> buf(256 << 10);
      size_t total = 0;
      for (ssize_t n; (n = ::read(fd.get(), buf.data(), buf.size())) > 0;) total += static_cast<size_t>(n);
      return total == kBytes ? 0 : 1;
    });
  }

  // The reader's thread_stats row.
  static std::string reader(const TracedRun& run) {
    return "FROM thread_stats WHERE" + run.where() + "AND tid = " + std::to_string(run.root_pid);
  }

  // The reader's block I/O is every byte of the file, and no more than its file system's own
  // blocks (extents) beside it.
  static void expect_every_byte_read(const TracedRun& run) {
    const int64_t io_bytes = run.query_int("SELECT io_bytes " + reader(run));
    EXPECT_GE(io_bytes, static_cast<int64_t>(kBytes));
    EXPECT_LE(io_bytes, static_cast<int64_t>(kBytes + (1u << 20)));
  }

  TempDir dir_;
  std::string path_ = dir_.file("cold.bin");
};

TEST_F(ColdFileRead, ReadingAnEvictedFileWaitsForIoAndFillsThePageCache) {
  auto run = read(ReadAhead::as_read);
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  const std::string me = reader(*run);
  constexpr int64_t kPages = kBytes / 4096;
  // Every page came from the disk into the page cache, read by this thread.
  EXPECT_GE(run->query_int("SELECT cache_pages_added " + me), kPages * 9 / 10);
  EXPECT_LE(run->query_int("SELECT cache_pages_added " + me), kPages * 2);
  expect_every_byte_read(*run);
  // It slept waiting for those reads, and the waits long enough to store are I/O waits.
  const int64_t iowait = run->query_int("SELECT iowait_ns " + me);
  EXPECT_GT(run->query_int("SELECT iowait_count " + me), 0);
  EXPECT_GT(iowait, 0);
  EXPECT_LE(iowait, run->query_int("SELECT offcpu_ns " + me));
  const std::string io_waits = "FROM events WHERE" + run->where() + "AND tid = " + std::to_string(run->root_pid) +
                               " AND" + op_is("offcpu_io");
  EXPECT_GE(run->query_int("SELECT count(*) " + io_waits), 1);
  // Reads from a disk sleep tens of µs: the stored threshold for them (10 µs) keeps most of that time.
  EXPECT_LE(run->query_int("SELECT coalesce(sum(dur_ns), 0) " + io_waits), iowait);
  EXPECT_GE(run->query_int("SELECT coalesce(sum(dur_ns), 0) " + io_waits), iowait / 2);
  EXPECT_EQ(run->setting_int("iowait_min_ns"),
            10'000);
  EXPECT_EQ(run->totals.events_lost(), 0u);
}

// Asked for the whole file at once, the disk's queue fills and kblockd workers issue the rest as
// earlier reads complete: those requests are still the reader's, from the thread that inserted
// them (before, 3-25 % of the bytes went uncounted, more on a busy machine).
TEST_F(ColdFileRead, ReadaheadIssuedByKernelWorkersIsCountedForTheReader) {
  auto run = read(ReadAhead::whole_file_first);
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  expect_every_byte_read(*run);
  // Every request is a block_io event of the reader, its bytes summing to the counter's.
  const std::string blocks = "FROM events WHERE" + run->where() + "AND" + op_is("block_io");
  EXPECT_EQ(run->query_int("SELECT coalesce(sum(bytes), 0) " + blocks + " AND tid = " + std::to_string(run->root_pid)),
            run->query_int("SELECT io_bytes " + reader(*run)));
  EXPECT_EQ(run->totals.events_lost(), 0u);
}

TEST(TracerBpf, SleepingIsNotAnIoWait) {
  REQUIRE_ROOT();
  TempDir dir;
  auto run = run_traced(dir, TraceOptions{}, [] {
    for (int i = 0; i < 10; ++i) usleep(5000);
    return 0;
  });
  ASSERT_RUN(run);
  const std::string me = "FROM thread_stats WHERE" + run->where() + "AND tid = " + std::to_string(run->root_pid);
  EXPECT_GE(run->query_int("SELECT offcpu_ns " + me), 50'000'000);
  EXPECT_EQ(run->query_int("SELECT iowait_ns " + me), 0);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("offcpu_io") +
                           "AND tid = " + std::to_string(run->root_pid)),
            0);
}

// Hundreds of processes that start and exit while the tracer reads their /proc files
// (poll scans every enrolled process's maps): none of it may abort the tracer.
TEST(TracerBpf, ManyShortLivedProcessesAreTracedWithoutFailing) {
  REQUIRE_ROOT();
  TempDir dir;
  constexpr int kProcesses = 300;
  auto run = run_traced(dir, TraceOptions{}, [] {
    for (int i = 0; i < kProcesses; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        execl("/bin/true", "true", static_cast<char*>(nullptr));
        _exit(127);
      }
      if (pid < 0 || waitpid(pid, nullptr, 0) != pid) return 1;
    }
    return 0;
  });
  ASSERT_RUN(run);
  EXPECT_EQ(run->wait_status, 0);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("fork")), kProcesses);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM events WHERE" + run->where() + "AND" + op_is("exec")), kProcesses);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM threads WHERE" + run->where() + "AND exit_code = 0 AND pid != " +
                           std::to_string(run->root_pid)),
            kProcesses);
  EXPECT_TRUE(run->totals.problems.empty());
}

TEST(TracerBpf, TinyRingBufferReportsEveryDrop) {
  REQUIRE_ROOT();
  TempDir dir;
  TraceOptions opts;
  opts.ringbuf_bytes = 4096;
  opts.offcpu_min_ns = 0;  // every switch becomes an event: a storm
  opts.runq_min_ns = 0;
  // Three ping-pong pairs on two CPUs: more switches than the reader can take from a 4 KiB ring.
  auto run = run_traced(dir, opts, [] {
    for (int pair = 0; pair < 3; ++pair)
      if (fork() == 0) _exit(ping_pong(20'000));
    return wait_all_children();
  });
  ASSERT_RUN(run);
  ASSERT_EQ(run->wait_status, 0);
  EXPECT_GT(run->totals.events_lost(), 0u);
  std::string losses = "FROM losses WHERE" + run->where();
  EXPECT_GT(run->query_int("SELECT dropped " + losses + "AND source = 'sched'"), 0);
  for (const char* ring : {"cuda", "sched", "proc", "queue", "writer"})
    EXPECT_EQ(run->query_int(std::string("SELECT count(*) ") + losses + "AND source = '" + ring + "'"), 1) << ring;
  // Nothing vanishes: what each ring was offered is either in the DB or counted as dropped.
  std::string sched_rows = "(SELECT count(*) FROM events WHERE" + run->where() +
                           "AND op IN (SELECT op FROM ops WHERE category = 'sched'))";
  EXPECT_EQ(run->query_int("SELECT offered - dropped - " + sched_rows + " " + losses + "AND source = 'sched'"), 0);
  std::string proc_rows = "(SELECT count(*) FROM events WHERE" + run->where() +
                          "AND op IN (SELECT op FROM ops WHERE category IN ('process', 'io', 'mm')))";
  EXPECT_EQ(run->query_int("SELECT offered - dropped - " + proc_rows + " " + losses + "AND source = 'proc'"), 0);
  uint64_t offered = 0, dropped = 0;
  for (const TraceLoss& loss : run->totals.losses)
    if (loss.source == "cuda" || loss.source == "sched" || loss.source == "proc") {
      offered += loss.offered.value_or(0);
      dropped += loss.dropped;
    }
  EXPECT_EQ(offered, run->totals.events_written + dropped);
}

void expect_no_bpf_left(int own_fds_before, int system_before) {
  EXPECT_EQ(count_own_bpf_fds(), own_fds_before);
  // Programs and links are freed after an RCU grace period. The count may fall below the one
  // taken before: an earlier test's objects may still have been on their way out then.
  int system_after = count_system_bpf_objects();
  for (int i = 0; i < 100 && system_after > system_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    system_after = count_system_bpf_objects();
  }
  EXPECT_LE(system_after, system_before);
}

// The kernel times the scheduler, memory, process and block programs while the tracer holds its
// statistics on: a child passing a byte back and forth makes the switch program run at least
// twice a round trip, for a time the run stores; switched off, the run says so and holds nothing.
int pass_bytes(int round_trips) {
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return 1;
  const pid_t peer = fork();
  char byte = 0;
  if (peer == 0) {
    for (int i = 0; i < round_trips; ++i)
      if (read(there[0], &byte, 1) != 1 || write(back[1], &byte, 1) != 1) _exit(1);
    _exit(0);
  }
  for (int i = 0; i < round_trips; ++i)
    if (write(there[1], &byte, 1) != 1 || read(back[0], &byte, 1) != 1) return 1;
  return wait_all_children();
}

TEST(TracerBpf, TheKernelProgramsAreTimedWhileTracing) {
  REQUIRE_ROOT();
  constexpr int kRoundTrips = 2000;
  const std::string programs = "FROM run_settings WHERE key = 'bpf_program_time' AND run_id = ";
  {
    TempDir dir;
    auto run = run_traced(dir, TraceOptions{}, [] { return pass_bytes(kRoundTrips); });
    ASSERT_RUN(run);
    EXPECT_EQ(run->wait_status, 0);
    const std::string row = programs + std::to_string(run->run_id);
    EXPECT_GE(run->query_int("SELECT json_extract(value, '$.on_sched_switch.runs') " + row), 2 * kRoundTrips);
    EXPECT_GT(run->query_int("SELECT json_extract(value, '$.on_sched_switch.ns') " + row), 0);
    EXPECT_GE(run->query_int("SELECT json_extract(value, '$.on_fork.runs') " + row), 1);
    EXPECT_EQ(run->query_int("SELECT count(*) FROM run_settings WHERE key = 'bpf_program_time_unknown' AND run_id = " +
                             std::to_string(run->run_id)),
              0);
  }
  TempDir dir;
  TraceOptions off;
  off.program_time = false;
  auto run = run_traced(dir, off, [] { return pass_bytes(10); });
  ASSERT_RUN(run);
  EXPECT_EQ(run->query_int("SELECT count(*) " + programs + std::to_string(run->run_id)), 0);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM run_settings WHERE key = 'bpf_program_time_unknown' AND value "
                           "LIKE 'switched off%' AND run_id = " + std::to_string(run->run_id)),
            1);
}

TEST(TracerBpf, NothingLeftAfterStopOrChildCrash) {
  REQUIRE_ROOT();
  int own = count_own_bpf_fds(), system = count_system_bpf_objects();
  TempDir dir;
  TraceOptions opts;
  if (access(INGERO_CUDART, R_OK) == 0) opts.library_paths = {INGERO_CUDART};
  auto run = run_traced(dir, opts, [] {
    raise(SIGSEGV);
    return 0;
  });
  ASSERT_RUN(run);
  EXPECT_TRUE(WIFSIGNALED(run->wait_status));
  EXPECT_EQ(run->query_int("SELECT exit_code FROM threads WHERE" + run->where() + "AND tid = " +
                           std::to_string(run->root_pid)),
            128 + SIGSEGV);
  expect_no_bpf_left(own, system);
}

TEST(TracerBpf, NothingLeftAfterDestroyWithoutStop) {
  REQUIRE_ROOT();
  int own = count_own_bpf_fds(), system = count_system_bpf_objects();
  {
    TempDir dir;
    auto db = TraceDb::open(dir.file("t.db"));
    ASSERT_TRUE(db.ok());
    TraceOptions opts;
    if (access(INGERO_CUDART, R_OK) == 0) opts.library_paths = {INGERO_CUDART};
    auto tracer = Tracer::start(opts, dir.file("t.db"), 1);
    ASSERT_RUN(tracer);
    EXPECT_GT(count_own_bpf_fds(), own);
    ASSERT_TRUE((*tracer)->enroll(getpid()).ok());
    (*tracer)->poll();
    usleep(10'000);
  }
  expect_no_bpf_left(own, system);
}

TEST(TracerBpf, FailedStartLeavesNothingAttached) {
  REQUIRE_ROOT();
  int own = count_own_bpf_fds(), system = count_system_bpf_objects();
  TempDir dir;
  TraceOptions opts;
  opts.library_paths = {"/nonexistent/libcudart.so.13"};  // fails after the programs are attached
  auto tracer = Tracer::start(opts, dir.file("t.db"), 1);
  ASSERT_FALSE(tracer.ok());
  EXPECT_EQ(tracer.error().exit_code, kExitBadInput);
  EXPECT_NE(tracer.error().message.find("/nonexistent/libcudart.so.13"), std::string::npos);
  expect_no_bpf_left(own, system);
}

TEST(TracerBpf, WithoutPrivilegesStartFailsNamingWhatIsMissing) {
  REQUIRE_ROOT();
  int fds = count_own_bpf_fds();
  pid_t child = fork();
  if (child == 0) {
    // An unprivileged user: no CAP_BPF, no CAP_PERFMON.
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(10);
    auto tracer = Tracer::start(TraceOptions{}, "/tmp/ingero-unprivileged-never-created.db", 1);
    if (tracer.ok()) _exit(11);
    bool names_it = tracer.error().message.find("root") != std::string::npos &&
                    tracer.error().hint.find("--no-trace") != std::string::npos;
    _exit(names_it ? (count_own_bpf_fds() == fds ? 0 : 13) : 12);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ingero::tracer::testing
