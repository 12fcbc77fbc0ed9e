#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/commands.h"
#include "reports/recommend.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

ConfigRun measured(int64_t id, const std::string& label, const std::string& config, std::vector<double> epochs,
                   int cpu_count = 4) {
  ConfigRun entry;
  entry.run.run_id = id;
  entry.run.label = label;
  entry.run.kind = "workload";
  entry.run.status = "ok";
  entry.run.config = nlohmann::json::parse(config);
  std::vector<double> sorted = epochs;
  std::sort(sorted.begin(), sorted.end());
  entry.run.result = {{"status", "ok"}, {"epoch_seconds", epochs}, {"epoch_median_s", sorted[sorted.size() / 2]}};
  entry.run.machine = {{"cpu_count", cpu_count}};
  return entry;
}

const ConfigResult& recommended(const RecommendReport& r) { return r.configs[r.recommended]; }

std::vector<ConfigRun> loader_sweep() {
  return {measured(1, "loader w0", loader_config(0), {3.0, 3.0, 3.0}),
          measured(2, "loader w2", loader_config(2), {1.5, 1.5, 1.5}),
          measured(3, "loader w4", loader_config(4), {1.0, 1.01, 1.0}),
          measured(4, "loader w8", loader_config(8), {1.2, 1.2, 1.2})};
}

TEST(Recommend, LoaderOnlySweepPicksTheFastestLoader) {
  auto report = recommend_configuration(loader_sweep(), std::nullopt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(recommended(*report).label, "loader w4");
  EXPECT_EQ(report->configs[report->baseline].label, "loader w0");
  EXPECT_NEAR(report->speedup_vs_baseline, 3.0, 1e-9);
  EXPECT_FALSE(report->not_a_loader_setting);
  const auto& w8 = report->configs[1];  // fastest first: w4, w8, w2, w0
  ASSERT_EQ(w8.label, "loader w8");
  ASSERT_FALSE(w8.flags.empty());
  EXPECT_NE(w8.flags[0].find("oversubscribed"), std::string::npos);
}

TEST(Recommend, InMemoryDataIsNotALoaderSetting) {
  auto runs = loader_sweep();
  runs.push_back(measured(5, "direct-shuffled", loader_config(0, 2, false, false, "direct-shuffled"), {0.1, 0.1}));
  runs.push_back(measured(6, "resident", loader_config(0, 2, false, false, "resident"), {0.05, 0.05}));
  runs.push_back(measured(7, "direct", loader_config(0, 2, false, false, "direct", false), {0.01, 0.01}));
  auto report = recommend_configuration(runs, 2);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(recommended(*report).label, "resident");
  EXPECT_TRUE(report->not_a_loader_setting);
  EXPECT_NEAR(report->speedup_vs_baseline, 1.5 / 0.05, 1e-9);
  ASSERT_TRUE(report->speedup_vs_best_loader);
  EXPECT_NEAR(*report->speedup_vs_best_loader, 1.0 / 0.05, 1e-9);
  EXPECT_NE(report->headline.find("Not a DataLoader setting"), std::string::npos);
  bool mentions_unshuffled = false;
  for (const auto& reason : report->reasons) mentions_unshuffled |= reason.find("does not replace") != std::string::npos;
  EXPECT_TRUE(mentions_unshuffled);
}

TEST(Recommend, CheaperSettingWinsWithinNoise) {
  std::vector<ConfigRun> runs = {measured(1, "loader w0", loader_config(0), {3.0, 3.0}),
                                 measured(2, "loader w2", loader_config(2), {0.9, 1.0, 1.1}),
                                 measured(3, "loader w4", loader_config(4), {0.85, 0.95, 1.05}),
                                 measured(4, "loader w2 pf8", loader_config(2, 8), {0.9, 1.0, 1.1})};
  auto report = recommend_configuration(runs, std::nullopt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->configs[report->fastest].label, "loader w4");
  EXPECT_EQ(recommended(*report).label, "loader w2");
  bool explains = false;
  for (const auto& reason : report->reasons) explains |= reason.find("within the run-to-run noise") != std::string::npos;
  EXPECT_TRUE(explains);
}

TEST(Recommend, BaselineKeptWhenNothingBeatsItBeyondNoise) {
  std::vector<ConfigRun> runs = {measured(1, "loader w2", loader_config(2), {1.0, 1.1}),
                                 measured(2, "loader w4", loader_config(4), {0.98, 1.08})};
  auto report = recommend_configuration(runs, std::nullopt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->recommended, report->baseline);
  EXPECT_NE(report->headline.find("Keep"), std::string::npos);
}

TEST(Recommend, PinnedCoresCountForOversubscription) {
  std::vector<ConfigRun> runs = {measured(1, "loader w2 on 2 cpus", loader_config(2, 2, true, false, "loader", true, 2),
                                          {1.0}, 16)};
  auto report = recommend_configuration(runs, std::nullopt);
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->configs[0].flags.empty());
  EXPECT_NE(report->configs[0].flags[0].find("2 workers on 2 cores"), std::string::npos);
}

TEST(Recommend, HighRunQueueLatencyIsFlagged) {
  auto runs = loader_sweep();
  runs[3].runq_p99 = BucketBounds{2048, 4096};
  auto report = recommend_configuration(runs, std::nullopt);
  ASSERT_TRUE(report.ok());
  bool flagged = false;
  for (const auto& c : report->configs) {
    for (const auto& f : c.flags) flagged |= f.find("high run-queue latency") != std::string::npos;
  }
  EXPECT_TRUE(flagged);
}

TEST(Recommend, FailedRunsAndNoRunsAreHandled) {
  auto failed = measured(1, "resident", loader_config(0, 2, false, false, "resident"), {0.01});
  failed.run.status = "failed";
  auto report = recommend_configuration({failed}, std::nullopt);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().exit_code, kExitBadInput);
  auto unknown = recommend_configuration(loader_sweep(), 99);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().exit_code, kExitBadInput);
}

TEST(RecommendCommand, ReadsTheSweepFromTheDb) {
  const std::string path = temp_db_path("recommend-db");
  {
    auto db = TraceFixture::create(path);
    auto add = [&](const std::string& label, const std::string& config, double epoch) {
      RunSpec spec;
      spec.label = label;
      spec.config_json = config;
      spec.result_json = nlohmann::json{{"status", "ok"}, {"epoch_seconds", {epoch, epoch}},
                                        {"epoch_median_s", epoch}, {"wait_fraction", 0.5}}.dump();
      spec.end_ns = 1000;
      db->add_run(spec);
    };
    add("loader w4 pf2 pin", loader_config(4), 40.0);
    add("loader w2", loader_config(2), 45.0);
    add("direct-shuffled", loader_config(0, 2, false, false, "direct-shuffled"), 0.5);
  }
  std::ostringstream out;
  RecommendOptions options;
  options.db = path;
  options.json = true;
  ASSERT_TRUE(recommend(options, out).ok());
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["recommended"], "direct-shuffled");
  EXPECT_EQ(doc["baseline"], "loader w4 pf2 pin");
  EXPECT_TRUE(doc["not_a_loader_setting"].get<bool>());
  EXPECT_NEAR(doc["speedup_vs_baseline"].get<double>(), 80.0, 1e-9);
}

}  // namespace
}  // namespace ingero::reports::testing
