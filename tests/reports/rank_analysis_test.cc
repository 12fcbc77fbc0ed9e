// SPDX-License-Identifier: Apache-2.0
// A DDP job of two ranks, rank 1 with a slow input pipeline: each rank gets its own verdict
// and cause from its own main loop and workers, rank 1 is named the straggler, rank 0's extra
// step time is what it waited for rank 1, and the cores advice comes with its command.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/commands.h"
#include "reports/run_analysis.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

constexpr int64_t kLauncher = 50;  // torchrun: no rank, no main loop
constexpr int64_t kRank0 = 300, kRank0Worker = 301, kRank1 = 400, kRank1Worker = 401;
constexpr int kBatches = 50;
constexpr int64_t kPeriod = 20 * kMs;

std::string rank_record(int rank, int64_t pid, double wait_fraction) {
  return nlohmann::json({{"rank", rank}, {"pid", pid}, {"main_tid", pid}, {"status", "ok"},
                         {"epoch_seconds", {1.0}}, {"epoch_median_s", 1.0}, {"wait_fraction", wait_fraction}})
      .dump();
}

// Both ranks step every 20 ms: rank 1 waits 10 ms for each batch while its worker computes,
// then steps for 10 ms; rank 0 gets its batch at once and spends 19.8 ms in the step, most of
// it in the all-reduce waiting for rank 1.
std::string write_ddp_job(const std::string& name) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  RunSpec spec;
  spec.label = "python w1 pf2 ranks2 train";
  spec.config_json = R"({"mode":"python","num_workers":1,"prefetch_factor":2,"pin_memory":false,)"
                     R"("persistent_workers":false,"shuffle":true,"cpus":0,"train":true,"ranks":2,)"
                     R"("samples":100000,"features":100,"batch_size":1000,"device":"cpu"})";
  spec.machine_json = R"({"cpu_count": 2, "cpu_model": "test", "kernel": "6.1", "gpu": null})";
  const nlohmann::json ranks = nlohmann::json::array(
      {nlohmann::json::parse(rank_record(0, kRank0, 0.01)), nlohmann::json::parse(rank_record(1, kRank1, 0.5))});
  spec.result_json = nlohmann::json({{"epoch_seconds", {1.0}}, {"epoch_median_s", 1.0}, {"wait_fraction", 0.255},
                                     {"ranks", ranks}})
                         .dump();
  spec.start_ns = 0;
  spec.end_ns = kBatches * kPeriod + 10 * kMs;
  spec.root_pid = kLauncher;
  const int64_t run = db->add_run(spec);
  const int64_t end = *spec.end_ns;
  db->add_thread(run, {kLauncher, kLauncher, 1, "python3", "other", 0, end});
  db->add_thread(run, {kRank0, kRank0, kLauncher, "python3", "main", 0, end, 0});
  db->add_thread(run, {kRank0Worker, kRank0Worker, kRank0, "pt_data_worker", "worker", 0, end, 0});
  db->add_thread(run, {kRank1, kRank1, kLauncher, "python3", "main", 0, end, 1});
  db->add_thread(run, {kRank1Worker, kRank1Worker, kRank1, "pt_data_worker", "worker", 0, end, 1});
  db->begin();
  for (int i = 0; i < kBatches; ++i) {
    const int64_t t = i * kPeriod;
    db->add_event(run, "batch_wait", t, 10 * kMs, kRank1, kRank1, std::nullopt, i);
    db->add_event(run, "batch_compute", t + 10 * kMs, 10 * kMs, kRank1, kRank1, std::nullopt, i);
    db->add_event(run, "batch_wait", t, 200 * kUs, kRank0, kRank0, std::nullopt, i);
    db->add_event(run, "batch_compute", t + 200 * kUs, kPeriod - 200 * kUs, kRank0, kRank0, std::nullopt, i);
    // Rank 1's main loop sleeps while it waits; rank 0's worker idles (it is ahead).
    db->add_event(run, "offcpu_blocked", t, 10 * kMs, kRank1, kRank1);
    db->add_event(run, "offcpu_blocked", t, 15 * kMs, kRank0Worker, kRank0Worker);
  }
  db->commit();
  return path;
}

RunAnalysis analyze_path(const std::string& path) {
  auto trace = TraceFile::open(path);
  EXPECT_TRUE(trace.ok()) << trace.error().message;
  auto run = (*trace)->run(std::nullopt);
  EXPECT_TRUE(run.ok());
  auto analysis = analyze_run(**trace, *run, std::nullopt, WaitSelection::slow_or_input_bound);
  EXPECT_TRUE(analysis.ok()) << analysis.error().message;
  return std::move(analysis.value());
}

TEST(RankAnalysis, EachRankHasItsOwnVerdictAndTheStragglerIsNamed) {
  const RunAnalysis a = analyze_path(write_ddp_job("ddp"));
  ASSERT_TRUE(a.ranks.has_value());
  ASSERT_EQ(a.ranks->ranks.size(), 2u);
  const RankRow& r0 = a.ranks->ranks[0];
  const RankRow& r1 = a.ranks->ranks[1];
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.pid, kRank0);
  EXPECT_EQ(r0.worker_processes, 1);
  EXPECT_EQ(r1.pid, kRank1);
  // Each rank's own record: 1 % and 50 % waiting.
  ASSERT_TRUE(r0.metrics.wait_fraction && r1.metrics.wait_fraction);
  EXPECT_DOUBLE_EQ(*r0.metrics.wait_fraction, 0.01);
  EXPECT_DOUBLE_EQ(*r1.metrics.wait_fraction, 0.5);
  EXPECT_EQ(r0.metrics.verdict, InputBound::not_input_bound);
  EXPECT_EQ(r1.metrics.verdict, InputBound::highly);
  EXPECT_EQ(r1.metrics.batch_wait.count, kBatches);  // its own waits only
  EXPECT_EQ(r1.metrics.batch_wait.total_ns, kBatches * 10 * kMs);

  ASSERT_TRUE(a.ranks->straggler.has_value());
  EXPECT_EQ(*a.ranks->straggler, 1);
  EXPECT_EQ(r1.waits_for_straggler_ns, 0);
  EXPECT_EQ(r0.waits_for_straggler_ns, kBatches * (kPeriod - 200 * kUs - 10 * kMs));

  // Rank 1's waits are explained by its own worker, never by rank 0's (which slept).
  ASSERT_TRUE(r1.top_chain.has_value());
  EXPECT_EQ(r1.top_chain->victim, "batch_wait");
  EXPECT_EQ(r1.top_chain->cause.code(), "worker.on_cpu");
  EXPECT_EQ(r1.top_chain->evidence.threads, 1);
  EXPECT_EQ(r1.top_chain->lost_ns, kBatches * 10 * kMs);
  for (const auto& chain : a.chains.chains)
    if (chain.cause.code() == "worker.blocked") ADD_FAILURE() << "rank 0's idle worker blamed: " << chain.summary;

  // 2 ranks × (1 worker + 1) = 4 processes on 2 cores: cores // ranks − 1 = 0.
  ASSERT_TRUE(a.ranks->cores.has_value());
  EXPECT_EQ(*a.ranks->cores, 2);
  EXPECT_EQ(a.ranks->processes, 4);
  ASSERT_TRUE(a.ranks->suggested_workers.has_value());
  EXPECT_EQ(*a.ranks->suggested_workers, 0);
}

TEST(RankAnalysis, ExplainShowsRanksAndTheCommandThatMeasuresTheCoresAdvice) {
  const std::string path = write_ddp_job("ddp-explain");
  ExplainOptions options;
  options.db = path;
  std::ostringstream text;
  ASSERT_TRUE(explain(options, text).ok());
  EXPECT_NE(text.str().find("Ranks (DDP: 2 ranks"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("straggler: rank 1 waited 500 ms"), std::string::npos) << text.str();
  options.json = true;
  std::ostringstream json_out;
  ASSERT_TRUE(explain(options, json_out).ok());
  const auto j = nlohmann::json::parse(json_out.str());
  ASSERT_TRUE(j["ranks"].is_object());
  EXPECT_EQ(j["ranks"]["straggler"], 1);
  EXPECT_EQ(j["ranks"]["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"]["suggestion"]["measured"], false);
  const std::string command = j["ranks"]["suggestion"]["command"];
  EXPECT_NE(command.find("--mode python --num-workers 1,0"), std::string::npos) << command;
  EXPECT_NE(command.find("--ranks 2"), std::string::npos) << command;
  EXPECT_EQ(command.find("--train"), std::string::npos) << "DDP trains by default: " << command;
}

TEST(RankAnalysis, ASingleProcessRunHasNoRankSection) {
  const std::string path = temp_db_path("no-ranks");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 100 * kMs);
    db->add_event(run, "batch_wait", 0, 5 * kMs, kMain, kMain, std::nullopt, 0);
  }
  EXPECT_FALSE(analyze_path(path).ranks.has_value());
}

}  // namespace
}  // namespace ingero::reports::testing
