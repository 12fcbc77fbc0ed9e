// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/trace_contract.h"
#include "reports/render/commands.h"
#include "reports/text/compare_text.h"
#include "reports/text/format.h"
#include "reports/render/report_json.h"
#include "reports/analysis/causal_chains.h"
#include "reports/analysis/run_metrics.h"
#include "reports/analysis/stats.h"
#include "reports/text/tracing_cost_text.h"
#include "reports/text/verdict_text.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

TEST(Stats, NearestRankPercentilesOverEveryValue) {
  std::vector<int64_t> values;
  for (int64_t v = 100; v >= 1; --v) values.push_back(v);
  const LatencyStats s = latency_stats(values);
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.p50_ns, 50);
  EXPECT_EQ(s.p90_ns, 90);
  EXPECT_EQ(s.p99_ns, 99);
  EXPECT_EQ(s.max_ns, 100);
  EXPECT_EQ(s.total_ns, 5050);
  std::vector<int64_t> none;
  EXPECT_EQ(latency_stats(none).count, 0);
}

TEST(Stats, HistogramQuantilesAreBucketBounds) {
  const std::vector<int64_t> slots = {10, 0, 0, 80, 0, 0, 0, 0, 0, 0, 10};  // µs buckets
  auto p50 = histogram_quantile(slots, 0.5);
  auto p99 = histogram_quantile(slots, 0.99);
  ASSERT_TRUE(p50 && p99);
  EXPECT_EQ(p50->lower, 8);
  EXPECT_EQ(p50->upper, 16);
  EXPECT_EQ(p99->lower, 1024);
  EXPECT_EQ(histogram_quantile(slots, 0.05)->lower, 0);
  EXPECT_FALSE(histogram_quantile({}, 0.5));
}

TEST(Format, HumanUnits) {
  EXPECT_EQ(format_count(1880), "1,880");
  EXPECT_EQ(format_count(191000), "191,000");
  EXPECT_EQ(format_duration_ns(25'000), "25 µs");
  EXPECT_EQ(format_duration_ns(42'000'000), "42 ms");
  EXPECT_EQ(format_duration_ns(21e9), "21.00 s");
  EXPECT_EQ(format_ratio(1638.2), "1,638×");
  EXPECT_EQ(format_percent(0.213), "21.3 %");
  EXPECT_EQ(format_bytes(2.8e9), "2.8 GB");
}

// direct vs loader: the loader run waits, the direct run does not.
std::string write_direct_vs_loader(const std::string& name) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  auto result = [](double epoch, double wait, double compute) {
    return nlohmann::json{{"status", "ok"}, {"epoch_seconds", {epoch}}, {"epoch_median_s", epoch},
                          {"epoch_min_s", epoch}, {"epoch_max_s", epoch}, {"samples_per_s", 7e6 / epoch},
                          {"h2d_bytes_per_epoch", 2.8e9}, {"h2d_gbps", 2.8 / epoch},
                          {"wait", {{"total_s", wait}}}, {"compute", {{"total_s", compute}}},
                          {"wait_fraction", wait / epoch}}.dump();
  };
  RunSpec direct;
  direct.label = "direct";
  direct.config_json = loader_config(0, 2, false, false, "direct-shuffled");
  direct.result_json = result(0.4, 0.01, 0.38);
  direct.end_ns = 400 * kMs;
  const int64_t a = db->add_run(direct);
  db->add_thread(a, {kMain, kMain, 1, "python3", "main", 0, 400 * kMs, std::nullopt, std::nullopt});
  RunSpec loader;
  loader.label = "loader w2";
  loader.config_json = loader_config(2);
  loader.result_json = result(40.0, 39.0, 0.5);
  loader.start_ns = 0;
  loader.end_ns = 40'000 * kMs;
  const int64_t b = db->add_run(loader);
  db->add_thread(b, {kMain, kMain, 1, "python3", "main", 0, 40'000 * kMs, std::nullopt, std::nullopt});
  db->add_thread(b, {kWorkerA, kWorkerA, kMain, "ib-worker-0", "worker", 0, 40'000 * kMs, std::nullopt, std::nullopt});
  db->begin();
  for (int i = 0; i < 10; ++i) {
    db->add_event(a, "batch_wait", i * 40 * kMs, kMs, kMain, kMain);
    db->add_event(b, "batch_wait", i * 4000 * kMs, 3900 * kMs, kMain, kMain);
    db->add_event(b, "offcpu_blocked", i * 4000 * kMs, 3900 * kMs, kMain, kMain);
  }
  db->commit();
  db->add_thread_stats(b, {kWorkerA, kWorkerA, {40000, 5000, 39 * 1000 * kMs, kMs, kMs, 1, 1, 60000, 60000 * 4096, 9}});
  return path;
}

TEST(CompareCommand, ExplainsTheRatioByComponents) {
  const std::string path = write_direct_vs_loader("compare");
  std::ostringstream out;
  CompareOptions options;
  options.db = path;
  options.run_a = 1;
  options.run_b = 2;
  options.json = true;
  ASSERT_TRUE(compare(options, out).ok());
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_NEAR(doc["timings"][0]["ratio_b_over_a"].get<double>(), 100.0, 1e-9);
  // Waiting accounts for (39 - 0.01) of the 39.6 s difference.
  const auto& wait = doc["components"][0];
  EXPECT_EQ(wait["name"], "waiting for data");
  EXPECT_NEAR(wait["share_of_delta"].get<double>(), (39.0 - 0.01) / 39.6, 1e-9);
  // Within the wait: the worker ran the whole time.
  EXPECT_EQ(doc["components"][1]["name"], "workers on CPU (per-sample fetch and collate)");
  EXPECT_NEAR(doc["components"][1]["b_s"].get<double>(), 39.0, 1e-6);
  std::ostringstream text;
  options.json = false;
  ASSERT_TRUE(compare(options, text).ok());
  EXPECT_NE(text.str().find("100×"), std::string::npos) << text.str();
}

// The comparison's numbers and kinds; its words are compare_text's.
TEST(CompareReport, ComponentsAreTypedCausesWithTheirNumbers) {
  const std::string path = write_direct_vs_loader("compare-typed");
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok());
  auto r = make_compare_report(**trace, 1, 2);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->basis, CompareBasis::per_epoch);
  EXPECT_TRUE(r->comparable());
  ASSERT_GE(r->components.size(), 4u);
  EXPECT_EQ(r->components[0].kind, ComponentKind::waiting);
  const ComponentRow& workers = r->components[1];
  EXPECT_EQ(workers.kind, ComponentKind::wait_cause);
  EXPECT_TRUE(workers.part_of_wait());
  EXPECT_EQ(workers.cause.code(), "worker.on_cpu");
  EXPECT_NEAR(workers.b_s, 39.0, 1e-6);
  EXPECT_EQ(component_name(workers), "workers on CPU (per-sample fetch and collate)");
  EXPECT_EQ(r->components[r->components.size() - 2].kind, ComponentKind::compute);
  EXPECT_EQ(r->components.back().kind, ComponentKind::other);
  // The worker part (+39.0 s) and the waiting it is part of (+38.99 s) explain the difference, the
  // largest change first; compute (+0.12 s of 39.6 s) does not.
  ASSERT_EQ(r->explained.size(), 2u);
  EXPECT_EQ(r->explained[0], 1u);
  EXPECT_EQ(r->explained[1], 0u);
  const auto lines = explanation_lines(*r);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("run 2 takes 100× as long as run 1 (per measured epoch", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("  of which workers on CPU (per-sample fetch and collate): +39.00 s", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("waiting for data: +38.99 s", 0), 0u) << lines[2];
}

TEST(ExplainCommand, MetricsComeFromTheResultRecord) {
  const std::string path = write_direct_vs_loader("metrics");
  std::ostringstream out;
  ExplainOptions options;
  options.db = path;
  options.json = true;
  ASSERT_TRUE(explain(options, out).ok());
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["run"]["run_id"], 2);  // the last run by default
  EXPECT_EQ(doc["metrics"]["verdict"], "HIGHLY input-bound");
  EXPECT_EQ(doc["metrics"]["wait_fraction_source"], "result record");
  EXPECT_NEAR(doc["metrics"]["h2d_gbps"].get<double>(), 0.07, 1e-9);
  EXPECT_EQ(doc["metrics"]["batch_wait"]["count"], 10);
  EXPECT_EQ(doc["roles"][1]["role"], "worker");
  EXPECT_EQ(doc["roles"][1]["page_allocs"], 60000);
}

// A run that failed, or was interrupted before its first epoch, gets no data-loading verdict however
// long its main loop waited: explain says it failed and why instead.
std::string write_cut_short_run(const std::string& name, const std::string& status, const std::string& error,
                                const std::string& result_json) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  RunSpec spec;
  spec.label = "loader w2";
  spec.config_json = loader_config(2);
  spec.result_json = result_json;
  spec.status = status;
  spec.end_ns = 1000 * kMs;
  const int64_t run = db->add_run(spec);
  db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 1000 * kMs, std::nullopt, std::nullopt});
  for (int i = 0; i < 10; ++i) db->add_event(run, "batch_wait", i * 100 * kMs, 90 * kMs, kMain, kMain);
  EXPECT_TRUE(db->db().exec(fmt::format("UPDATE runs SET error = '{}' WHERE run_id = {}", error, run)).ok());
  return path;
}

std::pair<nlohmann::json, std::string> explain_both(const std::string& path) {
  ExplainOptions options;
  options.db = path;
  options.json = true;
  std::ostringstream json, text;
  EXPECT_TRUE(explain(options, json).ok());
  options.json = false;
  EXPECT_TRUE(explain(options, text).ok());
  return {nlohmann::json::parse(json.str()), text.str()};
}

TEST(ExplainCommand, AFailedRunGetsNoVerdictButWhyItFailed) {
  const std::string error = "sample 17 of /data/shard-0.bin failed its crc check";
  const auto [doc, text] = explain_both(write_cut_short_run("failed-run", "failed", error, R"({"status":"failed"})"));
  EXPECT_EQ(doc["metrics"]["verdict"], "none (the run failed)");
  EXPECT_NE(text.find("VERDICT: none (the run failed: " + error + ")"), std::string::npos) << text;
  EXPECT_EQ(text.find("HIGHLY input-bound"), std::string::npos) << text;
}

TEST(ExplainCommand, ARunInterruptedBeforeItsFirstEpochGetsNoVerdict) {
  const auto [doc, text] = explain_both(write_cut_short_run(
      "interrupted-run", "interrupted", "interrupted", R"({"status":"interrupted","epoch_seconds":[]})"));
  EXPECT_EQ(doc["metrics"]["verdict"], "none (the run ended before it measured anything)");
  EXPECT_NE(text.find("VERDICT: none (the run ended before it measured anything)"), std::string::npos) << text;
}

TEST(ExplainCommand, AnInterruptedRunThatKeptEpochsKeepsItsVerdict) {
  const auto [doc, text] = explain_both(write_cut_short_run(
      "interrupted-kept", "interrupted", "interrupted",
      R"({"status":"interrupted","epoch_seconds":[1.0],"epoch_median_s":1.0,"wait_fraction":0.9})"));
  EXPECT_EQ(doc["metrics"]["verdict"], "HIGHLY input-bound");
}

// The kernel programs' times as the tracer stores them (tracer.cc's kProgramTimeSetting) give the
// programs' cost as a share of the traced threads' on-CPU time, in JSON and words; a run without
// them, or with unreadable ones, says why.
TracingCost tracing_cost_with(const std::string& name, const std::optional<std::string>& programs,
                              const std::vector<std::pair<std::string_view, std::string>>& settings = {}) {
  const std::string path = temp_db_path(name);
  auto db = TraceFixture::create(path);
  RunSpec run;
  run.end_ns = 1000 * kMs;
  const int64_t id = db->add_run(run);
  db->add_thread(id, {kMain, kMain, 1, "python3", "main", 0, 1000 * kMs, std::nullopt, std::nullopt});
  db->add_thread_stats(id, {kMain, kMain, {10, 0, 600 * kMs, 400 * kMs, kMs, 0, 0, 0, 0, 0}});
  db->add_thread_stats(id, {kWorkerA, kMain, {10, 0, 200 * kMs, 800 * kMs, kMs, 0, 0, 0, 0, 0}});
  db->add_event(id, "offcpu_blocked", 0, 400 * kMs, kMain, kMain);
  if (programs) db->set_setting(id, std::string(contract::kProgramTimeSetting), *programs);
  for (const auto& [key, value] : settings) db->set_setting(id, std::string(key), value);
  db.reset();
  auto trace = TraceFile::open(path);
  EXPECT_TRUE(trace.ok());
  auto record = (*trace)->run(id);
  EXPECT_TRUE(record.ok()) << record.error().message;
  auto context = (*trace)->context(*record);
  EXPECT_TRUE(context.ok());
  return tracing_cost(*context);
}

TEST(TracingCost, TheKernelProgramsTimeIsAShareOfTheTracedThreadsCpuTime) {
  const TracingCost cost = tracing_cost_with(
      "program-time", R"({"on_fork":{"runs":4,"ns":2000},"on_sched_switch":{"runs":20000,"ns":8000000}})");
  ASSERT_TRUE(cost.programs) << cost.programs_unknown_because;
  EXPECT_EQ(cost.programs->runs, 20004);
  EXPECT_EQ(cost.programs->ns, 8'002'000);
  EXPECT_EQ(cost.programs->programs.front().program, "on_sched_switch");  // most time first
  EXPECT_EQ(cost.programs->traced_cpu_ns, 800 * kMs);
  ASSERT_TRUE(cost.programs->share);
  EXPECT_NEAR(*cost.programs->share, 8.002 / 800, 1e-12);
  const auto lines = tracing_cost_lines(cost);
  ASSERT_EQ(lines.size(), 1u);  // no CUDA probe: only the programs' line
  EXPECT_NE(lines[0].find(": 1.0 % of the traced threads' 800 ms on CPU (the programs' own time"), std::string::npos) << lines[0];
  const auto json = to_json(cost);
  EXPECT_EQ(json["kernel_programs"]["ns"], 8'002'000);
  EXPECT_EQ(json["kernel_programs"]["programs"][0]["program"], "on_sched_switch");
  EXPECT_TRUE(json["kernel_programs_unknown_because"].is_null());
}

TEST(TracingCost, TheCpuProfilesProgramIsShownApart) {
  const TracingCost cost = tracing_cost_with(
      "program-time-profile",
      R"({"on_sched_switch":{"runs":20000,"ns":8000000},"on_cpu_sample":{"runs":1000,"ns":16000000}})");
  ASSERT_TRUE(cost.programs) << cost.programs_unknown_because;
  EXPECT_EQ(cost.programs->ns, 8'000'000);  // the scheduler's alone
  ASSERT_EQ(cost.programs->programs.size(), 1u);
  ASSERT_TRUE(cost.programs->profile);
  EXPECT_EQ(cost.programs->profile->runs, 1000);
  ASSERT_TRUE(cost.programs->profile_share);
  EXPECT_NEAR(*cost.programs->profile_share, 16.0 / 800, 1e-12);
  const auto lines = tracing_cost_lines(cost);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "the CPU profile's sampling program ran 16 ms (1,000 clock ticks, 16 µs each): 2.0 % of "
                      "the traced threads' 800 ms on CPU")
      << lines[1];
  const auto json = to_json(cost);
  EXPECT_EQ(json["kernel_programs"]["profile_program"]["ns"], 16'000'000);
  EXPECT_TRUE(to_json(tracing_cost_with("program-time-no-profile", R"({"on_fork":{"runs":4,"ns":2000}})"))
                  ["kernel_programs"]["profile_program"]
                      .is_null());
}

TEST(TracingCost, TheHealthSamplersOwnCpuIsAShareOfTheJobs) {
  const TracingCost cost = tracing_cost_with("health-sampler", std::nullopt,
                                             {{contract::kJobUserNsSetting, "3000000000"},
                                              {contract::kJobSystemNsSetting, "1000000000"},
                                              {contract::kHealthSamplerCpuNsSetting, "12000000"}});
  ASSERT_TRUE(cost.health_sampler);
  EXPECT_EQ(cost.health_sampler->cpu_ns, 12'000'000);
  ASSERT_TRUE(cost.health_sampler->job_share);
  EXPECT_NEAR(*cost.health_sampler->job_share, 0.003, 1e-12);
  const auto lines = tracing_cost_lines(cost);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("the worker-health sampler read /proc for 12 ms of its own CPU"), std::string::npos)
      << lines.back();
  EXPECT_NE(lines.back().find(": 0.3 % of the job's"), std::string::npos) << lines.back();
  EXPECT_EQ(to_json(cost)["health_sampler"]["cpu_ns"], 12'000'000);
  EXPECT_TRUE(to_json(tracing_cost_with("health-sampler-off", std::nullopt))["health_sampler"].is_null());
}

// The live metrics' cost, said as the health sampler's is (one helper record, one sentence): publishing
// and serving apart, their sum a share of the job's CPU; a run without metrics has no such line.
TEST(TracingCost, TheLiveMetricsOwnCpuIsAShareOfTheJobsWithItsParts) {
  const TracingCost cost = tracing_cost_with("live-metrics", std::nullopt,
                                             {{contract::kJobUserNsSetting, "3000000000"},
                                              {contract::kJobSystemNsSetting, "1000000000"},
                                              {contract::kHealthSamplerCpuNsSetting, "12000000"},
                                              {contract::kMetricsPublishCpuNsSetting, "9000000"},
                                              {contract::kMetricsServeCpuNsSetting, "5000000"},
                                              {contract::kMetricsScrapesSetting, "30"}});
  ASSERT_TRUE(cost.live_metrics);
  EXPECT_EQ(cost.live_metrics->name, kLiveMetricsHelper);
  EXPECT_EQ(cost.live_metrics->cpu_ns, 14'000'000);
  ASSERT_TRUE(cost.live_metrics->job_share);
  EXPECT_NEAR(*cost.live_metrics->job_share, 0.0035, 1e-12);
  ASSERT_EQ(cost.live_metrics->parts.size(), 2u);
  EXPECT_EQ(cost.live_metrics->parts[1].count, 30);
  const auto lines = tracing_cost_lines(cost);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.back(), "the live metrics took 14 ms of CPU (gathering and publishing each second 9 ms, serving "
                          "30 scrapes 5 ms): 0.4 % of the job's CPU");
  EXPECT_EQ(lines[lines.size() - 2].rfind("the worker-health sampler read /proc for 12 ms of its own CPU (", 0), 0u)
      << lines[lines.size() - 2];
  const auto json = to_json(cost);
  EXPECT_EQ(json["live_metrics"]["name"], "live_metrics");
  EXPECT_EQ(json["live_metrics"]["cpu_ns"], 14'000'000);
  EXPECT_EQ(json["live_metrics"]["parts"][0]["part"], "publish");
  EXPECT_TRUE(json["live_metrics"]["parts"][0]["count"].is_null());
  EXPECT_EQ(json["live_metrics"]["parts"][1]["part"], "serve");
  EXPECT_EQ(json["live_metrics"]["parts"][1]["count"], 30);
  EXPECT_EQ(json["health_sampler"]["name"], "health_sampler");
  EXPECT_TRUE(json["health_sampler"]["parts"].empty());

  // Only pushing (no scrapes served): the publishing part alone; attached (no job CPU): no share.
  const TracingCost pushed = tracing_cost_with("live-metrics-push", std::nullopt,
                                               {{contract::kMetricsPublishCpuNsSetting, "2000000"}});
  ASSERT_TRUE(pushed.live_metrics);
  EXPECT_FALSE(pushed.live_metrics->job_share);
  EXPECT_EQ(tracing_cost_lines(pushed).back(), "the live metrics took 2 ms of CPU (gathering and publishing each "
                                               "second 2 ms)");

  const TracingCost off = tracing_cost_with("live-metrics-off", std::nullopt,
                                            {{contract::kJobUserNsSetting, "3000000000"},
                                             {contract::kJobSystemNsSetting, "1000000000"}});
  EXPECT_FALSE(off.live_metrics);
  for (const std::string& line : tracing_cost_lines(off)) EXPECT_EQ(line.find("live metrics"), std::string::npos) << line;
  EXPECT_TRUE(to_json(off)["live_metrics"].is_null());
}

TEST(TracingCost, ARunWithoutReadableProgramTimesSaysWhy) {
  const TracingCost before = tracing_cost_with("program-time-none", std::nullopt);
  EXPECT_FALSE(before.programs);
  EXPECT_EQ(before.programs_unknown_because, "this run predates timing the kernel programs");
  EXPECT_EQ(to_json(before)["kernel_programs_unknown_because"], "this run predates timing the kernel programs");
  const TracingCost broken = tracing_cost_with("program-time-broken", R"({"on_fork":{"runs":-1}})");
  EXPECT_FALSE(broken.programs);
  EXPECT_NE(broken.programs_unknown_because.find("program on_fork"), std::string::npos);
  EXPECT_FALSE(tracing_cost_with("program-time-text", "not json").programs);
  // A DB from elsewhere never takes the reader down: a wrong-typed field or a value nested too
  // deep is a reason, not an exception or a stack overflow.
  const TracingCost typed = tracing_cost_with("program-time-typed", R"({"on_fork":{"runs":"4","ns":2000}})");
  EXPECT_FALSE(typed.programs);
  EXPECT_NE(typed.programs_unknown_because.find("program on_fork"), std::string::npos);
  const std::string deep = R"({"on_fork":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}";
  const TracingCost nested = tracing_cost_with("program-time-deep", deep);
  EXPECT_FALSE(nested.programs);
  EXPECT_EQ(nested.programs_unknown_because, "its stored program times are not a JSON object");
}

// A bounded epoch is extended at its own steady pace: what it paid once (in its first batch) is
// not multiplied by whole / measured.
TEST(WholeEpochs, BoundedEpochsAreExtendedAtTheirSteadyPace) {
  const nlohmann::json config = {{"samples", 1000}, {"batch_size", 100}, {"drop_last", false}, {"max_batches", 3}};
  // Two measured epochs of 3 batches: the first ends after 50 ms, then one every 10 ms (70 ms).
  nlohmann::json batches = nlohmann::json::array();
  for (int64_t epoch : {1, 2}) {
    const int64_t t0 = epoch * 1'000'000'000;
    batches.push_back({{"epoch", epoch}, {"index", 0}, {"wait_start_ns", t0}, {"wait_ns", 45'000'000},
                       {"compute_ns", 5'000'000}});
    for (int64_t i = 1; i < 3; ++i)
      batches.push_back({{"epoch", epoch}, {"index", i}, {"wait_start_ns", t0 + 40'000'000 + i * 10'000'000},
                         {"wait_ns", 5'000'000}, {"compute_ns", 5'000'000}});
  }
  nlohmann::json result = {{"epoch_seconds", {0.07, 0.07}}, {"batches", batches}};
  auto cut = epoch_cut(config);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->measured, 3);
  EXPECT_EQ(cut->whole, 10);
  auto whole = whole_epoch_seconds(config, result);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_NEAR(whole[0], 0.07 + 7 * 0.010, 1e-9);  // not 0.07 * 10 / 3
  EXPECT_NEAR(whole[1], 0.14, 1e-9);
  // Without usable batch records (truncated): scaled by whole / measured.
  result["batches_truncated"] = true;
  whole = whole_epoch_seconds(config, result);
  EXPECT_NEAR(whole[1], 0.07 * 10 / 3, 1e-9);
  // Whole epochs, several ranks or a cut past the epoch: as measured.
  EXPECT_EQ(whole_epoch_seconds(nlohmann::json{{"samples", 1000}, {"batch_size", 100}}, result)[0], 0.07);
  EXPECT_FALSE(epoch_cut({{"samples", 1000}, {"batch_size", 100}, {"max_batches", 3}, {"ranks", 2}}));
  EXPECT_FALSE(epoch_cut({{"samples", 1000}, {"batch_size", 100}, {"max_batches", 10}}));
}

}  // namespace
// A user's job seen by the observer: 3 epochs of 4 batches, each batch 10 ms of compute and 2 ms of
// wait, each epoch's first batch 60 ms; `knobs` the loader's.
struct ObservedEpochs {
  RunContext context;
  EventSet batches;
  TimeWindow window;
};
ObservedEpochs observed_epochs(const nlohmann::json& knobs, int workers_started) {
  constexpr int64_t kMs = 1'000'000;
  ObservedEpochs o;
  o.context.run.kind = std::string(contract::kind::kCommand);
  o.context.run.start_ns = 0;
  o.context.run.end_ns = 1000 * kMs;
  o.context.settings[std::string(contract::kBatchSourceSetting)] = std::string(contract::kBatchSourceObserver);
  LoaderRecord loader;
  loader.knobs = knobs;
  o.context.loaders = {loader};
  int64_t t = 0;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int64_t index = 0; index < 4; ++index) {
      const int64_t wait = index == 0 ? 60 * kMs : 2 * kMs;
      o.batches.by_op[std::string(contract::op::kBatchWait)].push_back({t, wait, 100, index});
      o.batches.by_op[std::string(contract::op::kBatchCompute)].push_back({t + wait, 10 * kMs, 100, index});
      t += wait + 10 * kMs;
    }
  for (int w = 0; w < workers_started; ++w) o.batches.by_op["worker_start"].push_back({0, 40 * kMs, 200 + w, w});
  o.window = analysis_window(o.context.run, std::nullopt, std::nullopt);
  return o;
}

TEST(EpochStartup, WithoutWorkersTheFirstBatchWaitedForTheIteratorsSetUp) {
  auto o = observed_epochs({{"num_workers", 0}, {"batches_per_epoch", 4}}, 0);
  const RunMetrics m = compute_run_metrics(o.context, o.batches, o.window, 0);
  ASSERT_TRUE(m.startup);
  EXPECT_EQ(m.startup->waited_for, StartupWait::iterator_setup);
  EXPECT_EQ(m.startup->epochs, 3);
  EXPECT_EQ(m.startup->per_epoch_ns(), 60'000'000);
  // The steady step: (9 waits of 2 ms + 12 computes of 10 ms) / 12 batches = 11.5 ms; an epoch of 4
  // batches = 60 + 4 × 11.5 = 106 ms, 60 of them start-up.
  ASSERT_TRUE(m.startup->share_of_epoch);
  EXPECT_NEAR(*m.startup->share_of_epoch, 60.0 / 106.0, 1e-9);
  const std::string line = evidence_lines(m, "")[0];
  EXPECT_EQ(line.find("workers starting"), std::string::npos) << line;
  EXPECT_NE(line.find("the iterator's set-up"), std::string::npos) << line;
  EXPECT_NE(line.find("an epoch of 4 batches"), std::string::npos) << line;
  auto chain = epoch_startup_chain(m);
  ASSERT_TRUE(chain);
  EXPECT_EQ(chain->victim, kEpochStartVictim);
  EXPECT_EQ(chain->cause.code(), "main.startup");
  ASSERT_EQ(chain->changes.size(), 1u);
  EXPECT_EQ(chain->changes[0].knob, kSamplerKnob);
}

TEST(EpochStartup, WithWorkersItIsTheirStartUpAndPersistentWorkersTheChange) {
  auto o = observed_epochs({{"num_workers", 2}, {"persistent_workers", false}, {"batches_per_epoch", 4}}, 6);
  const RunMetrics m = compute_run_metrics(o.context, o.batches, o.window, 0);
  ASSERT_TRUE(m.startup);
  EXPECT_EQ(m.startup->waited_for, StartupWait::worker_startup);
  EXPECT_EQ(m.startup->workers_started, 6);
  EXPECT_EQ(m.startup->worker_ready_ns, 40'000'000);
  const std::string line = evidence_lines(m, "")[0];
  EXPECT_NE(line.find("the workers starting: fork to ready 40"), std::string::npos) << line;
  auto chain = epoch_startup_chain(m);
  ASSERT_TRUE(chain);
  EXPECT_EQ(chain->cause.code(), "worker.startup");
  ASSERT_EQ(chain->changes.size(), 1u);
  EXPECT_EQ(chain->changes[0].knob, "persistent_workers");
  EXPECT_EQ(chain->changes[0].value, "on");
}

TEST(EpochStartup, LongEpochsOrAnUnknownLengthMakeNoCause) {
  auto unknown = observed_epochs({{"num_workers", 0}}, 0);
  const RunMetrics m = compute_run_metrics(unknown.context, unknown.batches, unknown.window, 0);
  ASSERT_TRUE(m.startup);
  EXPECT_FALSE(m.startup->share_of_epoch);
  EXPECT_FALSE(epoch_startup_chain(m));
  auto long_epochs = observed_epochs({{"num_workers", 0}, {"batches_per_epoch", 100000}}, 0);
  const RunMetrics l = compute_run_metrics(long_epochs.context, long_epochs.batches, long_epochs.window, 0);
  ASSERT_TRUE(l.startup && l.startup->share_of_epoch);
  EXPECT_LT(*l.startup->share_of_epoch, kStartupMattersShare);
  EXPECT_FALSE(epoch_startup_chain(l));
}

}  // namespace ingero::reports::testing
