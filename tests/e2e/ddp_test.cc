// SPDX-License-Identifier: Apache-2.0
// A DDP job on this machine as a user runs it: two ranks (Gloo on the CPU) launched by
// torchrun, each with its own DataLoader worker, traced into one run; then explain per rank,
// and merge of two nodes' DBs into one file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/e2e/command.h"

namespace {

namespace fs = std::filesystem;
using ingero::testing::capture;
using ingero::testing::Output;

const std::string kBinary = INGERO_BENCH_BINARY;
constexpr int kBatchesPerRank = 4;  // 8192 samples / 2 ranks / 1024 per batch
constexpr int kEpochs = 2;

// The first column of the first row, as text ("" when NULL or absent).
std::string query_text(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::string v;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    if (const unsigned char* text = sqlite3_column_text(st, 0)) v = reinterpret_cast<const char*>(text);
  } else {
    ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

int64_t query_int(const std::string& db_path, const std::string& sql) {
  const std::string text = query_text(db_path, sql);
  return text.empty() ? -1 : std::stoll(text);
}

class Ddp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    ingero::testing::SharedSetup setup = ingero::testing::shared_setup("ddp-job", [](const std::string& dir) {
      return capture(kBinary + " --workload dataloader --device cpu --mode python --ranks 2 --num-workers 1"
                               " --samples 8192 --batch-size 1024 --features 16 --hidden 32 --epochs " +
                     std::to_string(kEpochs) + " --db " + dir + "/trace.db --out " + dir + "/runs");
    });
    dir_ = new std::string(setup.dir);
    job_ = new Output(setup.result);
    owned_ = setup.owned;
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr && owned_) fs::remove_all(*dir_);
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the eBPF tracer needs root (run the tests with sudo)";
    ASSERT_EQ(job_->exit_code, 0) << job_->text;
  }
  static std::string db() { return *dir_ + "/trace.db"; }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }

  static std::string* dir_;
  static Output* job_;
  static bool owned_;
};

std::string* Ddp::dir_ = nullptr;
Output* Ddp::job_ = nullptr;
bool Ddp::owned_ = false;

TEST_F(Ddp, EveryRanksProcessTreeIsTracedWithItsRankAndRole) {
  EXPECT_NE(job_->text.find("python w1 pf2 ranks2 train"), std::string::npos) << job_->text;
  const std::string db_path = db();
  EXPECT_EQ(query_int(db_path, "SELECT count(*) FROM runs WHERE status = 'ok'"), 1);
  for (int rank : {0, 1}) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(query_int(db_path, "SELECT count(*) FROM threads WHERE role = 'main' AND rank = " + r), 1) << rank;
    EXPECT_GE(query_int(db_path, "SELECT count(DISTINCT pid) FROM threads WHERE role = 'worker' AND rank = " + r), 1)
        << "rank " << rank << "'s DataLoader worker";
    // Its batch timings sit on its own main loop: every measured batch, no other.
    EXPECT_EQ(query_int(db_path,
                        "SELECT count(*) FROM events e JOIN ops o USING(op) JOIN threads t USING(run_id, tid) "
                        "WHERE o.name = 'batch_wait' AND t.role = 'main' AND t.rank = " + r),
              kBatchesPerRank * kEpochs)
        << rank;
  }
  // torchrun itself is traced but runs no loop.
  EXPECT_EQ(query_int(db_path, "SELECT count(*) FROM threads WHERE role = 'main' AND rank IS NULL"), 0);
  const auto result = nlohmann::json::parse(query_text(db_path, "SELECT result_json FROM runs"));
  ASSERT_EQ(result["ranks"].size(), 2u);
  EXPECT_EQ(result["world_size"], 2);
  EXPECT_EQ(result["samples_per_epoch"], 8192);
}

TEST_F(Ddp, ExplainGivesEachRankItsVerdictAndCountsCoresAgainstRanksTimesWorkers) {
  const Output out = capture(kBinary + " explain --db " + db() + " --json");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  const auto j = nlohmann::json::parse(out.text);
  ASSERT_TRUE(j["ranks"].is_object()) << out.text;
  ASSERT_EQ(j["ranks"]["ranks"].size(), 2u);
  for (const auto& rank : j["ranks"]["ranks"]) {
    EXPECT_EQ(rank["worker_processes"], kEpochs + 1) << "one worker forked per epoch, warm-up included";
    EXPECT_EQ(rank["metrics"]["batch_wait"]["count"], kBatchesPerRank * kEpochs);
    EXPECT_FALSE(rank["metrics"]["epoch_median_s"].is_null());
  }
  EXPECT_EQ(j["ranks"]["processes"], 4);
  const Output text = capture(kBinary + " explain --db " + db());
  EXPECT_NE(text.text.find("cores: 2 ranks × (1 workers + 1) = 4 processes"), std::string::npos) << text.text;
}

TEST_F(Ddp, MergeJoinsTwoNodesDbsAndRefusesBadInputWithoutWriting) {
  fs::copy_file(db(), path("node-b.db"), fs::copy_options::overwrite_existing);
  const std::string merged = path("merged.db");
  fs::remove(merged);
  Output out = capture(kBinary + " merge --out " + merged + " " + db() + " " + path("node-b.db"));
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_EQ(query_int(merged, "SELECT count(*) FROM runs"), 2);
  // Each run keeps the node that recorded it (this machine's name, written when it ran).
  EXPECT_EQ(query_text(merged, "SELECT node FROM runs WHERE run_id = 2"), query_text(db(), "SELECT node FROM runs"));
  EXPECT_EQ(query_int(merged, "SELECT count(*) FROM runs WHERE node IS NULL"), 0);
  EXPECT_EQ(query_int(merged, "SELECT count(*) FROM events WHERE run_id = 2"),
            query_int(db(), "SELECT count(*) FROM events"));
  // The merged copy of the job reads as the original did.
  const auto original = nlohmann::json::parse(capture(kBinary + " explain --db " + db() + " --json").text);
  const auto copy = nlohmann::json::parse(capture(kBinary + " explain --db " + merged + " --run 2 --json").text);
  EXPECT_EQ(copy["metrics"]["epoch_median_s"], original["metrics"]["epoch_median_s"]);
  EXPECT_EQ(copy["ranks"]["ranks"].size(), 2u);

  for (const std::string& bad : {kBinary + " merge --out " + merged + " " + db(),   // the output exists
                                 kBinary + " merge --out " + path("m2.db") + " " + path("missing.db"),
                                 kBinary + " merge --out " + path("m3.db") + " " + db() + " " + db()}) {
    const Output refused = capture(bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << "\n" << refused.text;
    EXPECT_NE(refused.text.find("fix:"), std::string::npos) << refused.text;
  }
  EXPECT_FALSE(fs::exists(path("m2.db")));
  EXPECT_FALSE(fs::exists(path("m3.db")));
  for (const auto& entry : fs::directory_iterator(*dir_))
    EXPECT_EQ(entry.path().string().find(".partial-"), std::string::npos) << entry.path();
}

TEST(DdpInput, RanksOutsideThePythonModeAreBadInput) {
  const Output out = capture(kBinary + " --workload dataloader --device cpu --mode loader --ranks 2 --no-trace"
                                       " --samples 8192 --batch-size 1024 --db /tmp/ingero-ddp-never.db");
  EXPECT_EQ(out.exit_code, 2) << out.text;
  EXPECT_NE(out.text.find("python mode only"), std::string::npos) << out.text;
  EXPECT_FALSE(fs::exists("/tmp/ingero-ddp-never.db"));
}

}  // namespace
