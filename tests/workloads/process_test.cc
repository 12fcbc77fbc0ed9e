// SPDX-License-Identifier: Apache-2.0
// The real binary under faults: Ctrl-C / SIGTERM, a killed worker, bad input, and the
// python modes. Each asserts no worker is left running and no shared memory is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/workloads/process_helpers.h"

namespace ingero::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* kBinary = INGERO_BENCH_BINARY;
const char* kWorkloadBinary = INGERO_WORKLOAD_BINARY;

pid_t spawn(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits up to `timeout` for pid; -1 when it is still running (then it is killed).
int wait_exit_code(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

int run(const std::vector<std::string>& args, std::chrono::seconds timeout = 120s) {
  return wait_exit_code(spawn(args), timeout);
}

// Workers of any process: the loader names them ib-worker-N.
std::vector<pid_t> wait_for_workers(size_t n, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto w = processes_named("ib-worker-");
    if (w.size() >= n) return w;
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

std::set<std::string> shm_entries() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) out.insert(e.path().string());
  return out;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / (std::to_string(getpid()) + "-" + name)).string();
}

// A loader configuration that runs for minutes unless stopped.
std::string long_loader_config() {
  nlohmann::json c = {{"mode", "loader"},        {"device", "cpu"},        {"samples", 400000},
                      {"features", 16},          {"hidden", 16},           {"classes", 4},
                      {"batch_size", 20000},     {"drop_last", false},     {"num_workers", 2},
                      {"prefetch_factor", 2},    {"pin_memory", false},    {"persistent_workers", true},
                      {"shuffle", true},         {"epochs", 1000},         {"warmup_epochs", 0},
                      {"repeat", 1},             {"train", false},         {"cpus", 0},
                      {"seed", 0}};
  return c.dump();
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

class StopSignal : public ::testing::TestWithParam<int> {};

TEST_P(StopSignal, WorkloadReapsWorkersAndWritesAnInterruptedRecord) {
  ASSERT_TRUE(processes_named("ib-worker-").empty()) << "workers left over from an earlier test";
  const auto shm_before = shm_entries();
  const std::string result = temp_path("stop.json");
  pid_t pid = spawn({kWorkloadBinary, "--config", long_loader_config(), "--result", result});
  ASSERT_EQ(wait_for_workers(2, 60s).size(), 2u);
  ASSERT_EQ(kill(pid, GetParam()), 0);
  EXPECT_EQ(wait_exit_code(pid, 20s), 128 + GetParam());
  EXPECT_TRUE(processes_named("ib-worker-").empty());
  EXPECT_EQ(shm_entries(), shm_before);
  auto record = read_json(result);
  ASSERT_FALSE(record.is_discarded()) << "no result record written";
  EXPECT_EQ(record["status"], "interrupted");
  fs::remove(result);
}

INSTANTIATE_TEST_SUITE_P(Signals, StopSignal, ::testing::Values(SIGINT, SIGTERM));

TEST(Workload, AKilledWorkerFailsTheRunWithItsSignal) {
  const std::string result = temp_path("killed.json");
  pid_t pid = spawn({kWorkloadBinary, "--config", long_loader_config(), "--result", result});
  auto workers = wait_for_workers(2, 60s);
  ASSERT_EQ(workers.size(), 2u);
  kill(workers[0], SIGKILL);
  EXPECT_EQ(wait_exit_code(pid, 30s), 1);
  EXPECT_TRUE(processes_named("ib-worker-").empty());
  auto record = read_json(result);
  ASSERT_FALSE(record.is_discarded());
  const std::string error = record.value("error", "");
  EXPECT_NE(error.find("loader worker"), std::string::npos) << error;
  EXPECT_NE(error.find("signal 9"), std::string::npos) << error;
  fs::remove(result);
}

// Interrupting the harness: the workload stops, the run is marked interrupted, exit 130.
TEST(Harness, CtrlCMarksTheRunInterrupted) {
  const std::string db = temp_path("interrupt.db");
  const std::string out = temp_path("interrupt-out");
  pid_t pid = spawn({kBinary, "--workload", "dataloader", "--no-trace", "--device", "cpu", "--mode", "loader",
                     "--num-workers", "2", "--samples", "400000", "--batch-size", "20000", "--features", "16",
                     "--epochs", "1000", "--db", db, "--out", out});
  ASSERT_EQ(wait_for_workers(2, 60s).size(), 2u);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid, 30s), 130);
  EXPECT_TRUE(processes_named("ib-worker-").empty());
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT status FROM runs ORDER BY run_id DESC LIMIT 1", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "interrupted");
  sqlite3_finalize(st);
  sqlite3_close(h);
  fs::remove_all(out);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

TEST(Harness, BadInputExitsTwo) {
  const std::string db = temp_path("bad.db");
  const std::vector<std::string> base = {kBinary, "--workload", "dataloader", "--no-trace", "--db", db};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_EQ(run(with({"--mode", "nope"})), 2);
  EXPECT_EQ(run(with({"--batch-size", "0"})), 2);
  EXPECT_EQ(run(with({"--mode", "loader", "--num-workers", "-1"})), 2);
  EXPECT_EQ(run(with({"--mode", "loader", "--prefetch-factor", "4"})), 2);
  EXPECT_EQ(run(with({"--samples", "10", "--batch-size", "100"})), 2);
  EXPECT_EQ(run({kBinary, "--workload", "images"}), 2);
  EXPECT_EQ(run({kBinary, "--no-such-flag"}), 2);
  EXPECT_EQ(run({kBinary}), 2);
  EXPECT_EQ(run({kBinary, "explain", "--db", temp_path("missing.db")}), 2);
  EXPECT_FALSE(fs::exists(db)) << "bad input must not leave a half-written trace DB";
}

std::string machine_json_of_last_run(const std::string& db) {
  sqlite3* h = nullptr;
  std::string out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT machine_json FROM runs ORDER BY run_id DESC LIMIT 1", -1, &st, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return out;
}

// Workloads run with fixed glibc heap thresholds (a user's own GLIBC_TUNABLES wins), and the run records which.
TEST(Harness, WorkloadsRunWithARecordedAllocatorPolicy) {
  const std::string db = temp_path("malloc.db");
  const std::string out = temp_path("malloc-out");
  const std::vector<std::string> args = {kBinary,    "--workload", "dataloader", "--no-trace", "--device", "cpu",
                                         "--mode",   "direct",     "--samples",  "1024",       "--batch-size",
                                         "256",      "--features", "8",          "--epochs",   "1",
                                         "--db",     db,           "--out",      out};
  ASSERT_EQ(run(args), 0);
  auto machine = nlohmann::json::parse(machine_json_of_last_run(db), nullptr, false);
  ASSERT_FALSE(machine.is_discarded());
  EXPECT_EQ(machine.value("glibc_tunables", ""),
            "glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=268435456");
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  const int code = run(args);
  unsetenv("GLIBC_TUNABLES");
  ASSERT_EQ(code, 0);
  machine = nlohmann::json::parse(machine_json_of_last_run(db), nullptr, false);
  EXPECT_EQ(machine.value("glibc_tunables", ""), "glibc.malloc.arena_max=2");
  fs::remove_all(out);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

// ingero-bench copied without the workload program beside it says what is missing.
TEST(Harness, AMissingWorkloadProgramIsBadInput) {
  const fs::path dir = temp_path("alone");
  fs::create_directories(dir);
  fs::copy_file(kBinary, dir / "ingero-bench");
  const std::string db = (dir / "t.db").string();
  EXPECT_EQ(run({(dir / "ingero-bench").string(), "--workload", "dataloader", "--no-trace", "--device", "cpu", "--mode",
                 "direct", "--epochs", "1", "--db", db, "--out", (dir / "out").string()}),
            2);
  EXPECT_FALSE(fs::exists(db)) << "bad input must not leave a half-written trace DB";
  EXPECT_EQ(run({kWorkloadBinary, "--no-such-flag"}), 2);
  fs::remove_all(dir);
}

// The readers start without LibTorch: a running MCP server maps none of its libraries.
TEST(Harness, AReaderLoadsNoLibTorch) {
  const std::string db = temp_path("reader.db");
  const std::string out = temp_path("reader-out");
  ASSERT_EQ(run({kBinary, "--workload", "dataloader", "--no-trace", "--device", "cpu", "--mode", "direct", "--samples",
                 "1024", "--batch-size", "256", "--features", "8", "--epochs", "1", "--db", db, "--out", out}),
            0);
  int to_server[2];
  ASSERT_EQ(pipe(to_server), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(to_server[0], STDIN_FILENO);
    close(to_server[1]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execl(kBinary, kBinary, "mcp", "--db", db.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_server[0]);
  std::this_thread::sleep_for(500ms);  // past start-up: the server waits on stdin
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  close(to_server[1]);  // end of input: the server exits
  EXPECT_EQ(wait_exit_code(pid, 20s), 0);
  EXPECT_NE(text.find("libsqlite3"), std::string::npos) << "the maps of a running server were not read";
  EXPECT_EQ(text.find("libtorch"), std::string::npos) << "ingero-bench mcp mapped LibTorch";
  EXPECT_EQ(text.find("libc10"), std::string::npos) << "ingero-bench mcp mapped LibTorch";
  fs::remove_all(out);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

TEST(Harness, CudaWithoutAGpuIsBadInput) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(run({kBinary, "--workload", "dataloader", "--no-trace", "--device", "cuda", "--db", temp_path("cuda.db")}), 2);
}

bool python_with_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

// The real PyTorch DataLoader runs through the harness and writes a record like the C++ modes.
TEST(Harness, PythonModesRunAndWriteRecords) {
  if (!python_with_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch (apt-get install python3-torch)";
  const std::string db = temp_path("python.db");
  const std::string out = temp_path("python-out");
  const std::string report = temp_path("python.md");
  ASSERT_EQ(run({kBinary, "--workload", "dataloader", "--no-trace", "--device", "cpu", "--python", "/usr/bin/python3",
                 "--mode", "direct,python,python-direct", "--num-workers", "0,2", "--samples", "4096", "--batch-size",
                 "512", "--features", "8", "--epochs", "2", "--db", db, "--out", out, "--report", report}),
            0);
  int records = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    auto j = read_json(e.path().string());
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["status"], "ok") << e.path();
    EXPECT_EQ(j["samples_per_epoch"], 4096) << e.path();
    EXPECT_EQ(j["epoch_seconds"].size(), 2u) << e.path();
    ++records;
  }
  EXPECT_EQ(records, 4);  // direct, python w0, python w2 pf2, python-direct
  std::ifstream md(report);
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("python w2 pf2"), std::string::npos);
  fs::remove_all(out);
  fs::remove(report);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

}  // namespace
}  // namespace ingero::testing
