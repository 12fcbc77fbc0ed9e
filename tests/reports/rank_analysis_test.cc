// SPDX-License-Identifier: Apache-2.0
// A DDP job of two ranks, rank 1 with a slow input pipeline: each rank gets its own verdict
// and cause from its own main loop and workers, rank 1 is named the straggler, rank 0's extra
// step time is what it waited for rank 1, and the cores advice comes with its command.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/render/commands.h"
#include "reports/render/report_render.h"
#include "reports/analysis/run_analysis.h"
#include "tests/reports/analyzed.h"
#include "tests/reports/ddp_scenario.h"

namespace ingero::reports::testing {
namespace {

constexpr int64_t kRank0 = 300, kRank1 = 400;
constexpr int kBatches = kDdpBatches;
constexpr int64_t kPeriod = kDdpPeriod;

// Both ranks step every 20 ms: rank 1 waits 10 ms for each batch while its worker computes,
// then steps for 10 ms; rank 0 gets its batch at once and spends 19.8 ms in the step, most of
// it in the all-reduce waiting for rank 1.
DdpNode two_ranks() { return DdpNode{std::nullopt, 1.7e9, 0, {{0, kRank0, 200 * kUs}, {1, kRank1, 10 * kMs}}, {}}; }

std::string write_ddp_job(const std::string& name) { return write_ddp_node(name, two_ranks()).path; }

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
    if (chain.cause.code() == "worker.blocked") ADD_FAILURE() << "rank 0's idle worker blamed: " << chain.cause.code();

  // 2 ranks × (1 worker + 1) = 4 processes on 2 cores: cores // ranks − 1 = 0.
  ASSERT_EQ(a.ranks->nodes.size(), 1u);
  const NodeCores& node = a.ranks->nodes[0];
  ASSERT_TRUE(node.cores.has_value());
  EXPECT_EQ(*node.cores, 2);
  EXPECT_EQ(node.ranks, 2);
  EXPECT_EQ(node.processes, 4);
  ASSERT_TRUE(node.suggested_workers.has_value());
  EXPECT_EQ(*node.suggested_workers, 0);
  EXPECT_FALSE(a.ranks->job.has_value());
}

TEST(RankAnalysis, ExplainShowsRanksAndTheCommandThatMeasuresTheCoresAdvice) {
  const std::string path = write_ddp_job("ddp-explain");
  ExplainOptions options;
  options.db = path;
  std::ostringstream text;
  ASSERT_TRUE(explain(options, text).ok());
  EXPECT_NE(text.str().find("Ranks (DDP: 2 ranks"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("straggler: rank 1 waited 500 ms"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("NCCL calls per rank"), std::string::npos) << "no NCCL call, no table: " << text.str();
  options.json = true;
  std::ostringstream json_out;
  ASSERT_TRUE(explain(options, json_out).ok());
  const auto j = nlohmann::json::parse(json_out.str());
  ASSERT_TRUE(j["ranks"].is_object());
  EXPECT_EQ(j["ranks"]["straggler"], 1);
  EXPECT_EQ(j["ranks"]["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"]["ranks"][0]["nccl"], nlohmann::json::array());
  EXPECT_EQ(j["ranks"]["job"], nullptr);
  EXPECT_EQ(j["ranks"]["nodes"].size(), 1u);
  EXPECT_EQ(j["ranks"]["cores"], 2);
  EXPECT_EQ(j["ranks"]["suggestion"]["measured"], false);
  const std::string command = j["ranks"]["suggestion"]["command"];
  EXPECT_NE(command.find("--mode python --num-workers 1,0"), std::string::npos) << command;
  EXPECT_NE(command.find("--ranks 2"), std::string::npos) << command;
  EXPECT_EQ(command.find("--train"), std::string::npos) << "DDP trains by default: " << command;
}

// What the tracer stores of NCCL: every call as an event (NCCL calls are not hot calls, so
// all are stored) and counted per thread in call_stats. Rank 0 all-reduces from its main
// thread and from its process's autograd thread, 9 and 11 ms in turn (it waits there for rank
// 1); rank 1 all-reduces in 200 µs. Each rank broadcasts once at start-up.
constexpr int64_t kAllReduceBytes = 4'000'000;
constexpr int64_t kBroadcastBytes = 1'000'000;

std::string write_ddp_job_with_nccl(const std::string& name) {
  DdpFixture job = write_ddp_node(name, two_ranks());
  TraceFixture& db = *job.db;
  const int64_t autograd = kRank0 + 2, end = kBatches * kPeriod + 10 * kMs;
  db.add_thread(job.run, {autograd, kRank0, std::nullopt, "pt_autograd_0", "other", 0, end, 0, std::nullopt});
  db.begin();
  for (int64_t pid : {kRank0, kRank1})
    db.add_event(job.run, "ncclBroadcast", 100 * kUs, 2 * kMs, pid, pid, kBroadcastBytes);
  for (int i = 0; i < kBatches; ++i) {
    const int64_t t = i * kPeriod;
    const bool even = i % 2 == 0;
    db.add_event(job.run, "ncclAllReduce", t + 8 * kMs, even ? 9 * kMs : 11 * kMs, kRank0, even ? kRank0 : autograd,
                 kAllReduceBytes);
    db.add_event(job.run, "ncclAllReduce", t + 19 * kMs, 200 * kUs, kRank1, kRank1, kAllReduceBytes);
  }
  db.commit();
  return job.path;
}

void expect_call(const NcclCallRow& row, const std::string& op, int64_t calls, int64_t bytes, int64_t total_ns,
                 int64_t mean_ns, int64_t max_ns) {
  EXPECT_EQ(row.op, op);
  EXPECT_EQ(row.calls, calls) << op;
  EXPECT_EQ(row.errors, 0) << op;
  EXPECT_EQ(row.bytes, bytes) << op;
  EXPECT_EQ(row.total_ns, total_ns) << op;
  EXPECT_EQ(row.mean_ns, mean_ns) << op;
  EXPECT_EQ(row.max_ns, max_ns) << op;
}

std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The Markdown and HTML reports carry the same Ranks section as explain: a row per rank with its
// verdict, the straggler and the cores advice.
TEST(RankAnalysis, ReportsShowTheRanksOfTheDiagnosedRun) {
  const std::string path = write_ddp_job("ddp-report");
  for (const std::string format : {"md", "html"}) {
    ReportOptions options;
    options.db = path;
    options.format = format;
    options.out = path + "." + format;
    ASSERT_TRUE(write_report(options).ok());
    const std::string text = read_text(options.out);
    std::remove(options.out.c_str());
    EXPECT_NE(text.find("Ranks: 2 DDP ranks"), std::string::npos) << format;
    EXPECT_NE(text.find("straggler: rank 1 waited 500 ms"), std::string::npos) << format << "\n" << text;
    EXPECT_NE(text.find("HIGHLY input-bound"), std::string::npos) << format;
    EXPECT_NE(text.find("cores: 2 ranks × (1 workers + 1) = 4 processes on 2 cores"), std::string::npos) << format;
    EXPECT_EQ(text.find("NCCL calls per rank"), std::string::npos) << "no NCCL call, no table (" << format << ")";
  }
}

TEST(RankAnalysis, EachRankHasItsOwnNcclCalls) {
  const RunAnalysis a = analyze_path(write_ddp_job_with_nccl("ddp-nccl"));
  ASSERT_TRUE(a.ranks.has_value());
  ASSERT_TRUE(a.ranks->any_nccl());
  const auto& r0 = a.ranks->ranks[0].nccl;
  const auto& r1 = a.ranks->ranks[1].nccl;
  ASSERT_EQ(r0.size(), 2u);  // most total time first
  expect_call(r0[0], "ncclAllReduce", kBatches, kBatches * kAllReduceBytes, 25 * 9 * kMs + 25 * 11 * kMs, 10 * kMs,
              11 * kMs);
  expect_call(r0[1], "ncclBroadcast", 1, kBroadcastBytes, 2 * kMs, 2 * kMs, 2 * kMs);
  ASSERT_EQ(r1.size(), 2u);
  expect_call(r1[0], "ncclAllReduce", kBatches, kBatches * kAllReduceBytes, kBatches * 200 * kUs, 200 * kUs, 200 * kUs);
  expect_call(r1[1], "ncclBroadcast", 1, kBroadcastBytes, 2 * kMs, 2 * kMs, 2 * kMs);

  ExplainOptions options;
  options.db = write_ddp_job_with_nccl("ddp-nccl-explain");
  std::ostringstream text;
  ASSERT_TRUE(explain(options, text).ok());
  const std::string t = collapse_spaces(text.str());
  EXPECT_NE(t.find("NCCL calls per rank"), std::string::npos) << text.str();
  EXPECT_NE(t.find("\nrank 0 ncclAllReduce 50 0 200 MB 500 ms 10 ms 11 ms\n"), std::string::npos) << text.str();
  EXPECT_NE(t.find("\nrank 1 ncclAllReduce 50 0 200 MB 10 ms 200 µs 200 µs\n"), std::string::npos) << text.str();
  EXPECT_NE(t.find("\nrank 1 ncclBroadcast 1 0 1 MB 2 ms 2 ms 2 ms\n"), std::string::npos) << text.str();

  options.json = true;
  std::ostringstream json_out;
  ASSERT_TRUE(explain(options, json_out).ok());
  const auto j = nlohmann::json::parse(json_out.str());
  const auto& calls = j["ranks"]["ranks"][0]["nccl"];
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], nlohmann::json({{"function", "ncclAllReduce"}, {"calls", 50}, {"estimated", false}, {"errors", 0},
                                      {"bytes", 200'000'000}, {"total_ns", 500 * kMs}, {"mean_ns", 10 * kMs},
                                      {"max_ns", 11 * kMs}}));
  EXPECT_EQ(j["ranks"]["ranks"][1]["nccl"][0]["mean_ns"], 200 * kUs);
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
