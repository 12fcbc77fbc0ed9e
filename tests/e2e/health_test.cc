// SPDX-License-Identifier: Apache-2.0
// Worker health on real torch DataLoader jobs (tests/e2e/jobs/health_job.py), each failing the way users'
// jobs fail, in seconds: copy-on-write growth, an OOM kill in a memory-limited cgroup, a small /dev/shm
// in a private mount namespace, a low ulimit -n, a deadlock after fork; and a healthy run that is
// named nothing. Each is traced launched, and explain must name what happened and to which process.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "tests/common/memory_cgroup.h"

namespace {

namespace fs = std::filesystem;
using ingero::testing::capture;
using ingero::testing::MemoryCgroup;
using ingero::testing::Output;

const std::string kBinary = INGERO_BENCH_BINARY;
const std::string kJob = INGERO_HEALTH_JOB;
const std::string kPython = "/usr/bin/python3";

class Health : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the eBPF tracer needs root (run the tests with sudo)";
    if (capture(kPython + " -c 'import torch'").exit_code != 0)
      GTEST_SKIP() << kPython << " cannot import torch (install python3-torch)";
    dir_ = fs::temp_directory_path() / ("ingero-health-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string db() const { return (dir_ / "trace.db").string(); }
  std::string job(const std::string& which) const { return kPython + " " + kJob + " " + which; }

  // Traces `command` (a shell command line), then explains the run: its JSON, and its text in *text.
  nlohmann::json trace_and_explain(const std::string& command, const std::string& flags = "",
                                   std::string* text = nullptr) {
    Output run = capture(kBinary + " trace --db " + db() + " " + flags + " -- sh -c '" + command + "'");
    traced_ = run.text;
    Output explained = capture(kBinary + " explain --db " + db() + " 2>&1");
    EXPECT_EQ(explained.exit_code, 0) << explained.text;
    if (text) *text = explained.text;
    std::cout << health_lines(explained.text);
    Output out = capture(kBinary + " explain --json --db " + db() + " 2>/dev/null");
    EXPECT_EQ(out.exit_code, 0) << out.text;
    return nlohmann::json::parse(out.text, nullptr, false);
  }

  // The explain text's worker-health section, for the test's log.
  static std::string health_lines(const std::string& text) {
    const size_t at = text.find("Worker health");
    if (at == std::string::npos) return "(no worker health section)\n";
    const size_t end = text.find("\nNotes", at);
    return text.substr(at, end == std::string::npos ? std::string::npos : end - at) + "\n";
  }

  static const nlohmann::json* finding(const nlohmann::json& report, const std::string& kind) {
    if (!report.contains("worker_health")) return nullptr;
    for (const auto& f : report["worker_health"])
      if (f["kind"] == kind) return &f;
    return nullptr;
  }

  // The line of health_job.py that holds `text` (1-based).
  static int line_in_job(const std::string& text) {
    std::ifstream in(kJob);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find(text) != std::string::npos) return n;
    return -1;
  }
  static std::string fmt_line(int line) { return "health_job.py:" + std::to_string(line) + " in Locked.__getitem__"; }

  // The processes' memory samples as recorded, for a failure's message: what the finding was judged on.
  std::string memory_samples() const {
    return capture("sqlite3 -readonly " + db() +
                   " 'SELECT pid, ts_ns / 1000000, rss_bytes >> 20, private_dirty_bytes >> 20 FROM process_samples "
                   "ORDER BY pid, ts_ns' 2>&1")
        .text;
  }

  fs::path dir_;
  std::string traced_;
};

TEST_F(Health, TwoWorkersReadingPythonTuplesGrowByCopyOnWrite) {
  const auto report = trace_and_explain(job("cow"));
  const auto* f = finding(report, "memory_growth");
  ASSERT_NE(f, nullptr) << report.dump(2) << traced_ << "pid|ms|rss MB|private dirty MB\n" << memory_samples();
  EXPECT_EQ((*f)["role"], "worker");
  EXPECT_TRUE((*f)["copy_on_write"].get<bool>());
  // Measured by the tracer's count of copy-on-write faults, whole, however few rollups the sampler read.
  EXPECT_EQ((*f)["growth_measured_by"], "copy_on_write_faults");
  EXPECT_GT((*f)["growth_bytes"].get<int64_t>(), 64ll << 20);
  EXPECT_FALSE((*f)["growth_bytes_per_batch"].is_null());
  EXPECT_NE((*f)["summary"].get<std::string>().find("copy-on-write"), std::string::npos);
  EXPECT_NE((*f)["change"].get<std::string>().find("numpy"), std::string::npos);
  EXPECT_NE((*f)["evidence"].dump().find("the machine has"), std::string::npos);
}

TEST_F(Health, AWorkerKilledByTheOomKillerIsNamedWithItsMemoryAndTheKnobs) {
  MemoryCgroup cgroup("ingero-health-oom-" + std::to_string(getpid()), 700ll << 20);
  if (cgroup.path().empty()) GTEST_SKIP() << "no memory cgroup can be made here (cgroup v2 memory or v1 memory)";
  std::string text;
  const auto report =
      trace_and_explain("echo $$ > " + cgroup.path() + "/cgroup.procs && exec " + job("oom"), "", &text);
  const auto* f = finding(report, "oom_kill");
  ASSERT_NE(f, nullptr) << report.dump(2) << traced_;
  EXPECT_EQ((*f)["role"], "worker");
  EXPECT_EQ((*f)["severity"], "HIGH");
  EXPECT_FALSE((*f)["rss_peak_bytes"].is_null());
  EXPECT_NE((*f)["evidence"].dump().find("num_workers 2 × prefetch_factor 2"), std::string::npos);
  EXPECT_EQ(report["run"]["status"], "failed");  // the job died, and is explained
  EXPECT_NE(text.find("OOM kill"), std::string::npos);
}

TEST_F(Health, ASmallDevShmInTheJobsOwnNamespaceEndsInSigbusAndIsNamed) {
  if (capture("command -v unshare").exit_code != 0) GTEST_SKIP() << "no unshare here (util-linux)";
  const auto report = trace_and_explain("exec unshare -m --propagation private sh -c \"mount -t tmpfs -o size=16m "
                                        "tmpfs /dev/shm && exec " +
                                        job("shm") + "\"");
  const auto* f = finding(report, "shm_exhausted");
  ASSERT_NE(f, nullptr) << report.dump(2) << traced_;
  EXPECT_TRUE((*f)["summary"].get<std::string>().find("SIGBUS") != std::string::npos) << f->dump(2);
  EXPECT_EQ((*f)["fatal_signal"], 7);
  EXPECT_EQ((*f)["shm_size_bytes"], 16 << 20);  // the job's /dev/shm, not this machine's
  // The batches the loop received (8 MB each) × num_workers 2 × prefetch_factor 2, counted by the observer.
  EXPECT_EQ((*f)["batch_bytes"], 8 << 20) << f->dump(2);
  EXPECT_EQ((*f)["in_flight_bytes"], 32 << 20);
  EXPECT_NE((*f)["summary"].get<std::string>().find("the batches in flight need 33.6 MB"), std::string::npos)
      << (*f)["summary"];
  EXPECT_NE((*f)["change"].get<std::string>().find("--shm-size"), std::string::npos);
}

TEST_F(Health, DescriptorsNearALowUlimitNameTheSharingStrategy) {
  const auto report = trace_and_explain("ulimit -n 128 && exec " + job("fds"));
  const auto* f = finding(report, "fd_limit");
  ASSERT_NE(f, nullptr) << report.dump(2) << traced_;
  EXPECT_EQ((*f)["role"], "main");
  EXPECT_EQ((*f)["fd_limit"], 128);
  EXPECT_GE((*f)["fds_peak"].get<int64_t>(), 103);
  EXPECT_NE((*f)["evidence"].dump().find("file_descriptor"), std::string::npos);
  EXPECT_NE((*f)["change"].get<std::string>().find("file_system"), std::string::npos);
}

TEST_F(Health, ADeadlockAfterForkIsAHangShowingWhereEachWaits) {
  const auto report = trace_and_explain(job("deadlock"), "--hang-after-s 2");
  const auto* f = finding(report, "hang");
  ASSERT_NE(f, nullptr) << report.dump(2) << traced_;
  EXPECT_GE((*f)["hang_ns"].get<int64_t>(), 2'000'000'000);
  bool worker_on_futex = false, worker_at_the_lock = false;
  const int lock_line = line_in_job("with held:  # in a forked worker");
  for (const auto& w : (*f)["waiters"]) {
    worker_on_futex |= w["role"] == "worker" && w["wchan"].get<std::string>().find("futex") != std::string::npos;
    // Read from the worker when the hang was seen: the dataset's line that takes the lock.
    worker_at_the_lock |= w["role"] == "worker" && w["python_line"] == lock_line &&
                          w["python_function"] == "Locked.__getitem__";
  }
  EXPECT_TRUE(worker_on_futex) << f->dump(2);
  EXPECT_TRUE(worker_at_the_lock) << f->dump(2);
  EXPECT_NE((*f)["evidence"].dump().find(fmt_line(lock_line)), std::string::npos) << f->dump(2);
}

TEST_F(Health, AHealthyRunIsNamedNothing) {
  const auto report = trace_and_explain(job("healthy"));
  ASSERT_TRUE(report.contains("worker_health")) << report.dump(2);
  EXPECT_TRUE(report["worker_health"].empty()) << report["worker_health"].dump(2);
}

}  // namespace
