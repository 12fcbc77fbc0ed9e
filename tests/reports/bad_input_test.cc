// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/render/commands.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

Error explain_error(const std::string& path, std::optional<int64_t> run = std::nullopt,
                    std::optional<double> since = std::nullopt) {
  std::ostringstream out;
  ExplainOptions options;
  options.db = path;
  options.run = run;
  options.since_s = since;
  const Status status = explain(options, out);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(out.str().empty());
  return status.ok() ? Error{} : status.error();
}

void expect_bad_input(const Error& error, const std::string& words) {
  EXPECT_EQ(error.exit_code, kExitBadInput) << error.message;
  EXPECT_NE(error.message.find(words), std::string::npos) << error.message;
  EXPECT_FALSE(error.hint.empty()) << error.message;
}

TEST(BadInput, MissingFile) {
  expect_bad_input(explain_error("/tmp/ingero-reports-test-does-not-exist.db"), "does not exist");
}

TEST(BadInput, NotASqliteFile) {
  const std::string path = temp_db_path("text");
  std::ofstream(path) << "this is not a database, just some text that is long enough to have a header\n";
  expect_bad_input(explain_error(path), "not a SQLite database");
}

TEST(BadInput, WrongSchemaVersion) {
  const std::string path = temp_db_path("version");
  {
    auto db = TraceFixture::create(path);
    ASSERT_TRUE(db->db().exec("PRAGMA user_version = 99").ok());
  }
  expect_bad_input(explain_error(path), "schema version 99");
}

TEST(BadInput, SqliteFileWithoutTraceTables) {
  const std::string path = temp_db_path("other-sqlite");
  std::remove(path.c_str());
  {
    auto db = sql::open(path, sql::Mode::read_write, 0);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE notes(x); PRAGMA user_version = 1").ok());
  }
  expect_bad_input(explain_error(path), "is not an ingero-bench trace DB");
}

TEST(BadInput, UnknownRunAndEmptyRun) {
  const std::string path = temp_db_path("runs");
  {
    auto db = TraceFixture::create(path);
    RunSpec empty;
    empty.status = "running";
    db->add_run(empty);
  }
  const Error unknown = explain_error(path, 42);
  expect_bad_input(unknown, "run 42 is not in");
  EXPECT_NE(unknown.hint.find("1"), std::string::npos);
  expect_bad_input(explain_error(path, 1), "is empty: no events and no result record");
  const Error running = explain_error(path);
  expect_bad_input(running, "holds no finished run yet: run 1 is still being written");
  EXPECT_NE(running.hint.find("--run 1"), std::string::npos) << running.hint;
}

// explain without --run while another process writes a newer run: the newest finished one is
// explained (it once failed on the run being written, which has no events yet).
TEST(BadInput, WithoutRunTheNewestFinishedRunIsExplainedWhileAnotherIsWritten) {
  const std::string path = temp_db_path("being-written");
  {
    auto db = TraceFixture::create(path);
    const int64_t finished = add_loader_run(*db, 2000 * kMs);
    db->begin();
    db->add_event(finished, "cudaStreamSynchronize", 1500 * kMs, 30 * kMs, kMain, kMain);
    db->commit();
    RunSpec writing;
    writing.status = "running";
    db->add_run(writing);
  }
  std::ostringstream out;
  ExplainOptions options;
  options.db = path;
  options.json = true;
  const Status status = explain(options, out);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(nlohmann::json::parse(out.str())["run"]["run_id"], 1);
}

TEST(BadInput, NoRunsAtAll) {
  const std::string path = temp_db_path("no-runs");
  TraceFixture::create(path);
  expect_bad_input(explain_error(path), "holds no runs");
}

TEST(BadInput, NonPositiveSince) {
  const std::string path = temp_db_path("since");
  TraceFixture::create(path);
  expect_bad_input(explain_error(path, std::nullopt, -3.0), "--since");
}

TEST(BadInput, CompareAndRecommendReportTheSameProblems) {
  std::ostringstream out;
  CompareOptions compare_options;
  compare_options.db = "/tmp/ingero-reports-test-does-not-exist.db";
  const Status compared = compare(compare_options, out);
  ASSERT_FALSE(compared.ok());
  EXPECT_EQ(compared.error().exit_code, kExitBadInput);

  const std::string path = temp_db_path("recommend-empty");
  TraceFixture::create(path);
  RecommendOptions recommend_options;
  recommend_options.db = path;
  const Status recommended = recommend(recommend_options, out);
  ASSERT_FALSE(recommended.ok());
  EXPECT_EQ(recommended.error().exit_code, kExitBadInput);
}

// A run whose stored config_json and result_json nest 100,000 deep (a damaged or hostile
// file): the readers take them as absent instead of overflowing the stack (exit 139).
TEST(BadInput, DeeplyNestedStoredJsonIsReadAsAbsent) {
  const std::string path = temp_db_path("deep-json");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  {
    auto db = TraceFixture::create(path);
    RunSpec run;
    run.config_json = deep;
    run.result_json = "{\"status\": \"ok\", \"epochs\": " + deep + "}";
    db->add_run(run);
  }
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  auto runs = (*trace)->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_TRUE(runs->front().config.is_null());
  EXPECT_TRUE(runs->front().result.is_null());
  std::ostringstream out;
  ExplainOptions options;
  options.db = path;
  (void)explain(options, out);  // an answer or bad input; no crash
  options.json = true;
  (void)explain(options, out);
  RecommendOptions recommend_options;
  recommend_options.db = path;
  (void)recommend(recommend_options, out);
}

// A stored value of another type than readers take (a file changed outside ingero-bench) is bad
// input naming the file, the run and the column: typed reads of it once threw out of a main that
// catches nothing (recommend aborted on a string max_batches).
TEST(BadInput, AStoredValueOfAnotherTypeIsBadInputNamingTheRunAndColumn) {
  struct Damage {
    std::string config, result, words;
    std::string machine = RunSpec().machine_json;
  };
  const std::string ok_result = R"({"status": "ok", "epoch_seconds": [1.0, 1.0]})";
  const std::string ok_config = R"({"mode": "loader", "samples": 1024, "batch_size": 64})";
  for (const Damage& d :
       {Damage{R"({"mode": "loader", "samples": 1024, "batch_size": 64, "max_batches": "ten"})", ok_result,
               "run 2's config_json is damaged: 'max_batches' is string, not a number"},
        Damage{ok_config, R"({"status": 3, "epoch_seconds": [1.0]})",
               "run 2's result_json is damaged: 'status' is number, not a string"},
        Damage{ok_config, R"({"status": "ok", "epoch_seconds": [1.0], "batches": [1, 2]})",
               "run 2's result_json is damaged: 'batches' is array"},
        Damage{R"({"mode": "job", "knobs": {"num_workers": 4}})", ok_result,
               "run 2's config_json is damaged: 'knobs' is object, not an object of strings"},
        Damage{R"({"mode": "loader", "num_workers": "four"})", ok_result,
               "run 2's config_json is damaged: 'num_workers' is string, not a number"},
        Damage{ok_config, R"({"status": "stopped", "epoch_seconds": [1.0], "error": 7})",
               "run 2's result_json is damaged: 'error' is number, not a string"},
        Damage{ok_config, R"({"status": "ok", "epoch_seconds": [1.0], "steps_per_s": "fast"})",
               "run 2's result_json is damaged: 'steps_per_s' is string, not a number"},
        Damage{ok_config, ok_result, "run 2's machine_json is damaged: 'cpu_count' is string, not a number",
               R"({"cpu_count": "four"})"}}) {
    const std::string path = temp_db_path("damaged-value");
    {
      auto db = TraceFixture::create(path);
      for (const Damage& stored : {Damage{ok_config, ok_result, ""}, d}) {
        RunSpec run;  // run 1 is whole, run 2 damaged
        run.config_json = stored.config;
        run.result_json = stored.result;
        run.machine_json = stored.machine;
        run.end_ns = 1000;
        db->add_run(run);
      }
    }
    std::ostringstream out;
    RecommendOptions recommend_options;
    recommend_options.db = path;
    const Status recommended = recommend(recommend_options, out);
    ASSERT_FALSE(recommended.ok()) << d.words;
    expect_bad_input(recommended.error(), d.words);
    EXPECT_NE(recommended.error().message.find(path), std::string::npos) << recommended.error().message;
    expect_bad_input(explain_error(path, 2), d.words);
  }
}

}  // namespace
}  // namespace ingero::reports::testing
