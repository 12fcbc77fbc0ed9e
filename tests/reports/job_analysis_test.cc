// SPDX-License-Identifier: Apache-2.0
// A DDP job of four ranks on two nodes, each node tracing its own two ranks into its own DB,
// merged as `ingero-bench merge` merges them: rank 3 on node B waits for its input, so ranks
// 0-2 (on both nodes) wait for it in the all-reduce. Explain of either node's run analyses the
// four ranks as one job; runs that do not overlap in time, repeat a rank or disagree on the
// world size stay apart.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/render/commands.h"
#include "reports/analysis/jobs.h"
#include "reports/text/rank_text.h"
#include "reports/render/report_json.h"
#include "tests/reports/ddp_scenario.h"
#include "tracer/trace_db.h"

namespace ingero::reports::testing {
namespace {

constexpr double kStart = 1.7e9;
constexpr double kNodeBLater = 0.25;  // node B's run began 250 ms after node A's (wall clock)
constexpr int64_t kFast = 200 * kUs, kSlow = 10 * kMs;
// Ranks 0-2 step 19.8 ms and rank 3 10 ms of each 20 ms period: each waits 9.8 ms for rank 3.
constexpr int64_t kWaitForRank3 = kDdpBatches * ((kDdpPeriod - kFast) - (kDdpPeriod - kSlow));

DdpNode node_a() { return {"node-a", kStart, 0, {{0, 300, kFast}, {1, 400, kFast}}, 4}; }
// Another machine: its own monotonic clock, the same pids.
DdpNode node_b() {
  return {"node-b", kStart + kNodeBLater, 7'000 * 1'000 * kMs, {{2, 300, kFast}, {3, 400, kSlow}}, 4};
}

// `ingero-bench merge --out OUT A B` (harness/merge_command.cc): each input opened as a
// reader opens it, copied with TraceDb::import_from under the node named by its file.
std::string merge(const std::string& name, const std::vector<std::string>& inputs) {
  const std::string out = temp_db_path(name);
  std::remove(out.c_str());
  auto db = tracer::TraceDb::open(out);
  EXPECT_TRUE(db.ok()) << db.error().message;
  for (const std::string& input : inputs) {
    auto trace = TraceFile::open(input);
    EXPECT_TRUE(trace.ok()) << trace.error().message;
    auto copied = db->import_from((*trace)->db(), std::filesystem::path(input).stem().string());
    EXPECT_TRUE(copied.ok()) << copied.error().message;
  }
  return out;
}

std::string merged_job(const std::string& name, const DdpNode& a, const DdpNode& b) {
  return merge(name, {write_ddp_node(name + "-a", a).path, write_ddp_node(name + "-b", b).path});
}

ExplainReport explain_run(const std::string& path, int64_t run) {
  auto trace = TraceFile::open(path);
  EXPECT_TRUE(trace.ok()) << trace.error().message;
  ExplainOptions options;
  options.db = path;
  options.run = run;
  auto report = make_explain_report(**trace, options);
  EXPECT_TRUE(report.ok()) << report.error().message;
  return std::move(report.value());
}

std::string explain_text(const std::string& path, int64_t run, bool json) {
  ExplainOptions options;
  options.db = path;
  options.run = run;
  options.json = json;
  std::ostringstream out;
  EXPECT_TRUE(explain(options, out).ok());
  return out.str();
}

TEST(JobAnalysis, TheRanksOfBothNodesAreOneJobWithOneStraggler) {
  const std::string path = merged_job("job", node_a(), node_b());
  for (int64_t run : {1, 2}) {
    SCOPED_TRACE(fmt::format("explain --run {}", run));
    const ExplainReport report = explain_run(path, run);
    ASSERT_TRUE(report.ranks.has_value());
    const RankAnalysis& r = *report.ranks;
    ASSERT_EQ(r.ranks.size(), 4u);
    for (int rank = 0; rank < 4; ++rank) {
      const RankRow& row = r.ranks[rank];
      EXPECT_EQ(row.rank, rank);
      EXPECT_EQ(row.node, rank < 2 ? "node-a" : "node-b");
      EXPECT_EQ(row.run_id, rank < 2 ? 1 : 2);
      EXPECT_EQ(row.pid, rank % 2 == 0 ? 300 : 400);  // each node's own pids
      EXPECT_EQ(row.metrics.batch_wait.count, kDdpBatches);  // its own main loop only
      EXPECT_EQ(row.metrics.verdict, rank == 3 ? InputBound::highly : InputBound::not_input_bound);
      EXPECT_EQ(row.waits_for_straggler_ns, rank == 3 ? 0 : kWaitForRank3);
    }
    ASSERT_TRUE(r.straggler.has_value());
    EXPECT_EQ(*r.straggler, 3);
    EXPECT_EQ(r.ranks[3].metrics.batch_wait.total_ns, kDdpBatches * kSlow);
    ASSERT_TRUE(r.ranks[3].top_chain.has_value());
    EXPECT_EQ(r.ranks[3].top_chain->cause.code(), "worker.on_cpu");

    // Each node's cores against its own ranks, the explained run's node first.
    ASSERT_EQ(r.nodes.size(), 2u);
    EXPECT_EQ(r.nodes[0].run_id, run);
    EXPECT_EQ(r.nodes[0].node, run == 1 ? "node-a" : "node-b");
    EXPECT_EQ(r.nodes[1].node, run == 1 ? "node-b" : "node-a");
    for (const NodeCores& n : r.nodes) {
      EXPECT_EQ(n.ranks, 2);
      EXPECT_EQ(n.cores, 2);
      EXPECT_EQ(n.processes, 4);
      EXPECT_EQ(n.suggested_workers, 0);
    }

    ASSERT_TRUE(r.job.has_value());
    ASSERT_EQ(r.job->members.size(), 2u);
    EXPECT_EQ(r.job->members[0].run_id, 1);
    EXPECT_EQ(r.job->members[0].ranks, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(r.job->members[1].run_id, 2);
    EXPECT_EQ(r.job->members[1].ranks, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(r.job->world_size, 4);
    EXPECT_TRUE(r.job->missing_ranks.empty());
    const double length = static_cast<double>(kDdpBatches * kDdpPeriod + 10 * kMs) / 1e9;
    EXPECT_DOUBLE_EQ(r.job->overlap_start_unix, kStart + kNodeBLater);
    EXPECT_NEAR(r.job->overlap_end_unix - r.job->overlap_start_unix, length - kNodeBLater, 1e-6);
  }
}

TEST(JobAnalysis, ExplainNamesTheNodesAndTheRunsOfTheJob) {
  const std::string path = merged_job("job-explain", node_a(), node_b());
  const std::string text = explain_text(path, 2, false);
  for (const char* expected :
       {"Ranks (DDP: 4 ranks on 2 nodes, each with its own DataLoader)",
        "job: runs 1 (node-a, ranks 0-1) and 2 (node-b, ranks 2-3), world size 4: one job",
        "straggler: rank 3 (node-b) waited 500 ms for its input (50.0 % of its time); the other ranks spent up to "
        "490 ms more",
        "rank 3 (node-b) top cause:",
        "cores on node-b (run 2): 2 ranks × (1 workers + 1) = 4 processes on 2 cores",
        "cores on node-a (run 1): 2 ranks × (1 workers + 1) = 4 processes on 2 cores"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;

  const auto j = nlohmann::json::parse(explain_text(path, 2, true));
  const auto& ranks = j["ranks"];
  EXPECT_EQ(ranks["straggler"], 3);
  ASSERT_EQ(ranks["ranks"].size(), 4u);
  EXPECT_EQ(ranks["ranks"][0]["node"], "node-a");
  EXPECT_EQ(ranks["ranks"][0]["run_id"], 1);
  EXPECT_EQ(ranks["ranks"][0]["waits_for_straggler_ns"], kWaitForRank3);
  EXPECT_EQ(ranks["ranks"][3]["node"], "node-b");
  EXPECT_EQ(ranks["ranks"][3]["waits_for_straggler_ns"], 0);
  EXPECT_EQ(ranks["job"]["world_size"], 4);
  EXPECT_EQ(ranks["job"]["runs"][0], nlohmann::json({{"run_id", 1}, {"node", "node-a"}, {"ranks", {0, 1}},
                                                      {"world_size", 4}, {"started_unix", kStart},
                                                      {"ended_unix", kStart + 1.01}}));
  EXPECT_EQ(ranks["job"]["missing_ranks"], nlohmann::json::array());
  ASSERT_EQ(ranks["nodes"].size(), 2u);
  EXPECT_EQ(ranks["nodes"][0]["node"], "node-b");  // the explained run's
  EXPECT_EQ(ranks["nodes"][1]["node"], "node-a");
  EXPECT_EQ(ranks["cores"], 2);  // the explained run's node, as for a single node
  EXPECT_EQ(ranks["nodes"][1]["suggestion"]["measured"], false);
}

// Two nodes' DBs merged; the expected jobs of the merged file: none unless `together`.
void expect_apart(const std::string& name, const DdpNode& a, const DdpNode& b) {
  SCOPED_TRACE(name);
  const std::string path = merged_job(name, a, b);
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok());
  auto jobs = find_jobs(**trace);
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());
  for (int64_t run : {1, 2}) {
    const ExplainReport report = explain_run(path, run);
    ASSERT_TRUE(report.ranks.has_value());
    EXPECT_EQ(report.ranks->ranks.size(), 2u);  // its own ranks only
    EXPECT_FALSE(report.ranks->job.has_value());
    EXPECT_EQ(report.ranks->nodes.size(), 1u);
  }
}

TEST(JobAnalysis, RunsThatDoNotOverlapRepeatARankOrDisagreeOnTheWorldSizeAreSeparate) {
  DdpNode later = node_b();
  later.started_unix = kStart + 3600;  // traced an hour later: another job
  expect_apart("job-later", node_a(), later);

  DdpNode same_ranks = node_b();  // a second job of the same shape on another node
  same_ranks.ranks = {{0, 300, kFast}, {1, 400, kSlow}};
  expect_apart("job-repeat", node_a(), same_ranks);

  DdpNode overlapping_rank = node_b();
  overlapping_rank.ranks = {{1, 300, kFast}, {2, 400, kSlow}};
  expect_apart("job-rank-twice", node_a(), overlapping_rank);

  DdpNode other_world = node_b();
  other_world.world_size = 8;
  expect_apart("job-world", node_a(), other_world);
}

TEST(JobAnalysis, MergedRunsListTheirJob) {
  const std::string path = merged_job("job-list", node_a(), node_b());
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok());
  auto jobs = find_jobs(**trace);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(job_text(jobs->front()), "runs 1 (node-a, ranks 0-1) and 2 (node-b, ranks 2-3), world size 4");
  EXPECT_TRUE(job_of(*jobs, 2).has_value());
  EXPECT_FALSE(job_of(*jobs, 3).has_value());
}

}  // namespace
}  // namespace ingero::reports::testing
