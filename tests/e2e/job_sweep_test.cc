// SPDX-License-Identifier: Apache-2.0
// ingero-bench sweep -- COMMAND: a sweep of a user's own torch training job (tests/e2e/jobs/
// train_loop.py), its DataLoader changed through the observer's overrides or a {num_workers}
// template, each point timed from the observer's batch records and then stopped: the verified
// recommendation, what the runs record, that no process of the job is left behind, the budget
// and --resume, and the errors a user meets (no DataLoader, an unused template, a job that ends
// before its steps were timed).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"

namespace {

namespace fs = std::filesystem;
using ingero::testing::capture;
using ingero::testing::Output;
using nlohmann::json;

const std::string kBinary = INGERO_BENCH_BINARY;
const std::string kJob = INGERO_TRAIN_LOOP;
const std::string kKnownBest = INGERO_KNOWN_BEST;

// Samples that wait 3 ms each (a sleep, as a read from storage): a batch of 8 costs the loop
// ~24 ms without workers and about half that with two, by construction, even on 2 cores. The
// job's own --seconds is far beyond any point's run: the sweep, not the job, ends each run.
constexpr const char* kWaitingLoop = "--sample-ms 0 --sample-wait-ms 3 --batch 8 --step-ms 2 --seconds 100";
// Short runs: 3 warm-up steps, then 15 timed (5 windows of 3).
constexpr const char* kShort = "--no-trace --steps 15 --warmup-steps 3";

// The first of /usr/bin/python3, python3 that imports torch; empty when none does.
std::string python_with_torch() {
  for (const char* python : {"/usr/bin/python3", "python3"})
    if (capture(std::string(python) + " -c 'import torch' 2>/dev/null").exit_code == 0) return python;
  return "";
}

// One value of a query on the DB ("" for NULL, "?" when the query failed).
std::string query_text(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value = "?";
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      value = sqlite3_column_text(st, 0) == nullptr ? "" : reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    else
      ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return value;
}

// Every row of a one-column query.
std::vector<std::string> query_column(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> values;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW)
        values.emplace_back(sqlite3_column_text(st, 0) == nullptr
                                ? ""
                                : reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    } else {
      ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return values;
}

// The processes (pid: command line) whose arguments hold `flag value` one after the other.
std::vector<std::string> processes_with(const std::string& flag, const std::string& value) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t at = 0; at < cmdline.size();) {
      const size_t end = cmdline.find('\0', at);
      args.push_back(cmdline.substr(at, end == std::string::npos ? std::string::npos : end - at));
      at = end == std::string::npos ? cmdline.size() : end + 1;
    }
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag && args[i + 1] == value) {
        std::string line = pid + ":";
        for (const auto& a : args) line += " " + a;
        found.push_back(line);
        break;
      }
  }
  return found;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

class JobSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = python_with_torch();
    if (python_.empty()) GTEST_SKIP() << "no python3 here imports torch (install python3-torch)";
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("ingero-job-sweep-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A --samples value no other process on the machine runs with: how this test's job is found in /proc.
    static int serial = 0;
    marker_ = std::to_string(50'000 + (getpid() % 5'000) * 16 + serial++);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string db() const { return (dir_ / "sweep.db").string(); }
  std::string where() const { return " --db " + db() + " --out " + (dir_ / "runs").string(); }
  // The job, with this test's marker.
  std::string job(const std::string& args) const {
    return python_ + " " + kJob + " " + args + " --samples " + marker_;
  }
  Output sweep(const std::string& flags, const std::string& command) const {
    return capture(kBinary + " sweep " + flags + where() + " -- " + command);
  }
  json recommend() const {
    Output out = capture(kBinary + " recommend --json --db " + db() + " 2>/dev/null");
    EXPECT_EQ(out.exit_code, 0) << out.text;
    return json::parse(out.text, nullptr, false);
  }
  // No process of the job (its trainer or a DataLoader worker) outlives the sweep.
  void expect_no_job_left() const {
    const auto left = processes_with("--samples", marker_);
    EXPECT_TRUE(left.empty()) << "left running after the sweep:\n" << joined(left);
  }

  std::string python_;
  fs::path dir_;
  std::string marker_;
};

// The number of workers of a label "wN ..." (-1 when it is not one).
int workers_of(const std::string& label) {
  std::smatch m;
  return std::regex_search(label, m, std::regex("^w([0-9]+)( |$)")) ? std::stoi(m[1]) : -1;
}

TEST_F(JobSweep, AJobWithoutWorkersIsShownFasterWithTwoVerifiedAndNothingOfItIsLeft) {
  const std::string command = job(std::string("--workers 0 ") + kWaitingLoop);
  Output run = sweep(std::string(kShort) + " --num-workers 0,2", command);
  ASSERT_EQ(run.exit_code, 0) << run.text;
  EXPECT_NE(run.text.find("3 warm-up steps skipped, then 15 steps timed"), std::string::npos) << run.text;
  expect_no_job_left();

  const json doc = recommend();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["baseline"]["label"], "as written") << doc.dump(2);
  const std::string recommended = doc["recommended"]["label"].get<std::string>();
  EXPECT_GE(workers_of(recommended), 2) << doc.dump(2);
  EXPECT_TRUE(doc["verified"].get<bool>()) << doc["headline"];
  EXPECT_GT(doc["speedup"].get<double>(), 1.3) << doc["headline"];
  EXPECT_GT(doc["speedup_low"].get<double>(), 1.0) << doc["headline"];
  EXPECT_EQ(doc["headline"].get<std::string>().rfind("Change the DataLoader: DataLoader(..., num_workers=2)", 0), 0u)
      << doc["headline"];

  // Every run was this command, unchanged: the knobs went in through the observer.
  json argv = json::array();
  for (size_t at = 0; at < command.size();) {
    const size_t end = std::min(command.find(' ', at), command.size());
    argv.push_back(command.substr(at, end - at));
    at = end + 1;
  }
  const auto commands = query_column(db(), "SELECT json_extract(config_json, '$.command') FROM runs");
  EXPECT_GE(commands.size(), 6u);  // as written, w2 (each once or more), then 2 verification rounds of both
  for (const std::string& ran : commands) EXPECT_EQ(json::parse(ran, nullptr, false), argv) << ran;
  // The job as written ran with its own num_workers=0 and no override; w2 with the override applied.
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(result_json, '$.loader.knobs.num_workers')) "
                             "FROM runs WHERE sweep_point = 'as written'"),
            "0");
  // Every run of it, the verification re-runs too: the baseline is the job as its user has it.
  for (const std::string& as_run :
       query_column(db(), "SELECT 'run ' || run_id || ' (' || sweep_phase || '): overrides ' || "
                          "json_extract(config_json, '$.overrides') || ', applied ' || "
                          "json_extract(result_json, '$.loader.overrides_applied') FROM runs "
                          "WHERE sweep_point = 'as written'"))
    EXPECT_NE(as_run.find("overrides {}, applied {}"), std::string::npos) << "the job as written was changed: " << as_run;
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(result_json, '$.loader.knobs.num_workers')) "
                             "FROM runs WHERE sweep_point = 'w2'"),
            "2");
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(result_json, "
                             "'$.loader.overrides_applied.num_workers')) FROM runs WHERE sweep_point = 'w2'"),
            "2");
  // Each run timed the steps asked for after the warm-up; none was left to end by itself.
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(result_json, '$.measured_steps')) FROM runs"),
            "15");
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(result_json, '$.status')) FROM runs"), "ok");
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_phase = 'verify'"), "4");
  // w0 is the job as written: it is not measured again.
  EXPECT_EQ(query_text(db(), "SELECT state FROM sweep_points WHERE point = 'w0'"), "skipped");
}

TEST_F(JobSweep, ATemplateInTheCommandIsFilledInAndTheHeadlineGivesTheCommandToRun) {
  if (geteuid() != 0)
    GTEST_SKIP() << "this case traces its runs, and the eBPF tracer needs root (run the tests with sudo)";
  const std::string command = job(std::string("--workers {num_workers} ") + kWaitingLoop);
  // Traced (no --no-trace): the one case whose runs carry the trace's own record of the job. One
  // verification round (the default's two are counted in AJobWithoutWorkers...): each traced run costs
  // a tracer's start on top of torch's.
  Output run = sweep("--steps 15 --warmup-steps 3 --num-workers 0,2 --verify-rounds 1", command);
  ASSERT_EQ(run.exit_code, 0) << run.text;
  expect_no_job_left();

  const json doc = recommend();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["baseline"]["label"], "w0") << "with a template the first grid point is the baseline";
  EXPECT_EQ(doc["recommended"]["label"], "w2") << doc.dump(2);
  EXPECT_TRUE(doc["verified"].get<bool>()) << doc["headline"];
  EXPECT_GT(doc["speedup"].get<double>(), 1.3) << doc["headline"];
  const std::string filled = job(std::string("--workers 2 ") + kWaitingLoop);
  EXPECT_NE(doc["headline"].get<std::string>().find(filled), std::string::npos)
      << "the headline does not give the command with the template filled in (" << filled << "):\n"
      << doc["headline"];
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM sweep_points WHERE point = 'as written'"), "0");
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_phase = 'verify'"), "2");

  // The template, not the observer, set the knob: each run's command has its value, no override.
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_point = 'w2' AND "
                             "json_extract(config_json, '$.command') NOT LIKE '%\"--workers\",\"2\"%'"),
            "0");
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_point = 'w0' AND "
                             "json_extract(config_json, '$.command') NOT LIKE '%\"--workers\",\"0\"%'"),
            "0");
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(config_json, '$.overrides')) FROM runs"), "{}");
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE json_extract(config_json, '$.command') LIKE '%{%'"),
            "0");

  // Traced: the observer's batches are the runs' batch_wait events, the loaders their knobs.
  EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT value) FROM run_settings WHERE key = 'observer'"), "on");
  for (const std::string& point : {std::string("w0"), std::string("w2")}) {
    const std::string runs = "(SELECT run_id FROM runs WHERE sweep_point = '" + point + "')";
    EXPECT_EQ(query_text(db(), "SELECT group_concat(DISTINCT json_extract(knobs_json, '$.num_workers')) FROM loaders "
                               "WHERE run_id IN " + runs),
              point.substr(1));
    // 3 warm-up + 15 timed steps need 19 batches in every run.
    const std::string fewest = query_text(
        db(), "SELECT min(n) FROM (SELECT r.run_id, (SELECT count(*) FROM events e JOIN ops o ON o.op = e.op "
              "WHERE e.run_id = r.run_id AND o.name = 'batch_wait') AS n FROM runs r WHERE r.run_id IN " + runs + ")");
    EXPECT_GE(std::stoi(fewest.empty() ? "0" : fewest), 19) << point;
  }
  EXPECT_NE(query_text(db(), "SELECT count(DISTINCT t.pid) FROM threads t JOIN runs r ON r.run_id = t.run_id "
                             "WHERE r.sweep_point = 'w2' AND t.role = 'worker'"),
            "0");
}

TEST_F(JobSweep, ACommandTheSweepCannotChangeOrTimeIsRefusedWithTheReason) {
  // No DataLoader: the first run says so, with what the job printed.
  Output none = sweep(std::string(kShort) + " --num-workers 0,2",
                      python_ + " -c \"print('no loader here')\" --samples " + marker_);
  EXPECT_EQ(none.exit_code, 2) << none.text;
  EXPECT_NE(none.text.find("the job built no torch.utils.data.DataLoader"), std::string::npos) << none.text;
  EXPECT_NE(none.text.find("no loader here"), std::string::npos) << none.text;
  expect_no_job_left();

  // A template whose knob the sweep does not vary: refused before anything runs.
  fs::remove(db());
  Output unused = sweep(std::string(kShort) + " --num-workers 0,2",
                        job(std::string("--workers {num_workers} --pin {pin_memory} ") + kWaitingLoop));
  EXPECT_EQ(unused.exit_code, 2) << unused.text;
  EXPECT_NE(unused.text.find("{pin_memory} is never used"), std::string::npos) << unused.text;
  EXPECT_NE(unused.text.find("--pin-memory"), std::string::npos) << unused.text;
  EXPECT_FALSE(fs::exists(db())) << "nothing was to be run";

  // The job's timing flags without a job.
  Output steps = capture(kBinary + " sweep --steps 20 --num-workers 0,2" + where());
  EXPECT_EQ(steps.exit_code, 2) << steps.text;
  EXPECT_NE(steps.text.find("time your own command"), std::string::npos) << steps.text;
  EXPECT_FALSE(fs::exists(db()));

  // Our workloads' flags with a job.
  Output mode = sweep("--no-trace --mode loader", job(std::string("--workers 0 ") + kWaitingLoop));
  EXPECT_EQ(mode.exit_code, 2) << mode.text;
  EXPECT_NE(mode.text.find("--mode is for ingero-bench's own workloads"), std::string::npos) << mode.text;
  EXPECT_FALSE(fs::exists(db()));
  expect_no_job_left();
}

TEST_F(JobSweep, ABudgetTooSmallForAnAlternativeSaysSoAndResumeFinishesIt) {
  const std::string command = job(std::string("--workers 0 ") + kWaitingLoop);
  // One verification round, stored with the sweep for its resumption: the budget, not the rounds, is the case.
  Output first = sweep(std::string(kShort) + " --num-workers 0,2 --budget 2 --verify-rounds 1", command);
  ASSERT_EQ(first.exit_code, 0) << first.text;
  expect_no_job_left();
  const json partial = recommend();
  ASSERT_TRUE(partial.is_object());
  const std::string headline = partial["headline"].get<std::string>();
  EXPECT_EQ(headline.rfind("No alternative to as written was measured", 0), 0u) << headline;
  // Why: the budget stopped w2 (w0, the job as written again, is no alternative).
  EXPECT_NE(headline.find("(w2: the budget of 2s was reached"), std::string::npos) << headline;
  EXPECT_NE(headline.find("ingero-bench sweep --resume 1 --budget "), std::string::npos) << headline;
  EXPECT_NE(headline.find("--db " + db()), std::string::npos) << headline;
  EXPECT_FALSE(partial["verified"].get<bool>());
  EXPECT_EQ(partial["recommended"]["label"], "as written");
  EXPECT_EQ(query_text(db(), "SELECT state FROM sweep_points WHERE point = 'w2'"), "skipped");
  EXPECT_NE(query_text(db(), "SELECT reason FROM sweep_points WHERE point = 'w2'").find("budget"), std::string::npos);
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs"), "1");

  // Resumed with a budget that fits: the alternative is measured and verified; the baseline's
  // measurement is kept, not repeated.
  Output resumed = capture(kBinary + " sweep --no-trace --resume --budget 60" + where());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.text;
  EXPECT_NE(resumed.text.find("resuming sweep 1"), std::string::npos) << resumed.text;
  expect_no_job_left();
  const json done = recommend();
  ASSERT_TRUE(done.is_object());
  EXPECT_TRUE(done["verified"].get<bool>()) << done["headline"];
  EXPECT_GE(workers_of(done["recommended"]["label"].get<std::string>()), 2) << done.dump(2);
  EXPECT_EQ(done["baseline"]["label"], "as written");
  EXPECT_GT(done["speedup"].get<double>(), 1.3) << done["headline"];
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM sweeps"), "1");
  EXPECT_EQ(query_text(db(), "SELECT status FROM sweeps"), "done");
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_point = 'as written' AND sweep_phase = 'measure'"),
            "1");
  // The resumed runs are the stored command's, marker and all.
  EXPECT_EQ(query_text(db(), "SELECT count(*) FROM runs WHERE json_extract(config_json, '$.command') NOT LIKE '%\"" +
                                 marker_ + "\"%'"),
            "0");
}

TEST_F(JobSweep, AJobThatEndsBeforeItsStepsAreTimedIsAFailedPointShowingItsLastLines) {
  // The job stops itself after 1 s: far short of 2000 steps.
  const std::string command =
      job("--workers 0 --sample-ms 0 --sample-wait-ms 3 --batch 8 --step-ms 2 --seconds 1");
  Output run = sweep("--no-trace --steps 2000 --warmup-steps 3 --num-workers 0,2", command);
  EXPECT_NE(run.exit_code, 0) << run.text;
  expect_no_job_left();
  const std::string reason = query_text(db(), "SELECT reason FROM sweep_points WHERE point = 'as written'");
  EXPECT_EQ(query_text(db(), "SELECT state FROM sweep_points WHERE point = 'as written'"), "failed");
  EXPECT_NE(reason.find("before 2000 steps were timed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("its last lines"), std::string::npos) << reason;
  EXPECT_TRUE(std::regex_search(reason, std::regex("steps [0-9]+ data_share"))) << "the job's own last line: " << reason;
  EXPECT_EQ(query_text(db(), "SELECT state FROM sweep_points WHERE point = 'w2'"), "failed");
  // The user is told why, on the sweep's own output, not only in the DB.
  EXPECT_NE(run.text.find("its last lines"), std::string::npos)
      << "the sweep's output does not say why its points failed:\n" << run.text;
}

// A job whose best point is known by construction (tests/e2e/jobs/known_best.py): a step sleeps
// 45 ms as written (no workers), 30 ms with 2 workers, 20 ms with 4. The first run at 2 workers
// alternates 36 ms and 15 ms windows: its interval after one run reaches w4's, and the cheapest
// point not told apart from the fastest was w2. The sweep repeats w2 until its interval lies
// apart, then recommends w4 and verifies it.
TEST_F(JobSweep, ACheaperPointMeasuredOnceIsRepeatedUntilTheFastestIsToldApart) {
  const fs::path state = dir_ / "job-state";
  fs::create_directories(state);
  const std::string command = python_ + " " + kKnownBest + " --workers 0 --step-ms 0:45,2:30,4:20 --noisy-first-run 2 " +
                              "--state-dir " + state.string() + " --warmup 3 --window 3 --samples " + marker_;
  // One verification round: the repeats before it are the case.
  Output run = sweep(std::string(kShort) + " --num-workers 0,2,4 --verify-rounds 1", command);
  ASSERT_EQ(run.exit_code, 0) << run.text;
  expect_no_job_left();
  EXPECT_NE(run.text.find("separating the fastest points before verifying: w4, w2"), std::string::npos) << run.text;
  const json doc = recommend();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["recommended"]["label"], "w4") << doc["headline"] << "\n" << run.text;
  EXPECT_TRUE(doc["verified"].get<bool>()) << doc["headline"];
  // w2 was measured beyond its first run; its first alone was what the search had.
  EXPECT_GE(std::stoi(query_text(db(), "SELECT count(*) FROM runs WHERE sweep_point = 'w2' AND sweep_phase = 'measure'")),
            2)
      << run.text;
}

// A job that starts a process in a session of its own (as TensorBoard or a data server is started)
// leaves it running when it is stopped; the sweep ends it after each point and says so.
TEST_F(JobSweep, WhatAJobLeavesRunningIsEndedAfterEachPointAndNamed) {
  const std::string seconds = "300." + marker_;
  const std::string command = python_ + " " + kKnownBest + " --workers 0 --step-ms 0:10,2:10 --detach-sleep " +
                              seconds + " --samples " + marker_;
  Output run = sweep(std::string(kShort) + " --num-workers 2 --verify-rounds 1", command);
  ASSERT_EQ(run.exit_code, 0) << run.text;
  expect_no_job_left();
  const auto left = processes_with("sleep", seconds);
  EXPECT_TRUE(left.empty()) << "left running after the sweep:\n" << joined(left);
  EXPECT_NE(run.text.find("ended 1 process the job left running: sleep (pid "), std::string::npos) << run.text;
}

}  // namespace
