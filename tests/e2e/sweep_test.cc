// SPDX-License-Identifier: Apache-2.0
// ingero-bench sweep on this machine: a search that ends in a verified recommendation,
// and a sweep interrupted and resumed without re-measuring what it had decided.
#include <gtest/gtest.h>

#include "tests/e2e/command.h"
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace ingero {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kBinary = INGERO_BENCH_BINARY;
// A model small enough that loading dominates: one gather per batch (direct-shuffled) wins by far
// over per-sample collate. (loader-batched gathers too, but on this 2-core VM with Debian's
// LibTorch 1.13 some of its epochs stall ~70 ms in the model, with every build: too noisy to rank.)
const std::string kGrid =
    " --device cpu --mode loader,direct-shuffled --num-workers 0 --hidden 32 --features 16 --epochs 5 --no-trace";

using testing::capture;
using testing::Output;

int64_t query_int(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  sqlite3_busy_timeout(h, 2000);
  sqlite3_stmt* st = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingero-sweep-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "sweep.db").string(); }
  std::string out() const { return " --db " + db() + " --out " + (dir_ / "runs").string(); }
  fs::path dir_;
};

TEST_F(Sweep, SearchEndsInARecommendationVerifiedByInterleavedReRuns) {
  auto sweep = capture(kBinary + " sweep" + kGrid + out());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.text;
  EXPECT_NE(sweep.text.find("verifying: direct-shuffled against the baseline loader w0"), std::string::npos)
      << sweep.text;
  auto recommend = capture(kBinary + " recommend --json --db " + db());
  ASSERT_EQ(recommend.exit_code, 0) << recommend.text;
  const auto doc = nlohmann::json::parse(recommend.text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << recommend.text;
  EXPECT_EQ(doc["recommended"]["label"], "direct-shuffled");
  EXPECT_EQ(doc["baseline"]["label"], "loader w0");
  EXPECT_TRUE(doc["verified"].get<bool>());
  EXPECT_EQ(doc["verified_by"].size(), 4u);  // 2 rounds x (baseline, recommendation)
  EXPECT_GT(doc["speedup_low"].get<double>(), 1.0);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM runs WHERE sweep_phase = 'verify'"), 4);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM sweeps WHERE status = 'done' AND recommended_point IS NOT NULL"), 1);
  auto runs = capture(kBinary + " runs --db " + db());
  EXPECT_NE(runs.text.find("1 verify"), std::string::npos) << runs.text;
}

TEST_F(Sweep, InterruptedSweepResumesWithoutReMeasuringDecidedPoints) {
  const std::string grid = " --device cpu --mode loader,loader-batched,direct-shuffled --num-workers 0 --hidden 32"
                           " --features 16 --epochs 3 --no-trace";
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + kBinary + " sweep" + grid + out() + " >/dev/null 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Interrupt once the first point has finished a run.
  for (int i = 0; i < 600 && query_int(db(), "SELECT count(*) FROM runs WHERE status = 'ok'") < 1; ++i)
    std::this_thread::sleep_for(100ms);
  ASSERT_GE(query_int(db(), "SELECT count(*) FROM runs WHERE status = 'ok'"), 1);
  ASSERT_EQ(kill(-pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 130);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM sweeps WHERE status = 'interrupted'"), 1);
  const int64_t ok_before = query_int(db(), "SELECT count(*) FROM runs WHERE status = 'ok'");
  const int64_t decided =
      query_int(db(), "SELECT count(*) FROM sweep_points WHERE state IN ('measured', 'pruned', 'failed')");

  auto resumed = capture(kBinary + " sweep --resume" + out());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.text;
  EXPECT_NE(resumed.text.find("resuming sweep 1"), std::string::npos) << resumed.text;
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM sweeps WHERE status = 'done'"), 1);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM sweep_points WHERE state = 'pending'"), 0);
  // The runs finished before the interruption still count; decided points got no new measure runs.
  EXPECT_GE(query_int(db(), "SELECT count(*) FROM runs WHERE status = 'ok'"), ok_before);
  if (decided > 0) {
    EXPECT_EQ(query_int(db(), "SELECT count(*) FROM runs r JOIN sweep_points p ON p.point = r.sweep_point "
                              "WHERE r.sweep_phase = 'measure' AND r.run_id > " + std::to_string(ok_before + 1) +
                              " AND p.state IN ('pruned', 'failed')"),
              0);
  }
}

// A budget too short for whole epochs: the baseline's sizing run, on its fewest batches an epoch,
// is kept as its first measurement; the other point is cut to what fits; epoch times are compared
// extended to whole epochs, and the answer is verified and says which points were estimated.
TEST_F(Sweep, ABudgetTooShortForWholeEpochsCutsThemAndStillVerifiesAnAnswer) {
  auto sweep = capture(kBinary + " sweep --device cpu --mode loader,direct-shuffled --num-workers 0 --hidden 32"
                                 " --features 16 --samples 1048576 --batch-size 4096 --no-trace --budget 12" + out());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.text;
  EXPECT_NE(sweep.text.find("epochs are measured on their first batches"), std::string::npos) << sweep.text;
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM runs WHERE sweep_phase = 'probe'"), 0);
  EXPECT_EQ(query_int(db(), "SELECT json_extract(config_json, '$.max_batches') FROM runs WHERE sweep_point = "
                            "'loader w0' ORDER BY run_id LIMIT 1"),
            2);
  EXPECT_EQ(query_int(db(), "SELECT json_extract(config_json, '$.warmup_batches') FROM runs WHERE sweep_point = "
                            "'loader w0' ORDER BY run_id LIMIT 1"),
            4);
  auto recommend = capture(kBinary + " recommend --json --db " + db());
  ASSERT_EQ(recommend.exit_code, 0) << recommend.text;
  const auto doc = nlohmann::json::parse(recommend.text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << recommend.text;
  EXPECT_EQ(doc["recommended"]["label"], "direct-shuffled") << sweep.text;
  EXPECT_TRUE(doc["verified"].get<bool>());
  EXPECT_NE(doc["headline"].get<std::string>().find("loader w0 on 2 of 256 batches"), std::string::npos)
      << doc["headline"];
  // The baseline's epoch is a whole one's estimate: far longer than the two batches it ran (what an
  // epoch pays once is not multiplied, so well under 128x).
  const double raw = static_cast<double>(query_int(db(), "SELECT CAST(json_extract(result_json, "
                                                         "'$.epoch_median_s') * 1e6 AS INTEGER) FROM runs WHERE "
                                                         "sweep_point = 'loader w0' ORDER BY run_id LIMIT 1")) / 1e6;
  EXPECT_GT(doc["baseline"]["median_s"].get<double>(), 4 * raw) << sweep.text;
}

TEST_F(Sweep, BadRequestsAreRefusedBeforeAnyRun) {
  for (const std::string& args : {std::string(" sweep --resume") + out(),  // nothing to resume
                                  " sweep" + kGrid + " --baseline nope" + out(),
                                  " sweep" + kGrid + " --budget -1" + out()}) {
    auto r = capture(kBinary + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("fix:"), std::string::npos) << r.text;
  }
  EXPECT_LE(query_int(db(), "SELECT count(*) FROM runs"), 0);  // no DB (-1) or an empty one
}

}  // namespace
}  // namespace ingero
