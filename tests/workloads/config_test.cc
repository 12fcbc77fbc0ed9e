// SPDX-License-Identifier: Apache-2.0
// Argument rules (PyTorch's plus our own).
#include <gtest/gtest.h>

#include "workloads/config.h"
#include "workloads/preparation_report.h"
#include "workloads/result.h"

namespace ingero::workloads {
namespace {

WorkloadConfig valid() {
  WorkloadConfig c;
  c.samples = 1000;
  c.batch_size = 100;
  return c;
}

void expect_bad_input(const WorkloadConfig& c, const std::string& mentions) {
  Status s = validate(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().exit_code, kExitBadInput);
  EXPECT_NE(s.error().message.find(mentions), std::string::npos) << s.error().message;
}

TEST(Config, ValidDefaults) { EXPECT_TRUE(validate(valid()).ok()); }

TEST(Config, RejectsBadInputNamingTheFlag) {
  auto c = valid();
  c.batch_size = 0;
  expect_bad_input(c, "--batch-size");
  c = valid();
  c.num_workers = -1;
  expect_bad_input(c, "--num-workers");
  c = valid();
  c.samples = 10;
  expect_bad_input(c, "smaller than --batch-size");
  c = valid();
  c.mode = Mode::loader;
  c.prefetch_factor = 4;
  expect_bad_input(c, "--prefetch-factor needs --num-workers");
  c = valid();
  c.mode = Mode::loader;
  c.persistent_workers = true;
  expect_bad_input(c, "--persistent-workers needs");
  c = valid();
  c.device = "tpu";
  expect_bad_input(c, "unknown device");
}

TEST(Config, UnknownModeListsTheKnownOnes) {
  auto m = parse_mode("fast");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().exit_code, kExitBadInput);
  EXPECT_NE(m.error().hint.find("loader-batched"), std::string::npos);
}

TEST(Config, JsonRoundTrip) {
  auto c = valid();
  c.mode = Mode::loader_batched;
  c.num_workers = 4;
  c.prefetch_factor = 12;
  c.pin_memory = true;
  auto back = config_from_json(to_json(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(to_json(*back), to_json(c));
  EXPECT_EQ(back->label(), "loader-batched w4 pf12 pin");
}

TEST(Config, BatchesPerEpochHonoursDropLast) {
  auto c = valid();
  c.samples = 1050;
  EXPECT_EQ(c.batches_per_epoch(), 11);
  c.drop_last = true;
  EXPECT_EQ(c.batches_per_epoch(), 10);
}

// A bounded run's warm-up epochs are long enough for the compute path to settle, and the
// record says how long they were.
TEST(Config, BoundedWarmUpEpochsHoldAtLeastTheSettledBatches) {
  auto c = valid();
  c.samples = 1050;
  c.warmup_epochs = 1;
  c.max_batches = 2;
  EXPECT_EQ(c.batches_in_epoch(0), kSettledWarmupBatches);
  EXPECT_EQ(c.batches_in_epoch(1), 2);
  EXPECT_EQ(to_json(c)["warmup_batches"], kSettledWarmupBatches);
  c.max_batches = 6;
  EXPECT_EQ(c.batches_in_epoch(0), 6);
  c.warmup_batches = 20;
  EXPECT_EQ(c.batches_in_epoch(0), 11);  // never past the whole epoch
  c.max_batches = 0;
  EXPECT_EQ(c.batches_in_epoch(0), 11);  // whole epochs: warm-up whole too
  EXPECT_FALSE(to_json(c).contains("warmup_batches"));
}

TEST(Config, RanksAreForThePythonModeAndEachRankNeedsABatch) {
  auto c = valid();
  c.ranks = 0;
  expect_bad_input(c, "--ranks must be >= 1");
  c = valid();
  c.mode = Mode::loader;
  c.ranks = 2;
  expect_bad_input(c, "python mode only");
  c = valid();
  c.mode = Mode::python;
  c.ranks = 20;  // 1000 samples / 20 ranks = 50 < a batch of 100
  expect_bad_input(c, "split over 20 ranks");
  c.ranks = 2;
  c.train = true;
  EXPECT_TRUE(validate(c).ok());
  EXPECT_EQ(c.label(), "python w0 ranks2 train");
  auto back = config_from_json(to_json(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ranks, 2);
  nlohmann::json older = to_json(c);
  older.erase("ranks");  // records written before --ranks existed
  EXPECT_EQ(config_from_json(older)->ranks, 1);
}

nlohmann::json rank_record(int rank, std::vector<double> epochs, double wait_s, const std::string& status = "ok") {
  return {{"schema", "ingero-bench/result"}, {"version", kResultVersion}, {"label", "python w1 pf2 ranks2 train"},
          {"status", status}, {"rank", rank}, {"pid", 1000 + rank}, {"main_tid", 1000 + rank},
          {"epoch_seconds", epochs}, {"samples_per_epoch", 500}, {"h2d_bytes_per_epoch", 0},
          {"wait", {{"total_s", wait_s}}}, {"notes", {"same note"}},
          {"batches", {{{"epoch", 0}, {"index", 0}, {"wait_start_ns", 10}, {"wait_ns", 1000}, {"compute_ns", 2000}}}},
          {"workers", {{{"id", 0}, {"pid", 2000 + rank}, {"ready_ns", 5}}}}};
}

TEST(RankRecords, TheJobTakesItsSlowestRankPerEpochAndKeepsEachRank) {
  const nlohmann::json merged =
      merge_rank_records({rank_record(0, {1.0, 2.0}, 0.3), rank_record(1, {1.5, 1.0}, 1.5)});
  EXPECT_EQ(merged["status"], "ok");
  EXPECT_EQ(merged["epoch_seconds"], nlohmann::json({1.5, 2.0}));
  EXPECT_DOUBLE_EQ(merged["epoch_median_s"].get<double>(), 1.75);
  EXPECT_EQ(merged["samples_per_epoch"], 1000);
  EXPECT_DOUBLE_EQ(merged["wait_fraction"].get<double>(), 1.8 / 5.5);
  EXPECT_EQ(merged["notes"].size(), 1u);
  EXPECT_EQ(merged["world_size"], 2);
  ASSERT_EQ(merged["ranks"].size(), 2u);
  EXPECT_EQ(merged["ranks"][1]["pid"], 1001);
  EXPECT_TRUE(merged["batches"].empty());

  // Each rank's batches are its own main loop's: the harness stores them on that thread.
  auto summary = summary_from_json(merged);
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  ASSERT_EQ(summary->loops.size(), 2u);
  EXPECT_EQ(summary->loops[1].rank, 1);
  EXPECT_EQ(summary->loops[1].main_tid, 1001);
  EXPECT_EQ(summary->loops[1].batches.size(), 1u);
  EXPECT_EQ(summary->loops[1].workers.at(0).pid, 2001);
}

TEST(RankRecords, AMissingOrFailedRankFailsTheJobAndSaysWhich) {
  const nlohmann::json missing = merge_rank_records({rank_record(0, {1.0}, 0.1), std::nullopt});
  EXPECT_EQ(missing["status"], "failed");
  EXPECT_NE(missing["error"].get<std::string>().find("rank 1 wrote no record"), std::string::npos);
  EXPECT_TRUE(missing["epoch_seconds"].empty());

  nlohmann::json failed = rank_record(1, {}, 0, "failed");
  failed["error"] = "Connection reset by peer";
  const nlohmann::json merged = merge_rank_records({rank_record(0, {1.0}, 0.1, "interrupted"), failed});
  EXPECT_EQ(merged["status"], "failed");
  EXPECT_NE(merged["error"].get<std::string>().find("rank 1: Connection reset"), std::string::npos);
}

// The preparation report reads back as written, a failure with its fix; anything else (not JSON, a
// field of another type) is no report rather than a throw.
TEST(PreparationReport, ReadsBackAsWrittenAndADamagedOneIsNone) {
  PreparationReport written;
  written.key = "raw-1024x16";
  written.dir = "/cache/raw-1024x16";
  written.written_now = true;
  written.write_s = 1.5;
  written.device_name = "vda";
  written.device_maj_min = "254:0";
  written.device_seq_read_mb_s = 820.5;
  written.device_how = "O_DIRECT reads";
  auto read = preparation_report_from_text(written.to_json().dump());
  ASSERT_TRUE(read);
  EXPECT_FALSE(read->error);
  EXPECT_EQ(read->key, written.key);
  EXPECT_EQ(read->dir, written.dir);
  EXPECT_TRUE(read->written_now);
  EXPECT_DOUBLE_EQ(read->write_s, 1.5);
  EXPECT_EQ(read->device_name, "vda");
  EXPECT_EQ(read->device_maj_min, "254:0");
  EXPECT_EQ(read->device_seq_read_mb_s, 820.5);
  EXPECT_EQ(read->device_how, "O_DIRECT reads");

  written.device_name.clear();  // tmpfs: no block device, no rate
  written.device_seq_read_mb_s.reset();
  read = preparation_report_from_text(written.to_json().dump());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->device_name, "");
  EXPECT_FALSE(read->device_seq_read_mb_s);

  PreparationReport failed;
  failed.error = "cannot write /cache: read-only file system";
  failed.hint = "pass --dataset-dir on a writable disk";
  read = preparation_report_from_text(failed.to_json().dump());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->error, failed.error);
  EXPECT_EQ(read->hint, failed.hint);

  for (const char* damaged : {"", "not json", "[1]", R"({"key": 3})", R"({"key": "k", "written_now": "yes"})",
                              R"({"key": "k", "device": {"seq_read_mb_s": "fast"}})", R"({"error": 2})"})
    EXPECT_FALSE(preparation_report_from_text(damaged)) << damaged;
}

}  // namespace
}  // namespace ingero::workloads

