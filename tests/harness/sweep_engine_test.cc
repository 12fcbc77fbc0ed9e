// SPDX-License-Identifier: Apache-2.0
// The sweep engine (harness/sweep_engine: run_sweep) driven by a scripted PointRunner that
// stores each run's step times in a real trace DB, in milliseconds: which point is recommended
// when a cheaper point's wide interval overlaps the fastest's, and what is said when the runs
// cannot tell them apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sqlite.h"
#include "common/trace_contract.h"
#include "harness/sweep_engine.h"
#include "reports/documents/trace_reports.h"
#include "reports/data/trace_data.h"

namespace ingero::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Each point's seconds per step, run after run (the last list repeats); verification runs
// measure the point's steady value.
struct Script {
  std::vector<std::vector<double>> measure;
  double verify = 0;
};

class ScriptedRunner final : public PointRunner {
 public:
  explicit ScriptedRunner(std::map<std::string, Script> script, double run_s = 0)
      : script_(std::move(script)), run_s_(run_s) {}

  Result<PointRun> run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                       std::optional<double>, int64_t sweep_id) override {
    const Script& s = script_.at(point.label);
    std::this_thread::sleep_for(std::chrono::duration<double>(run_s_));  // what a budget counts
    std::vector<double> samples;
    if (phase == contract::sweep_phase::kVerify) {
      samples.assign(5, s.verify);
    } else {
      int& n = measured_[point.label];
      samples = s.measure[std::min<size_t>(static_cast<size_t>(n), s.measure.size() - 1)];
      ++n;
    }
    tracer::RunStart start;
    start.label = "job " + point.label;
    start.kind = std::string(contract::kind::kCommand);
    start.config_json = point.config.dump();
    start.machine_json = "{}";
    start.traced = false;
    start.sweep_id = sweep_id;
    start.sweep_point = point.label;
    start.sweep_phase = std::string(phase);
    auto id = db.begin_run(start);
    if (!id) return id.error();
    const json record = {{"status", "ok"}, {"epoch_seconds", samples}};
    tracer::RunEnd end;
    end.status = std::string(contract::status::kOk);
    end.result_json = record.dump();
    if (Status st = db.finish_run(*id, end); !st) return st.error();
    PointRun run;
    run.outcome.run_id = *id;
    run.outcome.status = std::string(contract::status::kOk);
    run.outcome.result = record;
    run.samples = samples;
    if (auto told = told_.find(point.label); told != told_.end()) run.knobs = told->second;
    return run;
  }
  // The knobs a run of `label` says it had (a job point that did not fix them).
  void tell(const std::string& label, Knobs knobs) { told_[label] = std::move(knobs); }
  int measured(const std::string& label) const {
    auto it = measured_.find(label);
    return it == measured_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, Script> script_;
  std::map<std::string, int> measured_;
  std::map<std::string, Knobs> told_;
  double run_s_;
};

SweepPoint job_point(int workers, int position) {
  SweepPoint p;
  p.label = "w" + std::to_string(workers);
  p.knobs = Knobs{{knob::kMode, std::string(contract::kJobMode)}, {knob::kNumWorkers, std::to_string(workers)}};
  p.config = {{"mode", std::string(contract::kJobMode)}, {"num_workers", workers}, {"knobs", json(p.knobs)}};
  p.position = position;
  return p;
}

class SweepEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ingero-sweep-engine-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    flags_.workload.trace.db = (dir_ / "sweep.db").string();
    flags_.workload.trace.no_trace = true;
    flags_.search = "grid";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a sweep of w0 (the baseline), w8 and w16 and returns its recommendation and output.
  std::string sweep(ScriptedRunner& runner, std::string* output) {
    SweepSpec spec;
    spec.rules = rules_from(flags_);
    spec.points = {job_point(0, 0), job_point(8, 1), job_point(16, 2)};
    spec.request = {{"command", {"python3", "train.py"}}, {"warmup_steps", 10}, {"steps", 50}, {"seconds", 0}};
    EXPECT_TRUE(choose_baseline(spec, "w0"));
    std::fflush(stdout);
    ::testing::internal::CaptureStdout();
    auto done = run_sweep(std::move(spec), runner, flags_);
    std::fflush(stdout);
    *output = ::testing::internal::GetCapturedStdout();
    EXPECT_TRUE(done) << (done ? "" : done.error().message);
    auto trace = reports::TraceFile::open(flags_.workload.trace.db);
    if (!trace) return "?";
    auto report = reports::make_recommend_report(**trace, {flags_.workload.trace.db, std::nullopt, std::nullopt, false});
    if (!report) return "?";
    return report->rec().label;
  }

  fs::path dir_;
  SweepFlags flags_;
};

const Script kBaseline{{{0.200, 0.201, 0.199, 0.200, 0.200}}, 0.200};
const Script kFastest{{{0.0660, 0.0662, 0.0658, 0.0661, 0.0659}}, 0.066};

// The case: w16 is the fastest; w8's first runs hold a few fast windows among slow ones,
// so that after the most runs of the search its interval still reaches w16's, and the rule
// "the cheapest not told apart from the fastest" chose w8. One more run of w8 tells them apart.
TEST_F(SweepEngine, ACheaperPointWithAWideIntervalIsRepeatedUntilTheFasterOneIsToldApart) {
  const Script noisy_w8{{{0.060, 0.062, 0.085, 0.095, 0.102},
                         {0.063, 0.080, 0.086, 0.090, 0.099},
                         {0.064, 0.082, 0.085, 0.088, 0.097},
                         {0.081, 0.083, 0.085, 0.087, 0.090}},
                        0.085};
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", noisy_w8}, {"w16", kFastest}});
  std::string output;
  EXPECT_EQ(sweep(runner, &output), "w16") << output;
  EXPECT_GT(runner.measured("w8"), flags_.max_repeats) << "w8 was not measured beyond the search's runs\n" << output;
  EXPECT_NE(output.find("separating the fastest points before verifying: w16, w8"), std::string::npos) << output;
  EXPECT_NE(output.find("verifying: w16 against the baseline w0"), std::string::npos) << output;
}

// When the most runs cannot tell them apart, the cheaper point stays, and the sweep says how much
// faster the fastest measured and the command that would settle it.
TEST_F(SweepEngine, PointsNeverToldApartKeepTheCheaperAndSayHowToSettleIt) {
  flags_.max_repeats = 1;  // separation: 2 runs a point at most
  const Script wide_w8{{{0.060, 0.062, 0.085, 0.095, 0.102}}, 0.085};
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", wide_w8}, {"w16", kFastest}});
  std::string output;
  EXPECT_EQ(sweep(runner, &output), "w8") << output;
  EXPECT_EQ(runner.measured("w8"), 2) << output;
  EXPECT_EQ(runner.measured("w16"), 1) << "w16's interval is tight: it is not what keeps them together\n" << output;
  EXPECT_NE(output.find("not told apart after 2 runs each at most: w16 measured 1.29× faster than w8"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("ingero-bench sweep --num-workers 16,8 --max-repeats 2 --db " + flags_.workload.trace.db +
                        " --no-trace --warmup-steps 10 --steps 50 -- python3 train.py"),
            std::string::npos)
      << output;
}

// The budget: the search measured each point once, and the budget, which keeps room for
// one verification round, has none for another run of w8. The cheaper point stays, and the sweep
// says so, with the budget the settling sweep would need. (Runs of 0.5 s: the budget's checks
// before w16's run and before a further run have 0.2 s and 0.3 s to spare.)
TEST_F(SweepEngine, ABudgetThatEndsBeforeThePointsAreToldApartSaysWhatWouldSettleIt) {
  flags_.budget_s = 2.7;
  const Script wide_w8{{{0.060, 0.062, 0.085, 0.095, 0.102}}, 0.085};
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", wide_w8}, {"w16", kFastest}}, 0.5);
  std::string output;
  EXPECT_EQ(sweep(runner, &output), "w8") << output;
  EXPECT_EQ(runner.measured("w8"), 1) << output;
  EXPECT_EQ(runner.measured("w16"), 1) << output;
  EXPECT_NE(output.find("not told apart when the budget of "), std::string::npos) << output;
  EXPECT_NE(output.find("w16 measured 1.29× faster than w8"), std::string::npos) << output;
  EXPECT_NE(output.find("ingero-bench sweep --num-workers 16,8 --budget "), std::string::npos) << output;
  EXPECT_NE(output.find("verifying: w8 against the baseline w0, 1 interleaved round"), std::string::npos) << output;
}

// The end of a sweep that could not be stored (a full disk) is the sweep's error: it once
// reported a recommendation while the DB kept the sweep 'running'.
TEST_F(SweepEngine, ASweepWhoseEndCannotBeStoredFails) {
  {
    auto db = tracer::TraceDb::open(flags_.workload.trace.db);
    ASSERT_TRUE(db) << db.error().message;
  }
  auto connection = sql::open(flags_.workload.trace.db, sql::Mode::read_write, 1000);
  ASSERT_TRUE(connection) << connection.error().message;
  ASSERT_TRUE(connection->exec("CREATE TRIGGER full_disk BEFORE UPDATE ON sweeps WHEN NEW.status = 'done' "
                               "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"));
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", kFastest}});
  SweepSpec spec;
  spec.rules = rules_from(flags_);
  spec.points = {job_point(0, 0), job_point(8, 1)};
  spec.request = {{"command", {"python3", "train.py"}}, {"warmup_steps", 10}, {"steps", 50}, {"seconds", 0}};
  ASSERT_TRUE(choose_baseline(spec, "w0"));
  ::testing::internal::CaptureStdout();
  auto done = run_sweep(std::move(spec), runner, flags_);
  const std::string output = ::testing::internal::GetCapturedStdout();
  ASSERT_FALSE(done) << output;
  EXPECT_NE(done.error().message.find("disk is full"), std::string::npos) << done.error().message;
}

// A point's skip cause is stored as a value, so that what depends on it does not depend on the
// reason's words: a budget's skips stay resumable whatever their reason says, and a point of a file
// that stored only words (older than schema version 10) is read by them.
TEST_F(SweepEngine, ABudgetSkipIsResumableByItsStoredCause) {
  flags_.budget_s = 0.5;  // w0's run of 0.3 s leaves no room for w8's and a verification round
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", kFastest}, {"w16", kFastest}}, 0.3);
  std::string output;
  sweep(runner, &output);
  ASSERT_EQ(runner.measured("w8"), 0) << output;
  auto db = sql::open(flags_.workload.trace.db, sql::Mode::read_write, 1000);
  ASSERT_TRUE(db) << db.error().message;
  auto budget_skips = db->query_int("SELECT count(*) FROM sweep_points WHERE state = 'skipped' AND cause = 'budget'");
  ASSERT_TRUE(budget_skips) << budget_skips.error().message;
  EXPECT_EQ(budget_skips->value_or(0), 2) << output;
  auto resumable = [&] {
    auto spec = load_sweep(flags_.workload.trace.db, std::nullopt);
    if (!spec) return spec.error().message;
    for (const auto& p : spec->points)
      if (p.label == "w16") return p.state;
    return std::string("no w16");
  };
  ASSERT_TRUE(db->exec("UPDATE sweep_points SET reason = 'out of time' WHERE point = 'w16'"));
  EXPECT_EQ(resumable(), contract::point_state::kPending);
  ASSERT_TRUE(db->exec("UPDATE sweep_points SET cause = NULL, reason = 'the budget of 0s was reached (a run of it: ~0s "
                       "estimated)' WHERE point IN ('w8', 'w16')"));
  EXPECT_EQ(resumable(), contract::point_state::kPending);
}

// A stored sweep whose rules or points were damaged outside ingero-bench is bad input naming the
// file, the sweep and the column when it is resumed: the typed reads of them once threw out of main.
TEST_F(SweepEngine, ADamagedStoredSweepIsBadInputWhenResumed) {
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", kFastest}, {"w16", kFastest}});
  std::string output;
  sweep(runner, &output);
  auto db = sql::open(flags_.workload.trace.db, sql::Mode::read_write, 1000);
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE(db->exec("UPDATE sweeps SET status = 'interrupted', rules_json = '{\"max_repeats\": \"many\"}'"));
  auto resumed = load_sweep(flags_.workload.trace.db, std::nullopt);
  ASSERT_FALSE(resumed);
  EXPECT_EQ(resumed.error().exit_code, kExitBadInput);
  EXPECT_NE(resumed.error().message.find("sweep 1's rules_json is damaged: 'max_repeats' is string"),
            std::string::npos)
      << resumed.error().message;
  ASSERT_TRUE(db->exec("UPDATE sweep_points SET config_json = '[1]' WHERE point = 'w8'"));
  auto again = load_sweep(flags_.workload.trace.db, std::nullopt);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().exit_code, kExitBadInput);
  EXPECT_NE(again.error().message.find("sweep 1 point 'w8''s config_json is damaged"), std::string::npos)
      << again.error().message;
  EXPECT_NE(again.error().message.find(flags_.workload.trace.db), std::string::npos) << again.error().message;
}

// A point with the knobs that the job as written turned out to have is that point: skipped, with
// the cause 'duplicate', and not run.
TEST_F(SweepEngine, APointWithTheKnobsTheJobAsWrittenHadIsSkippedAsADuplicate) {
  ScriptedRunner runner({{"as written", kBaseline}, {"w8", kFastest}, {"w16", kFastest}});
  SweepPoint as_written = job_point(0, 0);
  as_written.label = "as written";
  as_written.knobs = Knobs{};
  as_written.config = {{"mode", std::string(contract::kJobMode)}};
  runner.tell("as written", Knobs{{knob::kMode, std::string(contract::kJobMode)}, {knob::kNumWorkers, "8"}});
  SweepSpec spec;
  spec.rules = rules_from(flags_);
  spec.points = {as_written, job_point(8, 1), job_point(16, 2)};
  spec.request = {{"command", {"python3", "train.py"}}, {"warmup_steps", 10}, {"steps", 50}, {"seconds", 0}};
  ASSERT_TRUE(choose_baseline(spec, "as written"));
  ::testing::internal::CaptureStdout();
  auto done = run_sweep(std::move(spec), runner, flags_);
  const std::string output = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(done) << done.error().message << output;
  EXPECT_EQ(runner.measured("w8"), 0) << output;
  auto db = sql::open(flags_.workload.trace.db, sql::Mode::read_only, 1000);
  ASSERT_TRUE(db) << db.error().message;
  auto duplicates = db->query_int("SELECT count(*) FROM sweep_points WHERE point = 'w8' AND state = 'skipped' AND "
                                  "cause = 'duplicate'");
  ASSERT_TRUE(duplicates) << duplicates.error().message;
  EXPECT_EQ(duplicates->value_or(0), 1) << output;
}

// A cheaper point the fastest is told apart from at once is not run again.
TEST_F(SweepEngine, AFastestPointAlreadyApartIsVerifiedWithoutMoreRuns) {
  const Script slow_w8{{{0.085, 0.086, 0.084, 0.085, 0.085}}, 0.085};
  ScriptedRunner runner({{"w0", kBaseline}, {"w8", slow_w8}, {"w16", kFastest}});
  std::string output;
  EXPECT_EQ(sweep(runner, &output), "w16") << output;
  EXPECT_EQ(runner.measured("w8"), 1) << output;
  EXPECT_EQ(output.find("separating"), std::string::npos) << output;
}

}  // namespace
}  // namespace ingero::harness
