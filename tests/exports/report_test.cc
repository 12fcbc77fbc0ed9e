// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "reports/render/commands.h"
#include "reports/text/recommend_text.h"
#include "reports/render/report_json.h"
#include "reports/render/report_render.h"
#include "tests/exports/export_fixtures.h"

namespace ingero::reports::testing {
namespace {

using nlohmann::json;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// No network and no script: the page opens the same from a disk, a CI artifact or an air-gapped node.
void expect_self_contained(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_FALSE(contains(html, "<script"));
  EXPECT_FALSE(contains(html, "<link"));
  EXPECT_FALSE(contains(html, "<iframe"));
  EXPECT_FALSE(contains(html, "@import"));
  EXPECT_FALSE(contains(html, "url("));
}

RecommendReport recommend_report(const std::string& db, std::optional<int64_t> sweep) {
  auto file = TraceFile::open(db);
  EXPECT_TRUE(file.ok());
  RecommendOptions options;
  options.db = db;
  options.sweep = sweep;
  auto report = make_recommend_report(**file, options);
  EXPECT_TRUE(report.ok()) << report.error().message;
  return *report;
}

class Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new std::string(temp_db_path("report-sweeps"));
    sweeps_ = write_sweep_db(*db_);
  }
  static void TearDownTestSuite() {
    std::remove(db_->c_str());
    delete db_;
  }

  static ReportDoc doc(const ReportSelection& selection) {
    auto file = TraceFile::open(*db_);
    EXPECT_TRUE(file.ok());
    auto doc = make_report_doc(**file, selection);
    EXPECT_TRUE(doc.ok()) << doc.error().message;
    return doc.ok() ? std::move(*doc) : ReportDoc{};
  }

  // Writes the report through write_report, as the CLI will, and returns the file's text.
  static std::string written(ReportOptions options, const std::string& name) {
    options.out = *db_ + "." + name;
    if (options.db.empty()) options.db = *db_;
    Status s = write_report(options);
    EXPECT_TRUE(s.ok()) << s.error().message;
    std::string text = file_bytes(options.out);
    std::remove(options.out.c_str());
    return text;
  }

  static std::string* db_;
  static SweepDb sweeps_;
};
std::string* Report::db_ = nullptr;
SweepDb Report::sweeps_;

TEST_F(Report, DefaultsToTheLastSweep) {
  const ReportDoc d = doc({});
  EXPECT_EQ(d.scope, "sweep 2");
  ASSERT_TRUE(d.sweep.has_value());
  EXPECT_EQ(d.sweep->sweep_id, 2);
  EXPECT_EQ(d.runs.size(), 2u);
}

TEST_F(Report, SweepModelHoldsTheRecommendationsNumbers) {
  const ReportDoc d = doc({1, {}});
  const RecommendReport expected = recommend_report(*db_, 1);
  ASSERT_TRUE(d.recommendation.has_value());
  EXPECT_EQ(to_json(*d.recommendation), to_json(expected));
  ASSERT_EQ(d.configs.size(), expected.configs.size());
  for (size_t i = 0; i < d.configs.size(); ++i) {
    EXPECT_EQ(d.configs[i].label, expected.configs[i].label);
    if (expected.configs[i].measured()) {
      EXPECT_DOUBLE_EQ(*d.configs[i].median_s, expected.configs[i].median_s);
    }
  }
  const ConfigRow& rec = d.configs[static_cast<size_t>(expected.recommended)];
  EXPECT_EQ(rec.label, "loader w4 pf2");
  EXPECT_TRUE(rec.recommended);
  ASSERT_TRUE(rec.speedup.has_value());
  EXPECT_TRUE(rec.speedup_verified);
  EXPECT_DOUBLE_EQ(rec.speedup->ratio, expected.speedup);
  EXPECT_DOUBLE_EQ(rec.speedup->interval.low, expected.speedup_low);
  EXPECT_NEAR(rec.speedup->ratio, 2.0, 1e-9);
  const ConfigRow& base = d.configs[static_cast<size_t>(expected.baseline)];
  EXPECT_EQ(base.label, "loader w2 pf2");
  EXPECT_FALSE(base.speedup.has_value());
  EXPECT_NEAR(*base.samples_per_s, 1'000'000 / 2.0, 1e-6);
  // An unverified configuration's speed-up is the ratio of medians, with an interval around it.
  for (const auto& row : d.configs) {
    if (!row.speedup || row.speedup_verified) continue;
    EXPECT_NEAR(row.speedup->ratio, *base.median_s / *row.median_s, 1e-9) << row.label;
    EXPECT_LE(row.speedup->interval.low, row.speedup->ratio);
    EXPECT_GE(row.speedup->interval.high, row.speedup->ratio);
  }
}

// The baseline's chains are the recommendation's evidence: its wait fraction and verdict, then its
// highest ranked chains, as many as fit in four lines.
TEST_F(Report, TheBaselinesChainsAreTheEvidence) {
  const RecommendReport r = recommend_report(*db_, 1);
  ASSERT_TRUE(r.evidence.has_value());
  EXPECT_EQ(r.evidence->run_id, sweeps_.baseline_run);
  ASSERT_TRUE(r.evidence->wait_fraction.has_value());
  EXPECT_NEAR(*r.evidence->wait_fraction, 0.15, 1e-9);
  EXPECT_EQ(r.evidence->verdict, InputBound::moderately);
  ASSERT_EQ(r.evidence->chains.size(), 3u);
  EXPECT_EQ(r.evidence->chains[0].severity, Severity::high);
  const auto lines = baseline_evidence_lines(r);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], fmt::format("run {} waited for data 15.0 % of the time: MODERATELY input-bound",
                                  sweeps_.baseline_run));
  EXPECT_EQ(lines[1], "[HIGH] " + r.evidence->chains[0].summary + " — " + r.evidence->chains[0].root_cause);
  EXPECT_FALSE(r.budget_hint.has_value());  // an alternative was measured
  EXPECT_FALSE(r.untried_change.has_value());
}

TEST_F(Report, EpochGridSpansWorkersAndPrefetch) {
  const ReportDoc d = doc({1, {}});
  ASSERT_EQ(d.grids.size(), 1u);
  const EpochGrid& g = d.grids.front();
  EXPECT_EQ(g.num_workers, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(g.prefetch, (std::vector<std::optional<int>>{std::nullopt, 2, 4}));
  EXPECT_DOUBLE_EQ(*g.median_s[0][0], 3.0);  // w0: prefetch does not apply
  EXPECT_FALSE(g.median_s[0][1].has_value());
  EXPECT_DOUBLE_EQ(*g.median_s[1][1], 2.0);
  EXPECT_DOUBLE_EQ(*g.median_s[2][2], 0.98);
  EXPECT_EQ(g.marks.at({1, 1}), "baseline");
  EXPECT_EQ(g.marks.at({2, 1}), "recommended");
  for (const auto& row : d.configs) EXPECT_EQ(row.in_grid, row.measured()) << row.label;
}

TEST_F(Report, TimelineDrawsTheBaselinesMainThreadAndWorkers) {
  const ReportDoc d = doc({1, {}});
  ASSERT_TRUE(d.timeline.has_value());
  const RunTimeline& t = *d.timeline;
  EXPECT_EQ(t.run_id, sweeps_.baseline_run);
  EXPECT_NE(t.why.find("baseline"), std::string::npos);
  ASSERT_EQ(t.lanes.size(), 4u);  // main, pin, two workers; the 'other' thread is left out
  EXPECT_EQ(t.lanes[0].role, "main");
  EXPECT_EQ(t.lanes[1].role, "pin");
  EXPECT_EQ(t.lanes[2].tid, kWorkerA);
  EXPECT_EQ(t.lanes[3].tid, kWorkerB);
  const auto& main = t.lanes[0].totals;
  EXPECT_EQ(main.at("batch wait").spans, 10);
  EXPECT_EQ(main.at("batch wait").ns, 10 * 200 * kMs);
  EXPECT_EQ(main.at("CUDA call").spans, 30);
  EXPECT_EQ(main.at("blocked").spans, 10);
  EXPECT_EQ(t.lanes[2].totals.at("worker start-up").spans, 1);
  EXPECT_EQ(t.lanes[2].totals.at("waiting for a CPU").spans, 10);
  ASSERT_TRUE(d.diagnosis.has_value());
  EXPECT_EQ(d.diagnosis->run.run_id, sweeps_.baseline_run);
}

TEST_F(Report, ProcessesOfTheFocusRunAndRolesOfEveryRun) {
  const ReportDoc d = doc({1, {}});
  ASSERT_EQ(d.processes.size(), 1u);
  EXPECT_EQ(d.processes[0].run_id, sweeps_.baseline_run);
  // Main process split by role (main, pin, other), then each worker process.
  ASSERT_EQ(d.processes[0].rows.size(), 5u);
  EXPECT_EQ(d.processes[0].rows[0].role, "main");
  EXPECT_EQ(d.processes[0].rows[0].counters.page_allocs, 4000);
  EXPECT_FALSE(d.roles.empty());
  std::set<int64_t> runs_with_roles;
  for (const auto& r : d.roles) runs_with_roles.insert(r.run_id);
  EXPECT_EQ(runs_with_roles.size(), d.runs.size());
}

TEST_F(Report, GivenRunsAreReportedAndTheFirstIsDrawn) {
  const ReportDoc d = doc({std::nullopt, {sweeps_.recommended_run, sweeps_.baseline_run}});
  EXPECT_EQ(d.scope, fmt::format("runs {}, {}", sweeps_.recommended_run, sweeps_.baseline_run));
  ASSERT_TRUE(d.timeline.has_value());
  EXPECT_EQ(d.timeline->run_id, sweeps_.recommended_run);
  EXPECT_EQ(d.processes.size(), 2u);
  ASSERT_TRUE(d.recommendation.has_value());
  EXPECT_EQ(d.configs.size(), 2u);
}

TEST_F(Report, MarkdownHasTheTableTheGridAndTheHeadline) {
  ReportOptions options;
  options.sweep = 1;
  options.format = "md";
  const std::string md = written(options, "md");
  const RecommendReport expected = recommend_report(*db_, 1);
  EXPECT_EQ(md.rfind("# ingero-bench report: sweep 1\n", 0), 0u);
  EXPECT_TRUE(contains(md, "**" + headline_text(expected) + "**")) << md;
  EXPECT_TRUE(contains(md, "| configuration | workers | prefetch | pin | epoch | interval |"));
  for (const auto& c : expected.configs) EXPECT_TRUE(contains(md, "| " + c.label + " |")) << c.label;
  EXPECT_TRUE(contains(md, "pruned: slower than loader w4 pf2"));
  EXPECT_TRUE(contains(md, "| num_workers \\ prefetch_factor | n/a | 2 | 4 |")) << md;
  EXPECT_TRUE(contains(md, "2.00 s (baseline)"));
  EXPECT_TRUE(contains(md, "## Speed-up over the baseline"));
  EXPECT_TRUE(contains(md, "## Diagnosis of run"));
}

TEST_F(Report, JsonIsTheModelWithTheRecommendation) {
  ReportOptions options;
  options.sweep = 1;
  options.format = "json";
  const json doc = json::parse(written(options, "json"));
  EXPECT_EQ(doc["schema"], "ingero-bench/report");
  EXPECT_EQ(doc["scope"], "sweep 1");
  const RecommendReport expected = recommend_report(*db_, 1);
  EXPECT_EQ(doc["recommendation"], to_json(expected));
  EXPECT_EQ(doc["recommendation"]["speedup"].get<double>(), expected.speedup);
  EXPECT_EQ(doc["configs"].size(), expected.configs.size());
  EXPECT_EQ(doc["epoch_grids"].size(), 1u);
  EXPECT_EQ(doc["timeline"]["run_id"], sweeps_.baseline_run);
  EXPECT_EQ(doc["diagnosis"]["schema"], "ingero-bench/explain");
}

TEST_F(Report, HtmlIsSelfContainedWithTheCharts) {
  ReportOptions options;
  options.sweep = 1;
  options.format = "html";
  const std::string html = written(options, "html");
  expect_self_contained(html);
  EXPECT_EQ(count_of(html, "data-chart=\"heat-map\""), 1u);
  EXPECT_EQ(count_of(html, "data-chart=\"interval-bars\""), 1u);  // speed-up (every epoch time is in the grid)
  EXPECT_EQ(count_of(html, "data-chart=\"bar-panel\""), 2u);      // the baseline's processes, roles per run
  EXPECT_EQ(count_of(html, "data-chart=\"timeline\""), 1u);
  EXPECT_TRUE(contains(html, "<title>"));
  EXPECT_TRUE(contains(html, "Speed-up over the baseline (loader w2 pf2)"));
  EXPECT_TRUE(contains(html, "median epoch time (s)"));  // an axis with its unit
  EXPECT_TRUE(contains(html, "recommended"));             // a legend entry
}

TEST_F(Report, FormatFollowsTheOutExtensionWhenNotGiven) {
  EXPECT_EQ(parse_report_format("", "x/report.md").value(), ReportFormat::markdown);
  EXPECT_EQ(parse_report_format("", "report.html").value(), ReportFormat::html);
  EXPECT_EQ(parse_report_format("", "report.json").value(), ReportFormat::json);
  EXPECT_EQ(parse_report_format("markdown", "report.txt").value(), ReportFormat::markdown);
  auto none = parse_report_format("", "report");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("--format"), std::string::npos);
}

TEST_F(Report, BadInputNamesTheFlag) {
  auto expect_bad = [](const ReportOptions& options, const std::string& flag) {
    Status s = write_report(options);
    ASSERT_FALSE(s.ok()) << flag;
    EXPECT_EQ(s.error().exit_code, kExitBadInput) << s.error().message;
    EXPECT_NE(s.error().message.find(flag), std::string::npos) << s.error().message;
    EXPECT_FALSE(s.error().hint.empty()) << s.error().message;
    if (options.out != options.db) {
      EXPECT_NE(access(options.out.c_str(), F_OK), 0) << "written on bad input";
    }
  };
  const std::string out = *db_ + ".bad.html";
  ReportOptions base{*db_, std::nullopt, {}, "html", out};
  ReportOptions o = base;
  o.sweep = 9;
  expect_bad(o, "--sweep");
  o = base;
  o.runs = {999};
  expect_bad(o, "--run");
  o = base;
  o.sweep = 1;
  o.runs = {1};
  expect_bad(o, "--sweep");
  o = base;
  o.format = "pdf";
  expect_bad(o, "--format");
  o = base;
  o.out = "/proc/self/no/such/dir/report.html";
  expect_bad(o, "--out");
  o = base;
  o.out = *db_;
  o.format = "md";
  expect_bad(o, "--out");
  o = base;
  o.db = "/nonexistent/trace.db";
  expect_bad(o, "--db");
}

TEST_F(Report, RunsWithoutEpochsStillGetAReport) {
  const std::string path = temp_db_path("report-trace-only");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 100 * kMs, "trace: python3 train.py");
    db->add_event(run, "cudaMemcpyAsync", 10 * kMs, kMs, kMain, kMain, 1000);
  }
  ReportOptions options{path, std::nullopt, {}, "md", path + ".md"};
  ASSERT_TRUE(write_report(options).ok());
  const std::string md = file_bytes(options.out);
  EXPECT_TRUE(contains(md, "No recommendation: no completed run with epoch timings")) << md;
  EXPECT_TRUE(contains(md, "## Run 1 (trace: python3 train.py)")) << md;
  std::remove(options.out.c_str());
  std::remove(path.c_str());
}

TEST_F(Report, ReportingLeavesTheDbUnchanged) {
  const std::string before = file_bytes(*db_);
  for (const char* format : {"md", "html", "json"}) {
    ReportOptions options;
    options.sweep = 1;
    options.format = format;
    written(options, format);
  }
  EXPECT_EQ(file_bytes(*db_), before);
}

// ---- the H200 reproduction DB: every run, no sweep; the baseline is loader w0 (run 5)

class RealDbReport : public ::testing::Test {
 protected:
  static std::string write(const std::string& format) {
    ReportOptions options{INGERO_H200_DB, std::nullopt, {}, format,
                          fmt::format("/tmp/ingero-exports-test-h200-{}.{}", ::getpid(), format)};
    Status s = write_report(options);
    EXPECT_TRUE(s.ok()) << s.error().message;
    std::string text = file_bytes(options.out);
    std::remove(options.out.c_str());
    return text;
  }
};

TEST_F(RealDbReport, MarkdownAndJsonHoldTheRecommendation) {
  const std::string before = file_bytes(INGERO_H200_DB);
  const RecommendReport expected = recommend_report(INGERO_H200_DB, std::nullopt);
  const std::string md = write("md");
  EXPECT_TRUE(contains(md, "# ingero-bench report: every run in the file"));
  EXPECT_TRUE(contains(md, "**" + headline_text(expected) + "**"));
  EXPECT_TRUE(contains(md, "| loader w4 pf2 | 4 | 2 | no | 6.25 s |")) << md;
  EXPECT_TRUE(contains(md, "| 0 | 12.64 s (baseline) |"));  // the loader grid
  const json doc = json::parse(write("json"));
  EXPECT_EQ(doc["recommendation"], to_json(expected));
  EXPECT_EQ(doc["runs"].size(), 16u);
  EXPECT_EQ(doc["timeline"]["run_id"], 5);
  EXPECT_EQ(doc["epoch_grids"].size(), 1u);
  EXPECT_EQ(doc["epoch_grids"][0]["mode"], "loader");
  EXPECT_EQ(file_bytes(INGERO_H200_DB), before);
}

TEST_F(RealDbReport, HtmlIsSelfContainedWithTheCharts) {
  const std::string html = write("html");
  expect_self_contained(html);
  EXPECT_EQ(count_of(html, "data-chart=\"heat-map\""), 1u);       // loader: num_workers × prefetch_factor
  EXPECT_EQ(count_of(html, "data-chart=\"interval-bars\""), 2u);  // epoch time of the others, speed-up
  EXPECT_EQ(count_of(html, "data-chart=\"bar-panel\""), 2u);
  EXPECT_EQ(count_of(html, "data-chart=\"timeline\""), 1u);
}

}  // namespace
}  // namespace ingero::reports::testing
