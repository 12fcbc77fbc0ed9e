// SPDX-License-Identifier: Apache-2.0
// The harness as a hostile user drives it: bad input refused before any work, Ctrl-C and
// kill -9 in the middle of a run, a full disk, and a reader who cannot write the DB's
// directory. Each reproduces a failure the harness once had.
#include <gtest/gtest.h>

#include "common/proc_files.h"
#include "tests/e2e/command.h"
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ingero {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kBinary = INGERO_BENCH_BINARY;

using testing::capture;
using testing::Output;

// ingero-bench started in the background with its output in a file.
struct Background {
  pid_t pid = -1;
  std::string log;
  int wait() const {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string output() const {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

// ignore: a signal ignored from the start, as nohup ignores SIGHUP (0: none).
Background start(const std::string& args, const std::string& log, int ignore = 0) {
  Background b;
  b.log = log;
  b.pid = fork();
  if (b.pid == 0) {
    setpgid(0, 0);  // signalled as a terminal would signal its foreground job
    if (ignore != 0) signal(ignore, SIG_IGN);
    execl("/bin/sh", "sh", "-c", ("exec " + kBinary + " " + args + " >" + log + " 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return b;
}

// Every process a case starts carries this variable with the case's pid (set in SetUp, inherited):
// the tests beside it under ctest -j start workers and runs of their own, which must not count.
constexpr const char* kCaseVariable = "INGERO_RELIABILITY_CASE";

// Whether process pid is one of this case's whose name starts with prefix.
bool this_cases_process(pid_t pid, const std::string& prefix) {
  const auto name = proc::read_first_line("/proc/" + std::to_string(pid) + "/comm");
  return name && name->rfind(prefix, 0) == 0 &&
         proc::environment_value(pid, kCaseVariable) == std::to_string(getpid());
}

// Waits until a process of this case's whose name starts with prefix is there (the workload's workers).
bool wait_for_process(const std::string& prefix, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    for (pid_t pid : proc::all_pids())
      if (this_cases_process(pid, prefix)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// Waits until a process whose name starts with prefix catches sig (SigCgt in /proc/PID/status):
// a signal sent before the workload installed its handlers would kill it with the default action.
bool wait_for_handler(const std::string& prefix, int sig, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    for (pid_t pid : proc::all_pids()) {
      if (!this_cases_process(pid, prefix)) continue;
      std::ifstream status("/proc/" + std::to_string(pid) + "/status");
      for (std::string line; std::getline(status, line);)
        if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1) return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// Waits until path exists and has a line; returns that line ("" when it never came).
std::string wait_for_line(const std::string& path, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
    std::this_thread::sleep_for(50ms);
  }
  return "";
}

// This case's processes whose names start with prefix.
int count_processes(const std::string& prefix) {
  int n = 0;
  for (pid_t pid : proc::all_pids()) n += this_cases_process(pid, prefix);
  return n;
}

class Reliability : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv(kCaseVariable, std::to_string(getpid()).c_str(), 1);
    dir_ = fs::temp_directory_path() / ("ingero-reliability-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // A small CPU workload; --no-trace unless root.
  std::string workload(const std::string& extra) const {
    return "--workload dataloader --device cpu --samples 8192 --batch-size 1024 --features 16 --hidden 32 " +
           std::string(geteuid() == 0 ? "" : "--no-trace ") + extra;
  }
  fs::path dir_;
};

// Refused before the DB is created or a process started, with exit code 2 and a fix.
TEST_F(Reliability, BadInputIsRefusedBeforeAnyWork) {
  const std::string db = path("never.db");
  for (const std::string& args :
       {workload("--mode loader --num-workers 10000 --db " + db), workload("--mode loader --num-workers -2 --db " + db),
        workload("--mode loader --num-workers 0 --prefetch-factor 4 --db " + db),
        workload("--mode python --python /bin/false --db " + db), workload("--mode nope --db " + db),
        workload("--mode loader --db ''"), workload("--mode loader --out /proc/version --db " + db),
        // /bin/true exits 0 with no answer: not a python that imports torch.
        workload("--mode python --python /bin/true --db " + db),
        // A device is not a trace DB (as root, /dev/null once got a world-writable /dev/null-journal).
        workload("--mode direct --db /dev/null"),
        // Each once failed only after the run, or deep in LibTorch.
        workload("--mode direct --out /proc/x --db " + db), workload("--mode direct --report /proc/r.md --db " + db),
        workload("--mode direct --cudart /etc/passwd --db " + db), workload("--mode direct --hidden 1000000 --db " + db),
        workload("--mode direct --classes 100000000 --db " + db),
        std::string("explain --db ") + path("missing.db"), std::string("trace --db ") + db + " -- /no/such/program",
        std::string("trace --db ") + db + " --pid 999999999"}) {
    auto r = capture(kBinary + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("error:"), std::string::npos) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("fix:"), std::string::npos) << args << "\n" << r.text;
    EXPECT_FALSE(fs::exists(db)) << args;
  }
  EXPECT_EQ(count_processes("ib-worker"), 0);
}

// A TMPDIR that is missing or not a folder once aborted trace -- CMD, workload runs and sweeps
// (exit 134, std::filesystem::temp_directory_path threw). Bad input now, naming it and the fix.
TEST_F(Reliability, ABadTmpdirIsBadInputNotAnAbort) {
  const std::string db = path("never.db");
  const std::string file = path("a-file");
  std::ofstream(file) << "x";
  for (const std::string& tmpdir : {path("missing"), file}) {
    for (const std::string& args :
         {workload("--mode direct --no-trace --epochs 1 --db " + db), "trace --no-observer --db " + db + " -- /bin/true",
          "trace --db " + db + " -- /bin/true",
          "sweep --device cpu --mode direct --hidden 8 --features 4 --samples 1024 --batch-size 256 --no-trace --budget 5 --db " + db +
              " --out " + path("runs"),
          "sweep --no-trace --num-workers 0,2 --db " + db + " --out " + path("runs") + " -- /bin/true"}) {
      auto r = capture("TMPDIR=" + tmpdir + " " + kBinary + " " + args);
      if (args.find("--no-observer") != std::string::npos) {
        EXPECT_NE(r.exit_code, 134) << args << "\n" << r.text;  // needs no private folder: runs
        fs::remove(db);
        continue;
      }
      EXPECT_EQ(r.exit_code, 2) << tmpdir << " " << args << "\n" << r.text;
      EXPECT_NE(r.text.find("TMPDIR=" + tmpdir), std::string::npos) << r.text;
      EXPECT_NE(r.text.find("fix:"), std::string::npos) << r.text;
      EXPECT_FALSE(fs::exists(db)) << args;
    }
  }
}

// A "python" that answers the torch probe but writes no result record: a failed run, exit 1,
// not an ok run with every metric "-".
TEST_F(Reliability, AWorkloadThatExitsWithoutItsRecordIsAFailedRun) {
  const std::string fake = path("python");
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\necho 'ingero-bench-torch-probe 42 2.0'\nexit 0\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  const std::string db = path("norecord.db");
  auto r = capture(kBinary + " --workload dataloader --device cpu --samples 1024 --batch-size 512 --features 4 "
                   "--epochs 1 --warmup-epochs 0 --no-trace --mode python --python " + fake + " --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.text;
  EXPECT_NE(r.text.find("without writing its result record"), std::string::npos) << r.text;
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find("failed"), std::string::npos) << runs.text;
}

// The private run folders in the temp directory, to see that none is left behind.
// The private folders of the harness with this pid (named ingero-bench-run-PID-...): other runs of
// the tests beside this one make and remove their own.
size_t run_folders(pid_t harness) {
  const std::string mine = "ingero-bench-run-" + std::to_string(harness) + "-";
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path()))
    n += entry.path().filename().string().rfind(mine, 0) == 0;
  return n;
}

// SIGHUP (the SSH session dropped) to the terminal's process group: the run ends as on SIGTERM,
// interrupted with its record kept and its private folder removed (it once died on the spot).
TEST_F(Reliability, HangupEndsTheRunCleanly) {
  const std::string db = path("hangup.db");
  auto run = start("--workload dataloader --device cpu --samples 1024 --batch-size 512 --features 4 --hidden 8 "
                   "--mode direct --no-trace --epochs 100000 --db " + db + " --out " + path("runs"),
                   path("hangup.log"));
  ASSERT_TRUE(wait_for_handler("ingero-bench-wo", SIGHUP, 30s)) << run.output();
  ASSERT_EQ(run_folders(run.pid), 1u) << "the harness (started by exec) made no private folder of its pid";
  ASSERT_EQ(kill(-run.pid, SIGHUP), 0);
  EXPECT_EQ(run.wait(), 128 + SIGHUP) << run.output();
  EXPECT_NE(run.output().find("interrupted"), std::string::npos) << run.output();
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find("interrupted"), std::string::npos) << runs.text;
  EXPECT_FALSE(fs::is_empty(path("runs")));
  EXPECT_EQ(run_folders(run.pid), 0u);
}

// mcp blocked reading its next message: SIGTERM ends it with 143, not 0.
TEST_F(Reliability, McpStopsOnSigtermWithTheSignalsExitCode) {
  const std::string db = path("mcp.db");
  ASSERT_EQ(capture(kBinary + " --workload dataloader --device cpu --samples 1024 --batch-size 512 --features 4 "
                    "--hidden 8 --mode direct --no-trace --epochs 1 --warmup-epochs 0 --db " + db + " --out " +
                    path("runs"))
                .exit_code,
            0);
  int to_server[2], from_server[2];
  ASSERT_EQ(pipe(to_server), 0);
  ASSERT_EQ(pipe(from_server), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(to_server[0], STDIN_FILENO);
    dup2(from_server[1], STDOUT_FILENO);
    for (int fd : {to_server[0], to_server[1], from_server[0], from_server[1]}) close(fd);
    execl(kBinary.c_str(), kBinary.c_str(), "mcp", "--db", db.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_server[0]);
  close(from_server[1]);
  const std::string hello =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})" "\n";
  ASSERT_EQ(write(to_server[1], hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  std::string answer;
  char c;
  while (read(from_server[0], &c, 1) == 1 && c != '\n') answer += c;
  EXPECT_NE(answer.find("protocolVersion"), std::string::npos) << answer;
  std::this_thread::sleep_for(100ms);  // back in its read of the next line
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 128 + SIGTERM);
  close(to_server[1]);
  close(from_server[0]);
}

// Ctrl-C during a direct mode (no workers) and a loader: exit 130, the finished record
// and the interrupted run kept, nothing left running.
TEST_F(Reliability, InterruptStopsAnyModeWithExitCode130AndKeepsTheRecord) {
  for (const std::string mode : {"direct", "loader --num-workers 2"}) {
    const std::string db = path("interrupt.db");
    auto run = start(workload("--mode " + mode + " --epochs 100000 --db " + db + " --out " + path("runs")),
                     path("interrupt.log"));
    // The workload keeps its record on SIGINT once its handler is in: a busy machine can take longer
    // than the sleep to get there, and a signal before it ends the run with nothing to keep.
    ASSERT_TRUE(wait_for_handler("ingero-bench-wo", SIGINT, 60s)) << run.output();
    std::this_thread::sleep_for(mode == "direct" ? 3s : 0s);
    if (mode != "direct") {
      ASSERT_TRUE(wait_for_process("ib-worker", 60s)) << run.output();
    }
    std::this_thread::sleep_for(1s);
    ASSERT_EQ(kill(-run.pid, SIGINT), 0);
    EXPECT_EQ(run.wait(), 130) << mode << "\n" << run.output();
    const std::string out = run.output();
    EXPECT_NE(out.find("interrupted"), std::string::npos) << out;
    EXPECT_EQ(out.find("Abort"), std::string::npos) << out;
    auto runs = capture(kBinary + " runs --db " + db);
    EXPECT_EQ(runs.exit_code, 0) << runs.text;
    EXPECT_NE(runs.text.find("interrupted"), std::string::npos) << runs.text;
    EXPECT_EQ(count_processes("ib-worker"), 0);
    EXPECT_FALSE(fs::is_empty(path("runs")));
    fs::remove(db);
  }
}

// kill -9 of the harness: its run is abandoned (not 'running' forever), explain says the
// losses are unknown, and no worker outlives it.
TEST_F(Reliability, KilledHarnessLeavesAnAbandonedRunAndNoProcesses) {
  const std::string db = path("killed.db");
  auto run = start(workload("--mode loader --num-workers 2 --epochs 100000 --db " + db), path("killed.log"));
  ASSERT_TRUE(wait_for_process("ib-worker", 60s)) << run.output();
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(kill(run.pid, SIGKILL), 0);
  EXPECT_EQ(run.wait(), 128 + SIGKILL);
  for (int i = 0; i < 100 && count_processes("ib-worker") > 0; ++i) std::this_thread::sleep_for(100ms);
  EXPECT_EQ(count_processes("ib-worker"), 0);
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_EQ(runs.exit_code, 0) << runs.text;
  EXPECT_NE(runs.text.find("abandoned"), std::string::npos) << runs.text;
  auto explain = capture(kBinary + " explain --db " + db + " --run 1");
  EXPECT_EQ(explain.text.find("0 lost"), std::string::npos) << explain.text;
  EXPECT_NE(explain.text.find("unknown"), std::string::npos) << explain.text;
}

// A user who cannot write the DB's directory reads it: the file is not left in WAL mode.
TEST_F(Reliability, AnotherUserReadsTheDbFromADirectoryTheyCannotWrite) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  const std::string db = path("shared.db");
  ASSERT_EQ(capture(kBinary + " " + workload("--mode direct --epochs 2 --db " + db)).exit_code, 0);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " + kBinary;
  for (const std::string& command : {std::string(" runs --db "), std::string(" explain --db "),
                                     std::string(" recommend --db ")}) {
    auto r = capture(as_nobody + command + db);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.text;
    EXPECT_EQ(r.text.find("not a SQLite"), std::string::npos) << r.text;
  }
}

// Another user plants links in a folder they can write (world-writable, not sticky: the kernel's
// protected_symlinks does not cover it), named as root's next outputs, pointing at a root-only
// file. Root once replaced that file with its report (0600 became 0644). Every output refuses the
// link instead: exit 2 before any work, or the record's own failure after the run.
TEST_F(Reliability, RootDoesNotFollowALinkAnotherUserPlanted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  const std::string secret = path("secret");
  std::ofstream(secret) << "root only";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const std::string shared = path("shared");
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  const std::string db = path("t.db");
  const std::string records = path("runs");
  ASSERT_EQ(capture(kBinary + " " + workload("--mode direct --no-trace --epochs 1 --db " + db + " --out " + records))
                .exit_code,
            0);
  std::string record_name;
  for (const auto& entry : fs::directory_iterator(records)) record_name = entry.path().filename().string();
  ASSERT_EQ(record_name.rfind("run-1-", 0), 0u) << record_name;
  const std::string next_record = "run-2-" + record_name.substr(6);
  for (const std::string& name : {std::string("run.md"), std::string("report.md"), std::string("trace.json"),
                                  std::string("runs.md"), next_record}) {
    auto planted = capture("setpriv --reuid=65534 --regid=65534 --clear-groups ln -s " + secret + " " + shared + "/" +
                           name);
    ASSERT_EQ(planted.exit_code, 0) << planted.text;
  }
  for (const std::string& args :
       {workload("--mode direct --no-trace --epochs 1 --db " + path("never.db") + " --report " + shared + "/run.md"),
        "report --db " + db + " --run 1 --out " + shared + "/report.md",
        "export --db " + db + " --run 1 --out " + shared + "/trace.json",
        "runs --db " + db + " --report " + shared + "/runs.md"}) {
    auto r = capture(kBinary + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("symbolic link"), std::string::npos) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("fix:"), std::string::npos) << args << "\n" << r.text;
  }
  EXPECT_FALSE(fs::exists(path("never.db")));
  // The record's name is predictable; the run itself is kept in the DB.
  auto run = capture(kBinary + " " + workload("--mode direct --no-trace --epochs 1 --db " + db + " --out " + shared));
  EXPECT_EQ(run.exit_code, 1) << run.text;
  EXPECT_NE(run.text.find("symbolic link"), std::string::npos) << run.text;
  std::ifstream in(secret);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "root only");
  EXPECT_EQ(fs::status(secret).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(fs::is_symlink(shared + "/report.md"));
}

// The disk fills while a run is going: its record survives in --out, the run ends up
// failed or abandoned (never 'running'), the message says what happened without SQL.
TEST_F(Reliability, FullDiskKeepsTheRecordAndSaysSo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const std::string mnt = path("tiny");
  fs::create_directories(mnt);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=4m") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::string db = mnt + "/trace.db";
  auto run = start(workload("--mode direct --no-trace --epochs 400 --db " + db + " --out " + path("runs")),
                   path("full.log"));
  for (int i = 0; i < 100 && !fs::exists(db); ++i) std::this_thread::sleep_for(50ms);
  std::this_thread::sleep_for(500ms);
  // Fill what is left of the disk.
  {
    std::ofstream filler(mnt + "/filler", std::ios::binary);
    const std::string block(1 << 16, 'x');
    while (filler.write(block.data(), block.size())) {
    }
  }
  const int code = run.wait();
  const std::string out = run.output();
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(code, 134) << out;  // no abort
  EXPECT_EQ(out.find("INSERT"), std::string::npos) << out;
  EXPECT_EQ(out.find("UPDATE"), std::string::npos) << out;
  EXPECT_NE(out.find("full"), std::string::npos) << out;
  // The record is in --out, on another file system.
  bool record = false;
  for (const auto& entry : fs::directory_iterator(path("runs"))) record |= entry.path().extension() == ".json";
  EXPECT_TRUE(record) << out;
  fs::remove(mnt + "/filler");
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_EQ(runs.exit_code, 0) << runs.text;
  EXPECT_EQ(runs.text.find("running"), std::string::npos) << runs.text;
  umount2(mnt.c_str(), MNT_DETACH);
}

// --out on a full disk: the run is stored whole in the DB and stays ok there; the missing output
// is the command's failure (exit 1) with the fix.
TEST_F(Reliability, AFullOutFolderFailsTheOutputNotTheRun) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const std::string mnt = path("tiny");
  fs::create_directories(mnt);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  fs::create_directories(mnt + "/runs");
  {
    std::ofstream filler(mnt + "/filler", std::ios::binary);
    const std::string block(4096, 'x');
    while (filler.write(block.data(), block.size())) {
    }
  }
  const std::string db = path("t.db");
  auto r = capture(kBinary + " --workload dataloader --device cpu --samples 1024 --batch-size 512 --features 4 "
                   "--hidden 8 --epochs 1 --warmup-epochs 0 --no-trace --mode direct --db " + db + " --out " + mnt +
                   "/runs");
  umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_EQ(r.exit_code, 1) << r.text;
  EXPECT_NE(r.text.find("stored whole in the DB"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("is full: free space there, or choose another path"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("failed: failed"), std::string::npos) << r.text;
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find(" ok "), std::string::npos) << runs.text;
  EXPECT_EQ(runs.text.find("failed"), std::string::npos) << runs.text;
}

// trace --duration with a command ends the command's process group after that long: an ok run, exit 0.
TEST_F(Reliability, TraceDurationEndsALaunchedCommand) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("t.db");
  const auto started = std::chrono::steady_clock::now();
  auto r = capture(kBinary + " trace --db " + db + " --duration 1s --no-observer -- sh -c 'sleep 60 & sleep 60'");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.exit_code, 0) << r.text;
  EXPECT_LT(seconds, 30) << r.text;
  EXPECT_NE(r.text.find("ended after --duration 1s"), std::string::npos) << r.text;
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find(" ok "), std::string::npos) << runs.text;
}

// A job that writes its pid to P, sleeps, then writes "finished" to DONE.
std::string sleeping_job(const std::string& pid_file, const std::string& done_file, int seconds) {
  return "sh -c 'echo $$ > " + pid_file + "; sleep " + std::to_string(seconds) + "; echo finished > " + done_file +
         "'";
}

// Started under nohup (SIGHUP ignored), a hang-up of the harness and of the job changes nothing:
// the job finishes, the run is stored ok and readable (the harness once ended it with SIGTERM).
TEST_F(Reliability, UnderNohupAHangupLetsTheTracedJobFinish) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("nohup.db"), pid_file = path("job.pid"), done = path("job.done");
  auto run = start("trace --no-observer --db " + db + " -- " + sleeping_job(pid_file, done, 3), path("nohup.log"),
                   SIGHUP);
  const std::string job = wait_for_line(pid_file, 30s);
  ASSERT_FALSE(job.empty()) << run.output();
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(kill(run.pid, SIGHUP), 0);
  kill(-std::stoi(job), SIGHUP);  // the job's own group, as a closing terminal's session would
  EXPECT_EQ(run.wait(), 0) << run.output();
  EXPECT_EQ(wait_for_line(done, 1s), "finished") << run.output();
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find(" ok "), std::string::npos) << runs.text;
  auto explain = capture(kBinary + " explain --db " + db + " --run 1");
  EXPECT_EQ(explain.exit_code, 0) << explain.text;
}

// kill -9 of the tracer (or an OOM kill, a crash) leaves the user's own job running to its end, as
// perf and nsys do: it once died with the tracer (PR_SET_PDEATHSIG).
TEST_F(Reliability, AKilledTracerLeavesTheTracedJobRunningToItsEnd) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("killed.db"), pid_file = path("job.pid"), done = path("job.done");
  auto run = start("trace --no-observer --db " + db + " -- " + sleeping_job(pid_file, done, 2), path("killed.log"));
  const std::string job = wait_for_line(pid_file, 30s);
  ASSERT_FALSE(job.empty()) << run.output();
  ASSERT_EQ(kill(run.pid, SIGKILL), 0);
  EXPECT_EQ(run.wait(), 128 + SIGKILL);
  EXPECT_EQ(wait_for_line(done, 20s), "finished") << run.output();
  kill(-std::stoi(job), SIGKILL);  // whatever is left when the test failed
  auto runs = capture(kBinary + " runs --db " + db);
  EXPECT_NE(runs.text.find("abandoned"), std::string::npos) << runs.text;
}

// Reads a pseudo-terminal's output until it holds text or limit passes; all it read.
std::string read_until(int master, std::string& seen, const std::string& text, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (seen.find(text) == std::string::npos && std::chrono::steady_clock::now() < end) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[512];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: every process of the terminal is gone
    seen.append(buf, static_cast<size_t>(n));
  }
  return seen;
}

// Waits for pid up to limit; its exit code, or -1 (then it is killed) when it did not end.
int wait_or_kill(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(50ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// `trace --no-observer --db DB -- sh -c SCRIPT` started on a new pseudo-terminal, whose controlling side
// is `master`; -1 when it could not be started.
pid_t trace_on_a_terminal(const std::string& db, const char* script, int& master) {
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    execl(kBinary.c_str(), kBinary.c_str(), "trace", "--no-observer", "--db", db.c_str(), "--", "sh", "-c", script,
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// A job that reads its terminal (input(), pdb, a login prompt) gets the line typed: the harness lends
// it the terminal while it runs. It once stopped on SIGTTIN, in a process group of its own.
TEST_F(Reliability, ALaunchedJobReadsTheTerminal) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("tty.db");
  int master = -1;
  const pid_t pid = trace_on_a_terminal(db, "echo ready; read line; echo got $line", master);
  ASSERT_GE(pid, 0);
  std::string seen;
  read_until(master, seen, "ready", 30s);
  ASSERT_EQ(write(master, "hello\n", 6), 6);
  EXPECT_NE(read_until(master, seen, "got hello", 20s).find("got hello"), std::string::npos) << seen;
  EXPECT_EQ(wait_or_kill(pid, 20s), 0) << read_until(master, seen, "trace database", 1s);
  close(master);
}

// Under sudo the user's command runs as the user who ran sudo (--as-root keeps root), and the DB
// and the folders made for it are theirs: a root-owned results/ once made their next run fail.
TEST_F(Reliability, UnderSudoTheJobRunsAsTheUserAndTheOutputsAreTheirs) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  fs::permissions(dir_, fs::perms::all);  // the job, as nobody, writes its answer here
  const std::string db = path("results/sub/trace.db");
  const std::string sudo = "SUDO_UID=65534 SUDO_GID=65534 " + kBinary + " trace --db " + db;
  const std::string job = " -- python3 -c 'import os; print(os.getuid(), os.getgid(), os.getgroups(), "
                          "os.environ[\"HOME\"], file=open(\"" + path("ids") + "\", \"w\"))'";
  auto as_user = capture(sudo + job);
  EXPECT_EQ(as_user.exit_code, 0) << as_user.text;
  EXPECT_EQ(as_user.text.find("Traceback"), std::string::npos) << as_user.text;
  EXPECT_EQ(wait_for_line(path("ids"), 1s), "65534 65534 [65534] /nonexistent") << as_user.text;
  for (const std::string& output : {db, path("results"), path("results/sub")}) {
    struct stat st {};
    ASSERT_EQ(lstat(output.c_str(), &st), 0) << output;
    EXPECT_EQ(st.st_uid, 65534u) << output;
    EXPECT_EQ(st.st_gid, 65534u) << output;
  }
  fs::remove(path("ids"));
  auto as_root = capture(sudo + " --as-root" + job);
  EXPECT_EQ(as_root.exit_code, 0) << as_root.text;
  EXPECT_EQ(wait_for_line(path("ids"), 1s).rfind("0 0 ", 0), 0u) << as_root.text;
  struct stat st {};
  ASSERT_EQ(stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  auto bad = capture("SUDO_UID=x SUDO_GID=65534 " + kBinary + " trace --db " + path("bad.db") + " -- true");
  EXPECT_EQ(bad.exit_code, 2) << bad.text;
  EXPECT_NE(bad.text.find("--as-root"), std::string::npos) << bad.text;
}

// Each path is owned by uid and gid 65534 (nobody, as SUDO_UID/SUDO_GID below).
void expect_owned_by_nobody(const std::vector<std::string>& paths, const std::string& context) {
  for (const std::string& output : paths) {
    struct stat st {};
    ASSERT_EQ(lstat(output.c_str(), &st), 0) << output << "\n" << context;
    EXPECT_EQ(st.st_uid, 65534u) << output << "\n" << context;
    EXPECT_EQ(st.st_gid, 65534u) << output << "\n" << context;
  }
}

// The files in dir whose names start with prefix.
std::vector<std::string> files_in(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path().string());
  return found;
}

// Under sudo a workload run's DB, --out records and --report, and the folders made for them, are
// the user's, as trace's are: they were left root-owned, and the user's next run failed.
TEST_F(Reliability, UnderSudoAWorkloadRunsOutputsAreTheUsers) {
  if (geteuid() != 0) GTEST_SKIP() << "giving files to another user needs root";
  const std::string sudo = "SUDO_UID=65534 SUDO_GID=65534 " + kBinary + " ";
  auto run = capture(sudo + workload("--mode direct --no-trace --epochs 1 --db " + path("results/sub/w.db") + " --out " +
                                     path("results/runs") + " --report " + path("results/md/table.md")));
  ASSERT_EQ(run.exit_code, 0) << run.text;
  const auto records = files_in(path("results/runs"), "run-");
  ASSERT_EQ(records.size(), 1u) << run.text;
  expect_owned_by_nobody({path("results"), path("results/sub"), path("results/sub/w.db"), path("results/runs"),
                          records.front(), path("results/md"), path("results/md/table.md")},
                         run.text);
  // A folder that was there keeps its owner.
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

// The same for a sweep of our workloads, and for a sweep of the user's command, which runs as
// the user (--as-root keeps root), with its kept logs theirs.
TEST_F(Reliability, UnderSudoASweepRunsTheJobAsTheUserAndItsOutputsAreTheirs) {
  if (geteuid() != 0) GTEST_SKIP() << "giving files to another user needs root";
  std::string python;
  for (const char* candidate : {"/usr/bin/python3", "python3"})
    if (python.empty() && capture(std::string(candidate) + " -c 'import torch' 2>/dev/null").exit_code == 0)
      python = candidate;
  if (python.empty()) GTEST_SKIP() << "no python3 here imports torch (install python3-torch)";
  fs::permissions(dir_, fs::perms::all);  // the job, as nobody, writes its answer here
  const std::string sudo = "SUDO_UID=65534 SUDO_GID=65534 " + kBinary + " sweep ";
  auto ours = capture(sudo + "--device cpu --mode direct --hidden 8 --features 4 --samples 1024 --batch-size 256 "
                             "--no-trace --max-repeats 1 --verify-rounds 1 --db " + path("w/sweep.db") + " --out " +
                      path("w/runs"));
  ASSERT_EQ(ours.exit_code, 0) << ours.text;
  const auto records = files_in(path("w/runs"), "run-");
  ASSERT_FALSE(records.empty()) << ours.text;
  std::vector<std::string> outputs = {path("w"), path("w/sweep.db"), path("w/runs")};
  outputs.insert(outputs.end(), records.begin(), records.end());
  expect_owned_by_nobody(outputs, ours.text);

  const std::string job = path("job.py");
  std::ofstream(job) << "import os, time\nfrom torch.utils.data import DataLoader\n"
                        "print(os.getuid(), os.getgid(), file=open('" << path("ids") << "', 'w'))\n"
                        "loader = DataLoader(range(1000000), batch_size=4)\n"
                        "for batch in loader:\n    time.sleep(0.002)\n";
  const std::string sweep_flags = "--no-trace --steps 5 --warmup-steps 1 --num-workers 0 --max-repeats 1 "
                                  "--verify-rounds 1 ";
  auto theirs = capture(sudo + sweep_flags + "--db " + path("j/sweep.db") + " --out " + path("j/runs") +
                        " -- " + python + " " + job);
  ASSERT_EQ(theirs.exit_code, 0) << theirs.text;
  EXPECT_EQ(wait_for_line(path("ids"), 1s), "65534 65534") << theirs.text;
  const auto logs = files_in(path("j/runs"), "run-");
  ASSERT_FALSE(logs.empty()) << theirs.text;
  outputs = {path("j"), path("j/sweep.db"), path("j/runs")};
  outputs.insert(outputs.end(), logs.begin(), logs.end());
  expect_owned_by_nobody(outputs, theirs.text);

  fs::remove(path("ids"));
  auto as_root = capture(sudo + "--as-root " + sweep_flags + "--db " + path("r/sweep.db") + " --out " +
                         path("r/runs") + " -- " + python + " " + job);
  ASSERT_EQ(as_root.exit_code, 0) << as_root.text;
  EXPECT_EQ(wait_for_line(path("ids"), 1s), "0 0") << as_root.text;
  expect_owned_by_nobody({path("r/sweep.db")}, as_root.text);
}

// What the readers and the gate write under sudo is the user's too: runs --report, report --out,
// export --out, ci --junit / --summary (and the baseline --update-baseline writes), with the
// folders made for them.
TEST_F(Reliability, UnderSudoTheReadersAndTheGatesOutputsAreTheUsers) {
  if (geteuid() != 0) GTEST_SKIP() << "giving files to another user needs root";
  const std::string db = path("root.db");  // root's own DB: reading it changes nothing of it
  auto run = capture(kBinary + " " + workload("--mode direct --no-trace --epochs 1 --db " + db + " --out " + path("root-runs")));
  ASSERT_EQ(run.exit_code, 0) << run.text;
  const std::string sudo = "SUDO_UID=65534 SUDO_GID=65534 " + kBinary + " ";
  for (const std::string& command :
       {"runs --db " + db + " --report " + path("runs/md/table.md"), "report --db " + db + " --out " +
        path("report/r.html"), "export --db " + db + " --run 1 --out " + path("export/trace.json")}) {
    auto r = capture(sudo + command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.text;
  }
  expect_owned_by_nobody({path("runs"), path("runs/md"), path("runs/md/table.md"), path("report"),
                          path("report/r.html"), path("export"), path("export/trace.json")},
                         "runs / report / export");
  std::ofstream(path("suite.json")) << R"({"schema": "ingero-bench/ci-suite", "name": "sudo", "repeats": 3,
    "configs": [{"label": "direct", "args": ["--device", "cpu", "--mode", "direct", "--samples", "8192",
                 "--batch-size", "1024", "--features", "16", "--hidden", "32", "--epochs", "2", "--no-trace"]}]})";
  auto baseline = capture(sudo + "ci --suite " + path("suite.json") + " --baseline " + path("ci/base/b.json") +
                          " --update-baseline");
  ASSERT_EQ(baseline.exit_code, 0) << baseline.text;
  auto gate = capture(sudo + "ci --suite " + path("suite.json") + " --baseline " + path("ci/base/b.json") +
                      " --threshold 500% --junit " + path("ci/out/junit.xml") + " --summary " +
                      path("ci/md/summary.md"));
  ASSERT_TRUE(gate.exit_code == 0 || gate.exit_code == 1) << gate.text;  // passed or failed, not refused
  expect_owned_by_nobody({path("ci"), path("ci/base"), path("ci/base/b.json"), path("ci/out"),
                          path("ci/out/junit.xml"), path("ci/md"), path("ci/md/summary.md")},
                         baseline.text + gate.text);
  struct stat st {};
  ASSERT_EQ(stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

// A DB that cannot store the run's root process (a full disk) fails the run before the job starts,
// rather than running it for a result that could not be kept.
TEST_F(Reliability, ARunWhoseRootProcessCannotBeStoredFailsBeforeTheJobStarts) {
  const std::string db = path("full.db");
  auto first = capture(kBinary + " " + workload("--mode direct --no-trace --epochs 1 --db " + db + " --out " +
                                                path("runs")));
  ASSERT_EQ(first.exit_code, 0) << first.text;
  auto trigger = capture("sqlite3 " + db + " \"CREATE TRIGGER full_disk BEFORE UPDATE OF root_pid ON runs "
                         "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END\" 2>&1");
  if (trigger.exit_code == 127) GTEST_SKIP() << "no sqlite3 command here";
  ASSERT_EQ(trigger.exit_code, 0) << trigger.text;
  auto full = capture(kBinary + " " + workload("--mode direct --no-trace --epochs 1 --db " + db + " --out " +
                                               path("runs")));
  EXPECT_NE(full.exit_code, 0) << full.text;
  EXPECT_NE(full.text.find("disk is full"), std::string::npos) << full.text;
  auto stored = capture("sqlite3 " + db + " \"SELECT count(*) FROM runs WHERE status = 'ok'\"");
  EXPECT_EQ(stored.text, "1\n") << stored.text;
}

// Ctrl-C typed while the job holds the terminal reaches the job, and the run is interrupted (130).
TEST_F(Reliability, CtrlCAtTheJobsTerminalInterruptsTheRun) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("tty.db");
  int master = -1;
  const pid_t pid = trace_on_a_terminal(db, "echo ready; sleep 60", master);
  ASSERT_GE(pid, 0);
  std::string seen;
  read_until(master, seen, "ready", 30s);
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(write(master, "\x03", 1), 1);  // Ctrl-C
  EXPECT_EQ(wait_or_kill(pid, 20s), 130) << read_until(master, seen, "trace database", 1s);
  close(master);
  EXPECT_NE(capture(kBinary + " runs --db " + db).text.find("interrupted"), std::string::npos);
}

// Ctrl-Z stops the job, and the harness with it, so that the shell shows the command stopped; fg
// continues both, with the terminal lent again. Here a minimal job-control shell stands above the harness.
TEST_F(Reliability, CtrlZStopsTheJobAndTheHarnessAndFgContinuesBoth) {
  if (geteuid() != 0) GTEST_SKIP() << "tracing needs root";
  const std::string db = path("tty.db");
  int master = -1;
  const pid_t shell = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(shell, 0);
  if (shell == 0) {
    const pid_t harness = fork();
    if (harness == 0) {
      setpgid(0, 0);
      execl(kBinary.c_str(), kBinary.c_str(), "trace", "--no-observer", "--db", db.c_str(), "--", "sh", "-c",
            "echo ready; read line; echo got $line", static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(harness, harness);
    tcsetpgrp(STDIN_FILENO, harness);
    signal(SIGTTOU, SIG_IGN);  // the shell takes the terminal back from the background
    int status = 0;
    if (waitpid(harness, &status, WUNTRACED) != harness || !WIFSTOPPED(status)) _exit(20);
    tcsetpgrp(STDIN_FILENO, getpgrp());
    const char stopped[] = "[harness stopped]\n";
    if (write(STDOUT_FILENO, stopped, sizeof stopped - 1) < 0) _exit(21);
    tcsetpgrp(STDIN_FILENO, harness);  // fg
    kill(-harness, SIGCONT);
    if (waitpid(harness, &status, 0) != harness) _exit(22);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status));
  }
  std::string seen;
  read_until(master, seen, "ready", 30s);
  std::this_thread::sleep_for(300ms);  // in its read
  ASSERT_EQ(write(master, "\x1a", 1), 1);  // Ctrl-Z
  EXPECT_NE(read_until(master, seen, "[harness stopped]", 20s).find("[harness stopped]"), std::string::npos) << seen;
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(write(master, "hello\n", 6), 6);
  EXPECT_NE(read_until(master, seen, "got hello", 20s).find("got hello"), std::string::npos) << seen;
  EXPECT_EQ(wait_or_kill(shell, 20s), 0) << read_until(master, seen, "trace database", 1s);
  close(master);
}

}  // namespace
}  // namespace ingero
