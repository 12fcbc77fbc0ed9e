// SPDX-License-Identifier: Apache-2.0
// The trace tools through the MCP server, over fixture DBs with known content: each answer
// conforms to its tool's outputSchema, holds the numbers explain / compare / recommend give
// for the same run, and run_sql only ever reads.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mcp/schema_check.h"
#include "mcp/server.h"
#include "mcp/trace_resources.h"
#include "mcp/trace_server.h"
#include "mcp/trace_tools.h"
#include "reports/render/commands.h"
#include "reports/render/report_json.h"
#include "reports/render/report_text.h"
#include "reports/text/summary_text.h"
#include "tests/reports/profile_scenario.h"
#include "tests/reports/scenario.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;
using namespace reports::testing;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string result_record(std::vector<double> epochs, double wait_fraction) {
  std::vector<double> sorted = epochs;
  std::sort(sorted.begin(), sorted.end());
  return json{{"status", "ok"}, {"epoch_seconds", epochs}, {"epoch_median_s", sorted[sorted.size() / 2]},
              {"epoch_min_s", sorted.front()}, {"epoch_max_s", sorted.back()}, {"wait_fraction", wait_fraction}}
      .dump();
}

// Run 1: a loader w2 run waiting on a preempted worker, with one slow synchronisation;
// run 2: the same with four workers (measures a worker change); run 3: direct-shuffled,
// timings only.
void write_fixture(const std::string& path) {
  auto db = TraceFixture::create(path);
  RunSpec spec;
  spec.label = "loader w2";
  spec.config_json = loader_config(2);
  spec.result_json = result_record({0.5, 0.52, 0.48}, 0.5);
  spec.end_ns = 500 * kMs;
  const int64_t run = db->add_run(spec);
  db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
  db->add_thread(run, {kPin, kMain, std::nullopt, "ib-pin", "pin", 0, 500 * kMs, std::nullopt, std::nullopt});
  db->add_thread(run, {kWorkerA, kWorkerA, kMain, "ib-worker-0", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
  db->add_thread(run, {kWorkerB, kWorkerB, kMain, "ib-worker-1", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
  db->begin();
  for (int b = 0; b < 20; ++b) {
    const int64_t start = 10 * kMs + b * 20 * kMs;
    db->add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
    db->add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
    db->add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
    db->add_event(run, "offcpu_preempted", start, 10 * kMs, kWorkerA, kWorkerA);
    db->add_event(run, "page_faults", start + kMs, kMs, kWorkerB, kWorkerB, std::nullopt, 64);
    db->add_event(run, "cudaMemcpyAsync", start + 10 * kMs, 50 * kUs, kMain, kMain, 1 << 20);
  }
  for (int i = 0; i < 400; ++i) db->add_event(run, "cudaStreamSynchronize", 10 * kMs + i * kMs, 20 * kUs, kMain, kMain);
  db->add_event(run, "cudaStreamSynchronize", 450 * kMs, 30 * kMs, kMain, kMain);
  db->add_event(run, "offcpu_preempted", 455 * kMs, 20 * kMs, kMain, kMain);
  db->add_unstored_calls(run, "cudaLaunchKernel", kMain, kMain, 5000, 5 * kUs);
  db->commit();
  db->add_thread_stats(run, {kMain, kMain, {10, 1, 300 * kMs, 200 * kMs, 20 * kMs, 5, kMs, 3, 12288, 7}});
  db->add_thread_stats(run, {kWorkerA, kWorkerA, {40, 50, 250 * kMs, 200 * kMs, 10 * kMs, 60, 200 * kMs, 9, 36864, 3}});
  db->add_histogram(run, kMain, "runq_us", 3, 10);
  db->add_loss(run, "events", 0);

  spec.label = "loader w4";
  spec.config_json = loader_config(4);
  spec.result_json = result_record({0.3, 0.31, 0.29}, 0.1);
  const int64_t w4 = db->add_run(spec);
  db->add_thread(w4, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
  db->add_event(w4, "batch_wait", 10 * kMs, kMs, kMain, kMain, std::nullopt, 0);
  // Its CPU profile: the main thread 75 % in the model, 25 % in collate; an unlisted thread is "other".
  ProfileBuilder profile(*db, w4);
  profile.add(kMain, {frames::module(), frames::train(), frames::forward(), frames::conv()}, 30);
  profile.add(kMain, {frames::module(), frames::train(), frames::next_batch(), frames::collate()}, 10);
  profile.add(999, {frames::page_fault()}, 5);

  spec.label = "direct-shuffled";
  spec.config_json = loader_config(0, 2, false, false, "direct-shuffled");
  spec.result_json = result_record({0.1, 0.1, 0.1}, 0.01);
  spec.traced = false;
  db->add_run(spec);
}

// Drives a Server over the trace registry as a client would, one JSON-RPC line at a time.
class McpTraceToolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = temp_db_path("mcp-tools");
    write_fixture(path_);
    bytes_before_ = file_bytes(path_);
  }
  static void TearDownTestSuite() { std::remove(path_.c_str()); }

  void SetUp() override { start(path_); }

  void start(const std::string& path, TraceToolOptions options = {std::chrono::milliseconds(300)}) {
    auto opened = reports::TraceFile::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    trace_ = std::move(*opened);
    auto registry = make_trace_registry(trace_, options);
    ASSERT_TRUE(registry.ok()) << registry.error().message;
    registry_ = *registry;
    server_ = std::make_unique<Server>(trace_server_info(*trace_, "test"), std::move(*registry));
    json init = request("initialize", {{"protocolVersion", kLatestProtocolVersion},
                                       {"capabilities", json::object()},
                                       {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}});
    ASSERT_TRUE(init.contains("result")) << init.dump();
  }

  json request(const std::string& method, json params) {
    const json line{{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", method}, {"params", std::move(params)}};
    auto response = server_->handle(line.dump());
    EXPECT_TRUE(response.has_value());
    return response ? *response : json();
  }

  // The tools/call result; checks it against the tool's outputSchema when it succeeded.
  json call(const std::string& tool, json arguments = json::object()) {
    json response = request("tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
    EXPECT_TRUE(response.contains("result")) << tool << ": " << response.dump();
    json result = response.value("result", json::object());
    if (!result.value("isError", true)) {
      const ToolSpec* spec = registry_.find_tool(tool);
      EXPECT_NE(spec, nullptr);
      if (spec) {
        auto violation = check_schema(result["structuredContent"], spec->output_schema);
        EXPECT_FALSE(violation.has_value()) << tool << ": " << violation->describe("field", "structuredContent");
      }
      EXPECT_FALSE(result["content"][0]["text"].get<std::string>().empty()) << tool;
    }
    return result;
  }

  json structured(const std::string& tool, json arguments = json::object()) {
    json result = call(tool, std::move(arguments));
    EXPECT_FALSE(result.value("isError", true)) << tool << ": " << result.dump();
    return result.value("structuredContent", json());
  }

  std::string error_text(const std::string& tool, json arguments) {
    json result = call(tool, std::move(arguments));
    EXPECT_TRUE(result.value("isError", false)) << tool << " should fail: " << result.dump();
    return result["content"][0].value("text", "");
  }

  json explain_json(int64_t run, bool per_process = false) {
    reports::ExplainOptions options;
    options.db = path_;
    options.run = run;
    options.per_process = per_process;
    auto report = reports::make_explain_report(*trace_, options);
    EXPECT_TRUE(report.ok());
    return report ? reports::to_json(*report) : json();
  }

  static std::string path_;
  static std::string bytes_before_;
  std::shared_ptr<const reports::TraceFile> trace_;
  Registry registry_;
  std::unique_ptr<Server> server_;
  int id_ = 0;
};

std::string McpTraceToolsTest::path_;
std::string McpTraceToolsTest::bytes_before_;

TEST_F(McpTraceToolsTest, ListsTheToolsWithSchemas) {
  const json tools = request("tools/list", json::object())["result"]["tools"];
  std::vector<std::string> names;
  for (const auto& tool : tools) {
    names.push_back(tool["name"]);
    EXPECT_EQ(tool["inputSchema"]["type"], "object");
    EXPECT_EQ(tool["outputSchema"]["type"], "object");
    EXPECT_FALSE(tool["description"].get<std::string>().empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_runs", "get_trace_stats", "get_causal_chains", "get_profile",
                                             "get_per_process_breakdown", "compare_runs", "get_recommendation",
                                             "get_timeline", "run_sql"}));
}

TEST_F(McpTraceToolsTest, ListRunsGivesEveryRun) {
  const json runs = structured("list_runs")["runs"];
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]["run_id"], 1);
  EXPECT_EQ(runs[0]["label"], "loader w2");
  EXPECT_EQ(runs[0]["mode"], "loader");
  EXPECT_EQ(runs[0]["config"]["num_workers"], 2);
  EXPECT_DOUBLE_EQ(runs[0]["epoch_median_s"].get<double>(), 0.5);
  EXPECT_EQ(runs[0]["epochs_measured"], 3);
  EXPECT_TRUE(runs[0]["sweep_id"].is_null());
  EXPECT_EQ(runs[2]["mode"], "direct-shuffled");
  EXPECT_FALSE(runs[2]["traced"].get<bool>());
}

TEST_F(McpTraceToolsTest, TraceStatsAreExplainsNumbers) {
  const json stats = structured("get_trace_stats", {{"run", 1}});
  const json expected = explain_json(1);
  EXPECT_EQ(stats["run"], expected["run"]);
  EXPECT_EQ(stats["metrics"], expected["metrics"]);
  EXPECT_EQ(stats["calls"], expected["call_latency"]);
  EXPECT_EQ(stats["notes"], expected["notes"]);
  // Stored calls have exact percentiles; the unstored kernel launches only bucket bounds.
  std::map<std::string, json> by_function;
  for (const auto& row : stats["calls"]) by_function[row["function"]] = row;
  EXPECT_EQ(by_function["cudaStreamSynchronize"]["calls"], 401);
  EXPECT_EQ(by_function["cudaStreamSynchronize"]["percentiles"], "exact");
  EXPECT_EQ(by_function["cudaLaunchKernel"]["calls"], 5000);
  EXPECT_EQ(by_function["cudaLaunchKernel"]["percentiles"], "log2_bucket_upper_bound");
  EXPECT_TRUE(stats["losses"]["recorded"].get<bool>());
  EXPECT_EQ(stats["losses"]["by_source"]["events"], 0);
  EXPECT_EQ(stats["losses"]["events_lost"], 0);
}

TEST_F(McpTraceToolsTest, LossesNeverRecordedAreUnknown) {
  const json losses = structured("get_trace_stats", {{"run", 2}})["losses"];
  EXPECT_FALSE(losses["recorded"].get<bool>());
  EXPECT_TRUE(losses["by_source"].is_null());
  EXPECT_NE(losses["meaning"].get<std::string>().find("unknown"), std::string::npos);
}

TEST_F(McpTraceToolsTest, CausalChainsAreExplainsChains) {
  const json expected = explain_json(1);
  const json all = structured("get_causal_chains", {{"run", 1}, {"top_n", 50}});
  ASSERT_FALSE(expected["causal_chains"].empty());
  EXPECT_EQ(all["chains"], expected["causal_chains"]);
  EXPECT_EQ(all["chains_total"], expected["causal_chains"].size());
  EXPECT_EQ(all["slow_intervals"], expected["slow_intervals"]);
  EXPECT_EQ(all["verdict"], expected["metrics"]["verdict"]);

  const json top = structured("get_causal_chains", {{"run", 1}, {"top_n", 1}});
  ASSERT_EQ(top["chains"].size(), 1u);
  EXPECT_EQ(top["chains"][0], expected["causal_chains"][0]);

  const json high = structured("get_causal_chains", {{"run", 1}, {"min_severity", "HIGH"}, {"top_n", 50}});
  size_t highs = 0;
  for (const auto& chain : expected["causal_chains"]) highs += chain["severity"] == "HIGH";
  EXPECT_GT(highs, 0u);
  EXPECT_EQ(high["chains"].size(), highs);
  for (const auto& chain : high["chains"]) EXPECT_EQ(chain["severity"], "HIGH");
}

TEST_F(McpTraceToolsTest, ProfileIsExplainsProfilePerRoleWithSharesBothWays) {
  const json all = structured("get_profile", {{"run", 2}});
  EXPECT_EQ(all["profile"], explain_json(2)["profile"]);
  const json& profile = all["profile"];
  EXPECT_TRUE(profile["taken"].get<bool>());
  EXPECT_EQ(profile["samples"], 45);
  ASSERT_EQ(profile["roles"].size(), 2u);
  const json& main = profile["roles"][0];
  EXPECT_EQ(main["role"], "main");
  EXPECT_EQ(main["samples"], 40);
  EXPECT_DOUBLE_EQ(main["split"]["model_share"].get<double>(), 0.75);
  EXPECT_EQ(main["top_self"][0]["name"], "at::native::_convolution");
  EXPECT_DOUBLE_EQ(main["top_self"][0]["self_share"].get<double>(), 0.75);
  EXPECT_EQ(main["top_inclusive"][0]["name"], "<module>");
  EXPECT_DOUBLE_EQ(main["top_inclusive"][0]["inclusive_share"].get<double>(), 1.0);
  EXPECT_EQ(profile["roles"][1]["role"], "other");

  const json one = structured("get_profile", {{"run", 2}, {"role", "main"}, {"top_n", 1}});
  ASSERT_EQ(one["profile"]["roles"].size(), 1u);
  EXPECT_EQ(one["profile"]["roles"][0]["top_self"].size(), 1u);
  EXPECT_EQ(one["profile"]["top"], 1);

  const json none = structured("get_profile", {{"run", 1}});  // no profile taken: said, and empty
  EXPECT_FALSE(none["profile"]["taken"].get<bool>());
  EXPECT_TRUE(none["profile"]["roles"].empty());
  EXPECT_NE(none["profile"]["status"].get<std::string>().find("none taken"), std::string::npos);
  const json bad = request("tools/call", {{"name", "get_profile"}, {"arguments", {{"run", 2}, {"role", "gpu"}}}});
  EXPECT_EQ(bad["error"]["code"], rpc_code::kInvalidParams);
}

// One voice: an answer's text carries the sentences the terminal's explain prints, in the same words.
TEST_F(McpTraceToolsTest, AnswersSayWhatTheTerminalSays) {
  auto report = reports::make_explain_report(*trace_, {path_, 1, false, std::nullopt, false});
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->chains.chains.empty());
  std::ostringstream terminal;
  reports::render_text(*report, terminal);
  const std::string verdict = reports::verdict_summary(report->metrics);
  EXPECT_NE(terminal.str().find("VERDICT: " + verdict), std::string::npos) << terminal.str();
  const std::string headline = reports::run_name(report->run) + ": " + verdict;
  const std::string chains = call("get_causal_chains", {{"run", 1}})["content"][0]["text"];
  EXPECT_NE(chains.find(headline), std::string::npos) << chains;
  const std::string stats = call("get_trace_stats", {{"run", 1}})["content"][0]["text"];
  EXPECT_NE(stats.find(headline), std::string::npos) << stats;

  std::vector<std::string> lines = {"#1 " + reports::chain_title(report->chains.chains[0], report->chain_words[0])};
  for (const auto& line : reports::chain_cause_lines(report->chain_words[0])) lines.push_back("    " + line);
  for (const auto& line : lines) {
    EXPECT_NE(terminal.str().find(line + "\n"), std::string::npos) << line << "\n" << terminal.str();
    EXPECT_NE(chains.find(line + "\n"), std::string::npos) << line << "\n" << chains;
  }

  auto profiled = reports::make_explain_report(*trace_, {path_, 2, false, std::nullopt, false});
  ASSERT_TRUE(profiled.ok() && profiled->profile && !profiled->profile->roles.empty());
  std::ostringstream profiled_terminal;
  reports::render_text(*profiled, profiled_terminal);
  const std::string profile = call("get_profile", {{"run", 2}})["content"][0]["text"];
  for (const auto& role : profiled->profile->roles) {
    const std::string heading = reports::role_profile_heading(role) + "\n";
    EXPECT_NE(profiled_terminal.str().find(heading), std::string::npos) << heading << profiled_terminal.str();
    EXPECT_NE(profile.find(heading), std::string::npos) << heading << profile;
  }
}

TEST_F(McpTraceToolsTest, ProcessBreakdownByRoleAndByProcess) {
  const json roles = structured("get_per_process_breakdown", {{"run", 1}});
  EXPECT_EQ(roles["by"], "role");
  EXPECT_EQ(roles["rows"], explain_json(1)["roles"]);
  const json processes = structured("get_per_process_breakdown", {{"run", 1}, {"by", "process"}});
  EXPECT_EQ(processes["rows"], explain_json(1, true)["processes"]);
  EXPECT_GE(processes["rows"].size(), 3u);
}

TEST_F(McpTraceToolsTest, CompareAndRecommendAreTheCommandsReports) {
  auto compare = reports::make_compare_report(*trace_, 1, 2);
  ASSERT_TRUE(compare.ok());
  EXPECT_EQ(structured("compare_runs", {{"run_a", 1}, {"run_b", 2}}), reports::to_json(*compare));

  reports::RecommendOptions options;
  options.db = path_;
  auto recommend = reports::make_recommend_report(*trace_, options);
  ASSERT_TRUE(recommend.ok());
  EXPECT_EQ(structured("get_recommendation"), reports::to_json(*recommend));
  EXPECT_NE(error_text("get_recommendation", {{"sweep", 7}}).find("sweep 7 is not in"), std::string::npos);
}

TEST_F(McpTraceToolsTest, TimelineWindowsFiltersAndTruncates) {
  const json first = structured("get_timeline", {{"run", 1}, {"limit", 5}});
  EXPECT_EQ(first["events"].size(), 5u);
  EXPECT_TRUE(first["truncated"].get<bool>());
  for (size_t i = 1; i < first["events"].size(); ++i)
    EXPECT_LE(first["events"][i - 1]["ts_ns"], first["events"][i]["ts_ns"]);

  const json batches = structured(
      "get_timeline", {{"run", 1}, {"categories", {"workload"}}, {"from_s", 0.0095}, {"until_s", 0.05}});
  EXPECT_FALSE(batches["truncated"].get<bool>());
  // Batches 0 and 1 (10-30 ms, 30-50 ms), a wait and a compute each.
  ASSERT_EQ(batches["events"].size(), 4u);
  EXPECT_EQ(batches["events"][0]["op"], "batch_wait");
  EXPECT_DOUBLE_EQ(batches["events"][0]["t_s"].get<double>(), 0.01);
  EXPECT_EQ(batches["from_ns"], 9'500'000);

  const json thread = structured("get_timeline", {{"run", 1}, {"tid", kWorkerB}, {"limit", 5000}});
  EXPECT_EQ(thread["events"].size(), 20u);
  for (const auto& e : thread["events"]) EXPECT_EQ(e["op"], "page_faults");

  EXPECT_NE(error_text("get_timeline", {{"run", 1}, {"from_s", 1.0}, {"from_ns", 5}}).find("not both"),
            std::string::npos);

  // Seconds past any trace are held to one (1e308 once overflowed into a window before the run).
  const json far = structured("get_timeline", {{"run", 1}, {"from_s", 1e308}});
  EXPECT_EQ(far["events"].size(), 0u) << far.dump().substr(0, 300);
  EXPECT_GT(far["from_ns"].get<int64_t>(), 0);
  const json whole = structured("get_timeline", {{"run", 1}, {"from_s", -1e308}, {"until_s", 1e308}, {"limit", 5}});
  EXPECT_EQ(whole["events"], first["events"]);
}

TEST_F(McpTraceToolsTest, UnknownRunIsAToolError) {
  for (const auto& [tool, args] : std::vector<std::pair<std::string, json>>{
           {"get_trace_stats", {{"run", 99}}},
           {"get_causal_chains", {{"run", 99}}},
           {"get_per_process_breakdown", {{"run", 99}}},
           {"compare_runs", {{"run_a", 1}, {"run_b", 99}}},
           {"get_timeline", {{"run", 99}}}}) {
    const std::string text = error_text(tool, args);
    EXPECT_NE(text.find("run 99 is not in"), std::string::npos) << tool << ": " << text;
    EXPECT_NE(text.find("fix: pass one of the run ids it holds: 1, 2, 3"), std::string::npos) << tool << ": " << text;
  }
  EXPECT_EQ(request("ping", json::object())["result"], json::object());  // still serving
}

TEST_F(McpTraceToolsTest, WrongArgumentTypesAreInvalidParams) {
  json response = request("tools/call", {{"name", "get_trace_stats"}, {"arguments", {{"run", "5"}}}});
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidParams);
  response = request("tools/call", {{"name", "get_timeline"}, {"arguments", {{"run", 1}, {"limit", 5001}}}});
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidParams);
  response = request("tools/call", {{"name", "get_causal_chains"}, {"arguments", {{"run", 1}, {"min_severity", "x"}}}});
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidParams);
  response = request("tools/call", {{"name", "run_sql"}, {"arguments", {{"query", "SELECT 1"}, {"extra", 1}}}});
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidParams);
}

TEST_F(McpTraceToolsTest, AnIdBeyondAnExactJsonIntegerIsInvalidParamsNotAnotherRun) {
  // Written as text: 99999999999999999999 does not fit 64 bits and is read as a double, which once
  // became a negative run id.
  for (const std::string id : {"99999999999999999999", "9223372036854775808", "9007199254740993", "1e300"}) {
    for (const std::string tool : {"get_trace_stats", "get_causal_chains"}) {
      const std::string line = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" + tool +
                               R"(","arguments":{"run":)" + id + "}}}";
      auto response = server_->handle(line);
      ASSERT_TRUE(response.has_value()) << id;
      EXPECT_EQ((*response)["error"]["code"], rpc_code::kInvalidParams) << id << ": " << response->dump();
      EXPECT_NE(response->dump().find("must be <= 9007199254740991"), std::string::npos) << response->dump();
    }
  }
  const std::string sweep = R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_recommendation",)"
                            R"("arguments":{"sweep":99999999999999999999}}})";
  EXPECT_EQ((*server_->handle(sweep))["error"]["code"], rpc_code::kInvalidParams);
  EXPECT_FALSE(call("get_trace_stats", {{"run", 1}}).value("isError", true));  // a real id still answers
}

TEST_F(McpTraceToolsTest, SqlSelectsAndCapsRows) {
  const json runs = structured("run_sql", {{"query", "SELECT run_id, label FROM runs ORDER BY run_id"}});
  EXPECT_EQ(runs["columns"], (json{"run_id", "label"}));
  EXPECT_EQ(runs["rows"], (json{{1, "loader w2"}, {2, "loader w4"}, {3, "direct-shuffled"}}));
  EXPECT_FALSE(runs["truncated"].get<bool>());

  const json capped = structured("run_sql", {{"query", "SELECT ts_ns FROM events WHERE run_id = 1"}, {"max_rows", 3}});
  EXPECT_EQ(capped["rows"].size(), 3u);
  EXPECT_TRUE(capped["truncated"].get<bool>());
  EXPECT_EQ(capped["truncated_by"], "max_rows");

  const json defaulted = structured("run_sql", {{"query", "SELECT ts_ns FROM events"}});
  EXPECT_EQ(defaulted["rows"].size(), static_cast<size_t>(kSqlDefaultRows));

  // Ordinary functions, JSON, recursive CTEs, introspection pragmas and comments are fine.
  const json mixed = structured(
      "run_sql", {{"query", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) "
                            "SELECT sum(x), json_extract('{\"a\": 2}', '$.a'), printf('%.2f', 1.25), NULL, 0.5 "
                            "FROM c; -- done\n/* nothing else */"}});
  EXPECT_EQ(mixed["rows"], (json{{55, 2, "1.25", nullptr, 0.5}}));
  EXPECT_FALSE(structured("run_sql", {{"query", "PRAGMA table_info(runs)"}})["rows"].empty());
  EXPECT_FALSE(structured("run_sql", {{"query", "SELECT name FROM pragma_table_info('events')"}})["rows"].empty());
  EXPECT_EQ(structured("run_sql", {{"query", "SELECT j.value FROM runs, json_each(runs.config_json, '$.num_workers') j "
                                             "WHERE run_id = 1"}})["rows"],
            (json{{2}}));
}

TEST_F(McpTraceToolsTest, SqlRefusesAnythingButReading) {
  const std::vector<std::pair<std::string, std::string>> refused{
      {"INSERT INTO runs(label) VALUES ('x')", "INSERT into 'runs' writes"},
      {"UPDATE runs SET label = 'x'", "UPDATE of 'runs' writes"},
      {"DELETE FROM events", "DELETE from 'events' writes"},
      {"CREATE TABLE t(x)", "changes the schema"},
      {"CREATE TEMP TABLE t(x)", "changes the schema"},
      {"DROP TABLE events", "changes the schema"},
      {"CREATE INDEX i ON events(dur_ns)", "changes the schema"},
      {"ALTER TABLE runs ADD COLUMN y", "changes the"},
      {"UPDATE sqlite_master SET sql = ''", "may not be modified"},
      {"REINDEX", "changes the"},
      {"ATTACH DATABASE '/tmp/ingero-attach.db' AS other", "ATTACH and DETACH are refused"},
      {"PRAGMA journal_mode=wal", "PRAGMA journal_mode = wal is refused"},
      {"PRAGMA query_only = OFF", "PRAGMA query_only = OFF is refused"},
      {"SELECT load_extension('x')", "function load_extension() is refused"},
      {"SELECT 1; DELETE FROM runs", "more than one statement"},
      {"SELECT 1; SELECT 2", "more than one statement"},
      {"VACUUM INTO '/tmp/ingero-vacuum.db'", "the statement writes"},
      {"BEGIN", "transaction control is refused"},
      {"   -- only a comment", "no SQL statement"},
      {"SELEC 1", "SQL error"},
  };
  for (const auto& [query, words] : refused) {
    const std::string text = error_text("run_sql", {{"query", query}});
    EXPECT_NE(text.find(words), std::string::npos) << query << " -> " << text;
  }
  EXPECT_FALSE(std::ifstream("/tmp/ingero-vacuum.db").good());
  EXPECT_FALSE(std::ifstream("/tmp/ingero-attach.db").good());
  EXPECT_EQ(structured("run_sql", {{"query", "SELECT count(*) FROM runs"}})["rows"], (json{{3}}));
  EXPECT_EQ(file_bytes(path_), bytes_before_);
}

TEST_F(McpTraceToolsTest, SqlStopsARunawayQueryAtItsDeadline) {
  const auto started = std::chrono::steady_clock::now();
  const std::string text = error_text(
      "run_sql", {{"query", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"}});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_NE(text.find("stopped the query at its time limit of 0.3 s"), std::string::npos) << text;
  EXPECT_LT(took, std::chrono::seconds(2));
  // The connection is usable again, without the deadline of the stopped query.
  EXPECT_EQ(structured("run_sql", {{"query", "SELECT 1"}})["rows"], (json{{1}}));
  EXPECT_FALSE(call("get_trace_stats", {{"run", 1}}).value("isError", true));
}

// Wide rows of big cells: the answer's bytes are counted cell by cell (400 columns of 1 MB once
// made an 800 MB answer in 32 s), and a query returns at most 64 columns.
TEST_F(McpTraceToolsTest, SqlCapsTheAnswerWithinOneRowAndTheColumns) {
  const auto started = std::chrono::steady_clock::now();
  std::string wide = "SELECT ";
  for (int c = 0; c < 8; ++c) wide += fmt::format("{}printf('%.*c', 900000, 'x') AS c{}", c ? ", " : "", c);
  const std::string text = error_text("run_sql", {{"query", wide}});
  EXPECT_NE(text.find("too large"), std::string::npos) << text.substr(0, 300);
  EXPECT_NE(text.find("column 'c4'"), std::string::npos) << text.substr(0, 300);  // 5 x 0.9 MB pass 4 MB
  // Rows that fit come back, the one passing the cap and those after it are left out.
  const json rows = structured(
      "run_sql", {{"query", "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 10) "
                            "SELECT i, printf('%.*c', 900000, 'y') FROM r"}});
  EXPECT_EQ(rows["rows"].size(), 4u);
  EXPECT_TRUE(rows["truncated"].get<bool>());
  EXPECT_EQ(rows["truncated_by"], "answer size");
  std::string many = "SELECT 1";
  for (int c = 1; c < 65; ++c) many += ", 1";
  const std::string refused = error_text("run_sql", {{"query", many}});
  EXPECT_NE(refused.find("at most 64 columns"), std::string::npos) << refused;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(structured("run_sql", {{"query", "SELECT 1"}})["rows"], (json{{1}}));
}

TEST_F(McpTraceToolsTest, ResourcesAreTheSchemaAndEachRunsExplainText) {
  const json listed = request("resources/list", json::object())["result"]["resources"];
  std::vector<std::string> uris;
  for (const auto& r : listed) uris.push_back(r["uri"]);
  EXPECT_EQ(uris, (std::vector<std::string>{"ingero://schema", "ingero://runs/1/explain", "ingero://runs/2/explain",
                                            "ingero://runs/3/explain"}));
  const json schema = request("resources/read", {{"uri", "ingero://schema"}})["result"]["contents"][0];
  EXPECT_NE(schema["text"].get<std::string>().find("CREATE TABLE IF NOT EXISTS events"), std::string::npos);

  const json explain = request("resources/read", {{"uri", explain_uri(1)}})["result"]["contents"][0];
  reports::ExplainOptions options;
  options.db = path_;
  options.run = 1;
  auto report = reports::make_explain_report(*trace_, options);
  ASSERT_TRUE(report.ok());
  std::ostringstream text;
  reports::render_text(*report, text);
  EXPECT_EQ(explain["text"], text.str());
  EXPECT_EQ(explain["mimeType"], "text/plain");

  const json missing = request("resources/read", {{"uri", "ingero://runs/42/explain"}});
  EXPECT_EQ(missing["error"]["code"], rpc_code::kResourceNotFound);
  const json templates = request("resources/templates/list", json::object())["result"]["resourceTemplates"];
  ASSERT_EQ(templates.size(), 1u);
  EXPECT_EQ(templates[0]["uriTemplate"], "ingero://runs/{run}/explain");
}

TEST_F(McpTraceToolsTest, InvestigatePromptWalksThroughTheTools) {
  const json prompt = request("prompts/get", {{"name", "investigate"}, {"arguments", {{"run", "1"}}}});
  const std::string text = prompt["result"]["messages"][0]["content"]["text"];
  size_t last = 0;
  for (const char* step : {"list_runs", "get_trace_stats {run: 1}", "get_per_process_breakdown",
                           "get_causal_chains {run: 1}", "get_recommendation"}) {
    const size_t at = text.find(step);
    EXPECT_NE(at, std::string::npos) << step;
    EXPECT_GE(at, last) << step << " out of order";
    last = at;
  }
  EXPECT_NE(text.find("quote only numbers the tools returned"), std::string::npos);
  EXPECT_NE(text.find("unmeasured"), std::string::npos);
  const json bare = request("prompts/get", {{"name", "investigate"}});
  EXPECT_TRUE(bare.contains("result")) << bare.dump();
  const json bad = request("prompts/get", {{"name", "investigate"}, {"arguments", {{"run", "five"}}}});
  EXPECT_EQ(bad["error"]["code"], rpc_code::kInvalidParams);
}

// A version-1 file is read through an in-memory upgrade: run_sql queries that copy (it has
// the version-2 tables), and leaves it unrestricted for the other tools.
#ifdef INGERO_SCHEMA1_DB
TEST_F(McpTraceToolsTest, Schema1FileIsQueriedThroughItsUpgrade) {
  const std::string path = INGERO_SCHEMA1_DB;
  const std::string before = file_bytes(path);
  start(path);
  EXPECT_EQ(trace_->schema_version(), 1);
  const json calls = structured("run_sql", {{"query", "SELECT count(*) FROM call_stats WHERE run_id = 5"}});
  EXPECT_GT(calls["rows"][0][0].get<int64_t>(), 0);
  EXPECT_NE(error_text("run_sql", {{"query", "DELETE FROM runs"}}).find("writes"), std::string::npos);
  EXPECT_NE(error_text("run_sql", {{"query", "ATTACH ':memory:' AS m"}}).find("ATTACH"), std::string::npos);
  EXPECT_NE(error_text("run_sql", {{"query", "PRAGMA query_only = 0"}}).find("refused"), std::string::npos);
  const json stats = structured("get_trace_stats", {{"run", 5}});
  EXPECT_EQ(stats["calls"], explain_json(5)["call_latency"]);
  EXPECT_EQ(structured("run_sql", {{"query", "SELECT count(*) FROM runs"}})["rows"][0][0], 16);
  EXPECT_EQ(file_bytes(path), before);
}
#endif

TEST(McpServeTraceDb, MissingFileIsBadInputOnTheLog) {
  std::istringstream in;
  std::ostringstream out, log;
  EXPECT_EQ(serve_trace_db("/nonexistent/trace.db", in, out, log), kExitBadInput);
  EXPECT_TRUE(out.str().empty());
  EXPECT_NE(log.str().find("does not exist"), std::string::npos) << log.str();
}

TEST(McpServeTraceDb, NotATraceDbIsBadInput) {
  const std::string path = temp_db_path("not-a-trace");
  { std::ofstream(path) << "hello"; }
  std::istringstream in;
  std::ostringstream out, log;
  EXPECT_EQ(serve_trace_db(path, in, out, log), kExitBadInput);
  EXPECT_TRUE(out.str().empty());
  EXPECT_NE(log.str().find("fix: "), std::string::npos) << log.str();
  std::remove(path.c_str());
}

TEST(McpServeTraceDb, AnswersEachLineOnOutAndLogsOnLog) {
  const std::string path = temp_db_path("serve");
  write_fixture(path);
  std::istringstream in(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_runs","arguments":{}}})"
      "\n");
  std::ostringstream out, log;
  EXPECT_EQ(serve_trace_db(path, in, out, log), 0);
  std::istringstream lines(out.str());
  std::string line;
  std::vector<json> responses;
  while (std::getline(lines, line)) responses.push_back(json::parse(line));
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0]["result"]["serverInfo"]["name"], "ingero-bench");
  EXPECT_EQ(responses[1]["result"]["structuredContent"]["runs"].size(), 3u);
  EXPECT_NE(log.str().find("initialized by t 1"), std::string::npos) << log.str();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ingero::mcp
