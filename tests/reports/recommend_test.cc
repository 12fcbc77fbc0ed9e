// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/render/commands.h"
#include "reports/analysis/recommend.h"
#include "reports/text/recommend_text.h"
#include "reports/render/report_json.h"
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

RecommendInputs inputs(std::vector<ConfigRun> runs, std::optional<int64_t> baseline_run = std::nullopt) {
  RecommendInputs in;
  in.runs = std::move(runs);
  in.baseline_run = baseline_run;
  return in;
}

// A run of sweep 1 at `point` in `phase` ('measure' or 'verify').
ConfigRun sweep_run(int64_t id, const std::string& point, const std::string& config, std::vector<double> epochs,
                    const std::string& phase = "measure") {
  ConfigRun entry = measured(id, point, config, std::move(epochs));
  entry.run.sweep_id = 1;
  entry.run.sweep_point = point;
  entry.run.sweep_phase = phase;
  return entry;
}

std::vector<ConfigRun> loader_sweep() {
  return {measured(1, "loader w0", loader_config(0), {3.0, 3.0, 3.0}),
          measured(2, "loader w2", loader_config(2), {1.5, 1.5, 1.5}),
          measured(3, "loader w4", loader_config(4), {1.0, 1.01, 1.0}),
          measured(4, "loader w8", loader_config(8), {1.2, 1.2, 1.2})};
}

TEST(Recommend, LoaderOnlySweepPicksTheFastestLoader) {
  auto report = recommend_configuration(inputs(loader_sweep()));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(recommended(*report).label, "loader w4");
  EXPECT_EQ(report->configs[report->baseline].label, "loader w0");
  EXPECT_NEAR(report->speedup, 3.0, 1e-9);
  EXPECT_FALSE(report->not_a_loader_setting);
  const auto& w8 = report->configs[1];  // fastest first: w4, w8, w2, w0
  ASSERT_EQ(w8.label, "loader w8");
  ASSERT_FALSE(w8.flags.empty());
  EXPECT_EQ(w8.flags[0].kind, FlagKind::oversubscribed);
  EXPECT_EQ(w8.flags[0].workers, 8);
  EXPECT_EQ(w8.flags[0].cores, 4);
  EXPECT_EQ(flag_text(w8.flags[0]), "oversubscribed: 8 workers on 4 cores");
}

TEST(Recommend, InMemoryDataIsNotALoaderSetting) {
  auto runs = loader_sweep();
  runs.push_back(measured(5, "direct-shuffled", loader_config(0, 2, false, false, "direct-shuffled"), {0.1, 0.1}));
  runs.push_back(measured(6, "resident", loader_config(0, 2, false, false, "resident"), {0.05, 0.05}));
  runs.push_back(measured(7, "direct", loader_config(0, 2, false, false, "direct", false), {0.01, 0.01}));
  auto report = recommend_configuration(inputs(runs, 2));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(recommended(*report).label, "resident");
  EXPECT_TRUE(report->not_a_loader_setting);
  EXPECT_NEAR(report->speedup, 1.5 / 0.05, 1e-9);
  EXPECT_NE(headline_text(*report).find("Not a DataLoader setting"), std::string::npos);
  bool mentions_unshuffled = false;
  for (const auto& reason : reason_lines(*report))
    mentions_unshuffled |= reason.find("does not replace") != std::string::npos;
  EXPECT_TRUE(mentions_unshuffled);
  // The faster in-order point is a reason of its own kind, naming that point.
  const auto in_order = std::find_if(report->reasons.begin(), report->reasons.end(),
                                     [](const Reason& r) { return r.kind == ReasonKind::reads_in_order; });
  ASSERT_NE(in_order, report->reasons.end());
  EXPECT_EQ(report->configs[in_order->config].label, "direct");
  EXPECT_EQ(report->reasons.front().kind, ReasonKind::other_mode);
  EXPECT_EQ(report->reasons.front().config, report->recommended);
}

TEST(Recommend, CheaperSettingWinsWithinNoise) {
  std::vector<ConfigRun> runs = {measured(1, "loader w0", loader_config(0), {3.0, 3.0}),
                                 measured(2, "loader w2", loader_config(2), {0.9, 1.0, 1.1}),
                                 measured(3, "loader w4", loader_config(4), {0.85, 0.95, 1.05}),
                                 measured(4, "loader w2 pf8", loader_config(2, 8), {0.9, 1.0, 1.1})};
  auto report = recommend_configuration(inputs(runs));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->configs[report->fastest].label, "loader w4");
  EXPECT_EQ(recommended(*report).label, "loader w2");
  bool explains = false, says_how_much = false;
  for (const auto& reason : reason_lines(*report)) {
    explains |= reason.find("indistinguishable from it") != std::string::npos;
    says_how_much |= reason.find("loader w4 measured 1.05× faster over 1 and 1 runs") != std::string::npos;
  }
  EXPECT_TRUE(explains);
  EXPECT_TRUE(says_how_much) << reason_lines(*report).front();
  ASSERT_FALSE(report->reasons.empty());
  EXPECT_EQ(report->reasons[0].kind, ReasonKind::cheaper_within_noise);
  EXPECT_EQ(report->reasons[0].config, report->recommended);
  EXPECT_EQ(report->reasons[0].other, report->fastest);
  EXPECT_NEAR(report->reasons[0].ratio, 1.0 / 0.95, 1e-9);
}

TEST(Recommend, BaselineKeptWhenNothingBeatsItBeyondNoise) {
  std::vector<ConfigRun> runs = {measured(1, "loader w2", loader_config(2), {1.0, 1.1}),
                                 measured(2, "loader w4", loader_config(4), {0.98, 1.08})};
  auto report = recommend_configuration(inputs(runs));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->recommended, report->baseline);
  EXPECT_TRUE(report->alternative_measured);
  EXPECT_NE(headline_text(*report).find("Keep"), std::string::npos);
  // The faster loader w4 is within noise of the cheaper baseline; nothing changes, so no caution.
  ASSERT_EQ(report->reasons.size(), 1u);
  EXPECT_EQ(report->reasons[0].kind, ReasonKind::cheaper_within_noise);
  EXPECT_EQ(report->reasons[0].config, report->baseline);
}

TEST(Recommend, PinnedCoresCountForOversubscription) {
  std::vector<ConfigRun> runs = {measured(1, "loader w2 on 2 cpus", loader_config(2, 2, true, false, "loader", true, 2),
                                          {1.0}, 16)};
  auto report = recommend_configuration(inputs(runs));
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->configs[0].flags.empty());
  EXPECT_EQ(report->configs[0].flags[0].kind, FlagKind::oversubscribed);
  EXPECT_EQ(report->configs[0].flags[0].cores, 2);
  EXPECT_NE(flag_text(report->configs[0].flags[0]).find("2 workers on 2 cores"), std::string::npos);
}

TEST(Recommend, HighRunQueueLatencyIsFlagged) {
  auto runs = loader_sweep();
  runs[3].runq_p99 = BucketBounds{2048, 4096};
  auto report = recommend_configuration(inputs(runs));
  ASSERT_TRUE(report.ok());
  bool flagged = false;
  for (const auto& c : report->configs) {
    for (const auto& f : flag_texts(c.flags)) flagged |= f.find("high run-queue latency") != std::string::npos;
  }
  EXPECT_TRUE(flagged);
  const auto& w8 = report->configs[1];
  ASSERT_EQ(w8.label, "loader w8");
  ASSERT_EQ(w8.flags.size(), 2u);
  EXPECT_EQ(w8.flags[1].kind, FlagKind::high_runq);
  EXPECT_EQ(w8.flags[1].runq_p99.lower, 2048);
  EXPECT_EQ(flag_text(w8.flags[1]), "high run-queue latency: p99 in [2048, 4096) µs");
}

TEST(Recommend, FailedRunsAndNoRunsAreHandled) {
  auto failed = measured(1, "resident", loader_config(0, 2, false, false, "resident"), {0.01});
  failed.run.status = "failed";
  auto report = recommend_configuration(inputs({failed}));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().exit_code, kExitBadInput);
  auto unknown = recommend_configuration(inputs(loader_sweep(), 99));
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
  EXPECT_EQ(doc["schema"], "ingero-bench/recommend");
  EXPECT_EQ(doc["version"], 2);
  EXPECT_EQ(doc["recommended"]["label"], "direct-shuffled");
  EXPECT_EQ(doc["recommended"]["run_id"], 3);
  EXPECT_EQ(doc["baseline"]["label"], "loader w4 pf2 pin");
  EXPECT_EQ(doc["baseline"]["config"]["num_workers"], 4);
  EXPECT_TRUE(doc["not_a_loader_setting"].get<bool>());
  EXPECT_NEAR(doc["speedup"].get<double>(), 80.0, 1e-9);
  EXPECT_FALSE(doc["verified"].get<bool>());
  EXPECT_TRUE(doc["verified_by"].empty());
}

// The search picks; the interleaved re-runs decide the speed-up it states.
TEST(Recommend, VerificationRunsGiveTheStatedSpeedup) {
  RecommendInputs in;
  in.sweep_id = 1;
  in.baseline_point = "loader w0";
  in.points = {{"loader w0", nlohmann::json::parse(loader_config(0)), "measured", "", ""},
               {"loader w2", nlohmann::json::parse(loader_config(2)), "measured", "", ""},
               {"loader w8", nlohmann::json::parse(loader_config(8)), "pruned", "slower than loader w2 beyond noise", ""},
               {"loader w16", nlohmann::json::parse(loader_config(16)), "skipped", "more workers than cores", ""}};
  in.runs = {sweep_run(1, "loader w0", loader_config(0), {3.0, 3.1, 2.9}),
             sweep_run(2, "loader w2", loader_config(2), {1.0, 1.1, 0.9})};
  in.verify_runs = {sweep_run(3, "loader w0", loader_config(0), {2.0, 2.1, 1.9}, "verify"),
                    sweep_run(4, "loader w2", loader_config(2), {1.0, 1.05, 0.95}, "verify"),
                    sweep_run(5, "loader w0", loader_config(0), {2.0, 2.2, 1.8}, "verify"),
                    sweep_run(6, "loader w2", loader_config(2), {1.0, 1.1, 0.9}, "verify")};
  auto report = recommend_configuration(in);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(recommended(*report).label, "loader w2");
  ASSERT_TRUE(report->verified);
  ASSERT_TRUE(report->verification.has_value());
  EXPECT_EQ(report->verification->baseline_runs, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(report->verification->recommended_runs, (std::vector<int64_t>{4, 6}));
  EXPECT_NEAR(report->speedup, 2.0, 1e-9);  // from the re-runs (2.0 / 1.0), not the search's 3.0
  EXPECT_LE(report->speedup_low, report->speedup);
  EXPECT_GE(report->speedup_high, report->speedup);
  EXPECT_GT(report->speedup_low, 1.0);
  const auto skipped = not_measured_lines(*report);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("loader w8: pruned"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("loader w16: skipped"), std::string::npos) << skipped[1];
  EXPECT_NE(headline_text(*report).find("Verified"), std::string::npos) << headline_text(*report);
}

// A coordinate search skips most of a large grid: the text says so in one line per reason,
// the JSON still lists every point.
TEST(Recommend, ManyPointsSkippedForOneReasonAreOneLine) {
  RecommendInputs in;
  in.sweep_id = 1;
  in.baseline_point = "loader w0";
  in.points = {{"loader w0", nlohmann::json::parse(loader_config(0)), "measured", "", ""},
               {"loader w2", nlohmann::json::parse(loader_config(2)), "pruned", "clearly slower", ""},
               {"loader w16", nlohmann::json::parse(loader_config(16)), "skipped", "the budget of 1m00s was reached",
                "budget"}};
  for (int w : {3, 5, 6, 7, 9})
    in.points.push_back({"loader w" + std::to_string(w), nlohmann::json::parse(loader_config(w)), "skipped",
                         "off the coordinate search's path: it differs from the best point in num_workers",
                         "off_path"});
  in.runs = {sweep_run(1, "loader w0", loader_config(0), {3.0, 3.1, 2.9})};
  auto report = recommend_configuration(in);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto skipped = not_measured_lines(*report);
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0], "loader w2: pruned — clearly slower");
  EXPECT_EQ(skipped[1], "loader w16: skipped — the budget of 1m00s was reached");
  EXPECT_EQ(skipped[2].rfind("5 points skipped — off the coordinate search's path (loader 5); e.g. loader w3: "
                             "skipped — off the coordinate search's path: it differs",
                             0),
            0u)
      << skipped[2];
  EXPECT_EQ(to_json(*report)["skipped"].size(), 7u);
  // The typed entries: two points alone, then one group of five with its reason and modes.
  ASSERT_EQ(report->not_measured.size(), 3u);
  EXPECT_FALSE(report->not_measured[0].group());
  const NotMeasured& group = report->not_measured[2];
  ASSERT_TRUE(group.group());
  EXPECT_EQ(group.configs.size(), 5u);
  EXPECT_EQ(group.reason, "off the coordinate search's path");
  EXPECT_EQ(group.per_mode, (std::map<std::string, int>{{"loader", 5}}));
  // Nothing but the baseline was measured: the budget's stop is the reason the headline gives.
  ASSERT_GE(report->unmeasured_example, 0);
  EXPECT_EQ(report->configs[report->unmeasured_example].label, "loader w16");
}

// Advice to change programs also says what the baseline's own mode reached, so that a user who
// keeps the DataLoader still gets a measured configuration.
TEST(Recommend, AnotherModeAlsoGivesTheFastestPointOfTheBaselinesMode) {
  auto report = recommend_configuration(
      inputs({measured(1, "python w12 pf12 pin", loader_config(12, 12, true, false, "python"), {0.75, 0.74, 0.76}),
              measured(2, "python w4 pf12 pin", loader_config(4, 12, true, false, "python"), {0.60, 0.61, 0.59}),
              measured(3, "loader w8 pf4 pin", loader_config(8, 4, true, false, "loader"), {0.15, 0.14, 0.16})},
             1));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(recommended(*report).label, "loader w8 pf4 pin");
  std::string keeping, design;
  for (const auto& reason : reason_lines(*report)) {
    if (reason.find("Keeping the baseline's mode") != std::string::npos) keeping = reason;
    if (reason.find("the DataLoader's design") != std::string::npos) design = reason;
  }
  EXPECT_NE(keeping.find("(python), the fastest point measured was python w4 pf12 pin: 600 ms"), std::string::npos)
      << keeping;
  EXPECT_NE(keeping.find("1.25× faster than the baseline's 750 ms"), std::string::npos) << keeping;
  EXPECT_FALSE(design.empty());
  // The numbers behind the sentence: the baseline mode's fastest point and its ratio to the baseline.
  const auto best = std::find_if(report->reasons.begin(), report->reasons.end(),
                                 [](const Reason& r) { return r.kind == ReasonKind::baseline_mode_best; });
  ASSERT_NE(best, report->reasons.end());
  EXPECT_EQ(report->configs[best->config].label, "python w4 pf12 pin");
  EXPECT_EQ(best->other, report->baseline);
  EXPECT_NEAR(best->ratio, 0.75 / 0.60, 1e-9);
}

// A job's recommendation is its DataLoader's arguments that differ from the baseline's, with the
// command the point ran.
TEST(Recommend, AJobsChangeIsItsDataLoaderArguments) {
  auto job = [](const std::string& workers) {
    return nlohmann::json{{"mode", "job"},
                          {"knobs", {{"num_workers", workers}, {"persistent_workers", workers == "0" ? "off" : "on"}}},
                          {"command", {"python3", "train.py", "--workers", workers}}}
        .dump();
  };
  RecommendInputs in;
  in.sweep_id = 1;
  in.baseline_point = "as written";
  in.points = {{"as written", nlohmann::json::parse(job("0")), "measured", "", ""},
               {"w2", nlohmann::json::parse(job("2")), "measured", "", ""}};
  in.runs = {sweep_run(1, "as written", job("0"), {0.2, 0.21, 0.19}), sweep_run(2, "w2", job("2"), {0.1, 0.11, 0.09})};
  auto report = recommend_configuration(in);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->job);
  ASSERT_TRUE(report->loader_change.has_value());
  using Knobs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(report->loader_change->knobs, (Knobs{{"num_workers", "2"}, {"persistent_workers", "on"}}));
  ASSERT_TRUE(report->loader_change->command.has_value());
  EXPECT_EQ(report->loader_change->command->back(), "2");
  EXPECT_EQ(dataloader_change_text(*report->loader_change),
            "DataLoader(..., num_workers=2, persistent_workers=True), as your command sets it: python3 train.py "
            "--workers 2");
  EXPECT_EQ(headline_text(*report).rfind("Change the DataLoader: DataLoader(..., num_workers=2, ", 0), 0u);
  EXPECT_NE(headline_text(*report).find("100 ms a step, 10 steps/s"), std::string::npos) << headline_text(*report);
}

// Epochs bounded by --max-batches are named with their cut; the noise rule is its two confidences.
TEST(Recommend, BoundedEpochsAndTheNoiseRuleAreNumbers) {
  auto runs = loader_sweep();
  runs[0].run.config["max_batches"] = 2;
  runs[0].run.config["samples"] = 1048576 * 256;
  auto report = recommend_configuration(inputs(runs));
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->bounded_epochs.size(), 1u);
  EXPECT_EQ(report->configs[report->bounded_epochs[0].config].label, "loader w0");
  EXPECT_EQ(report->bounded_epochs[0].cut.measured, 2);
  EXPECT_EQ(report->bounded_epochs[0].cut.whole, 256);
  EXPECT_NE(headline_text(*report).find("steady pace: loader w0 on 2 of 256 batches (--max-batches)."),
            std::string::npos)
      << headline_text(*report);
  EXPECT_DOUBLE_EQ(report->noise_rule.median_confidence, kMedianConfidence);
  EXPECT_DOUBLE_EQ(report->noise_rule.speedup_confidence, kSpeedupConfidence);
  EXPECT_NE(noise_rule_text(report->noise_rule).find("covers the median at >= 90 %"), std::string::npos);
  EXPECT_NE(noise_rule_text(report->noise_rule).find("a 95 % bootstrap interval"), std::string::npos);
}

TEST(Recommend, UnverifiedAdviceSaysSoAndHowToVerify) {
  auto report = recommend_configuration(inputs(loader_sweep()));
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->verified);
  const std::string headline = headline_text(*report);
  EXPECT_NE(headline.find("not verified"), std::string::npos) << headline;
  EXPECT_NE(headline.find("ingero-bench sweep"), std::string::npos) << headline;
}

}  // namespace
}  // namespace ingero::reports::testing
