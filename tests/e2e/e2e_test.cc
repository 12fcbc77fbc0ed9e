// SPDX-License-Identifier: Apache-2.0
// End to end on this machine, as a user runs it: a traced sweep (direct and loader),
// then explain / compare / recommend on the DB it wrote.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/e2e/command.h"

namespace {

namespace fs = std::filesystem;

const char* kBinary = INGERO_BENCH_BINARY;

using ingero::testing::Output;

// Runs a shell command line, capturing stdout.
Output capture(const std::string& command) {
  Output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

int64_t query_int(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
    return -1;
  }
  int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return v;
}

class EndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    ingero::testing::SharedSetup setup = ingero::testing::shared_setup("e2e-sweep", [](const std::string& dir) {
      return capture(std::string(kBinary) +
                     " --workload dataloader --device cpu --mode direct,loader --num-workers 0,2"
                     " --samples 16384 --batch-size 2048 --features 16 --hidden 32 --epochs 2"
                     " --db " + dir + "/trace.db --out " + dir + "/runs 2>&1");
    });
    dir_ = new std::string(setup.dir);
    sweep_ = new Output(setup.result);
    owned_ = setup.owned;
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr && owned_) fs::remove_all(*dir_);
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the eBPF tracer needs root (run the tests with sudo)";
    ASSERT_EQ(sweep_->exit_code, 0) << sweep_->text;
  }
  static std::string db() { return *dir_ + "/trace.db"; }

  static std::string* dir_;
  static Output* sweep_;
  static bool owned_;
};

std::string* EndToEnd::dir_ = nullptr;
Output* EndToEnd::sweep_ = nullptr;
bool EndToEnd::owned_ = false;

TEST_F(EndToEnd, SweepTracesEveryRunIntoTheDb) {
  EXPECT_NE(sweep_->text.find("loader w2 pf2"), std::string::npos) << sweep_->text;
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db().c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> guard(h, sqlite3_close);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM runs WHERE status = 'ok' AND traced = 1"), 3);
  // The workload's batch timings joined the kernel's events: 8 batches x 2 epochs per run.
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events JOIN ops USING(op) WHERE name = 'batch_wait'"), 3 * 16);
  // The loader's two workers were enrolled, named and counted.
  const int64_t loader = query_int(h, "SELECT run_id FROM runs WHERE label = 'loader w2 pf2'");
  EXPECT_GE(query_int(h, "SELECT count(DISTINCT pid) FROM threads WHERE role = 'worker' AND run_id = " +
                             std::to_string(loader)),
            2);
  EXPECT_GT(query_int(h, "SELECT sum(voluntary_switches + involuntary_switches) FROM thread_stats WHERE run_id = " +
                             std::to_string(loader)),
            0);
  EXPECT_GT(query_int(h, "SELECT sum(page_allocs) FROM thread_stats WHERE run_id = " + std::to_string(loader)), 0);
  EXPECT_EQ(query_int(h, "SELECT coalesce(sum(dropped), 0) FROM losses"), 0);
}

TEST_F(EndToEnd, ExplainCompareRecommendReadTheDb) {
  auto explain = capture(std::string(kBinary) + " explain --db " + db() + " --json");
  ASSERT_EQ(explain.exit_code, 0) << explain.text;
  auto ej = nlohmann::json::parse(explain.text, nullptr, false);
  ASSERT_FALSE(ej.is_discarded()) << explain.text;

  auto text = capture(std::string(kBinary) + " explain --db " + db() + " --per-process");
  ASSERT_EQ(text.exit_code, 0) << text.text;
  EXPECT_NE(text.text.find("worker"), std::string::npos) << text.text;

  auto compare = capture(std::string(kBinary) + " compare --db " + db() + " 1 2");
  ASSERT_EQ(compare.exit_code, 0) << compare.text;

  auto recommend = capture(std::string(kBinary) + " recommend --db " + db() + " --json");
  ASSERT_EQ(recommend.exit_code, 0) << recommend.text;
  EXPECT_FALSE(nlohmann::json::parse(recommend.text, nullptr, false).is_discarded()) << recommend.text;

  EXPECT_EQ(capture(std::string(kBinary) + " explain --db " + db() + " --run 999 2>/dev/null").exit_code, 2);
}

TEST_F(EndToEnd, TraceCommandPassesTheExitStatusThrough) {
  const std::string own_db = *dir_ + "/exit-status.db";  // the shared sweep's DB stays as it was made
  auto r = capture(std::string(kBinary) + " trace --db " + own_db + " -- sh -c 'exit 7' 2>/dev/null");
  EXPECT_EQ(r.exit_code, 7);
  auto missing = capture(std::string(kBinary) + " trace --db " + own_db + " -- /no/such/program 2>/dev/null");
  EXPECT_EQ(missing.exit_code, 2);
}

// A launched job's CPU time is what wait4 reports for it and the descendants it waited for,
// stored traced or not: here dd's system time (zero pages copied) and the shell's user time.
TEST_F(EndToEnd, ALaunchedJobsCpuTimeIsStoredTracedOrNot) {
  const std::string job_db = *dir_ + "/job-cpu.db";
  fs::remove(job_db);  // its runs are numbered from 1 below
  const std::string job =
      "sh -c 'dd if=/dev/zero of=/dev/null bs=64k count=20000 2>/dev/null; i=0; "
      "while [ $i -lt 200000 ]; do i=$((i+1)); done'";
  auto traced = capture(std::string(kBinary) + " trace --db " + job_db + " -- " + job + " >/dev/null 2>&1");
  ASSERT_EQ(traced.exit_code, 0);
  auto untraced = capture(std::string(kBinary) +
                          " --workload dataloader --device cpu --mode direct --samples 4096 --batch-size 1024"
                          " --features 8 --hidden 8 --epochs 1 --no-trace --db " + job_db + " >/dev/null 2>&1");
  ASSERT_EQ(untraced.exit_code, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(job_db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto setting = [&](int run, const char* key) {
    return query_int(db, "SELECT CAST(value AS INTEGER) FROM run_settings WHERE run_id = " + std::to_string(run) +
                             " AND key = '" + key + "'");
  };
  EXPECT_GT(setting(1, "job_system_ns"), 20'000'000) << "dd's copies of 3.3 GB of zeroes are system time";
  EXPECT_GT(setting(1, "job_user_ns"), 20'000'000) << "the shell's loop is user time";
  EXPECT_GT(setting(2, "job_user_ns"), 0) << "an untraced workload run keeps its CPU time too";
  EXPECT_GE(setting(2, "job_system_ns"), 0);
  sqlite3_close(db);
  auto json = capture(std::string(kBinary) + " explain --db " + job_db + " --run 1 --json 2>/dev/null");
  ASSERT_EQ(json.exit_code, 0);
  const auto cpu = nlohmann::json::parse(json.text)["tracing_cost"]["job_cpu"];
  ASSERT_TRUE(cpu.is_object()) << json.text;
  EXPECT_GT(cpu["system_ns"].get<int64_t>(), 20'000'000);
}

}  // namespace
