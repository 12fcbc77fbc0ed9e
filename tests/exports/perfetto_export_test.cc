// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/sqlite.h"
#include "common/trace_contract.h"
#include "reports/render/perfetto_export.h"
#include "tests/exports/export_fixtures.h"

namespace ingero::reports::testing {
namespace {

using nlohmann::json;

class PerfettoExport : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_db_path("perfetto");
    auto db = TraceFixture::create(path_);
    run_ = add_perfetto_run(*db);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Rows added to the run's file as the tracer would write them.
  void add_rows(const std::string& sql) const {
    auto db = sql::open(path_, sql::Mode::read_write, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec(sql).ok()) << sql;
  }

  json trace(const PerfettoOptions& options = {}) const {
    auto file = TraceFile::open(path_);
    EXPECT_TRUE(file.ok());
    auto doc = perfetto_trace(**file, run_, options);
    EXPECT_TRUE(doc.ok()) << doc.error().message;
    return doc.ok() ? *doc : json();
  }

  std::string path_;
  int64_t run_ = 0;
};

std::vector<json> of_phase(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

std::vector<json> named(const json& doc, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["name"] == name) out.push_back(e);
  return out;
}

// thread_name (or process_name) of each (pid, tid) from the M events.
std::map<std::pair<int64_t, int64_t>, std::string> metadata_names(const json& doc, const std::string& kind) {
  std::map<std::pair<int64_t, int64_t>, std::string> names;
  for (const auto& e : of_phase(doc, "M"))
    if (e["name"] == kind) names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["name"];
  return names;
}

std::map<std::pair<int64_t, int64_t>, int64_t> sort_indexes(const json& doc, const std::string& kind) {
  std::map<std::pair<int64_t, int64_t>, int64_t> order;
  for (const auto& e : of_phase(doc, "M"))
    if (e["name"] == kind) order[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["sort_index"];
  return order;
}

TEST_F(PerfettoExport, DocumentHasTheChromeTraceShape) {
  const json doc = trace();
  ASSERT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  EXPECT_EQ(doc["metadata"]["run_id"], run_);
  EXPECT_EQ(doc["metadata"]["truncated"], false);
  const auto& counts = doc["metadata"]["trace_events"];
  EXPECT_EQ(counts["M"].get<size_t>() + counts["X"].get<size_t>() + counts["i"].get<size_t>() +
                counts["C"].get<size_t>() + counts["b"].get<size_t>() + counts["e"].get<size_t>(),
            doc["traceEvents"].size());
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    EXPECT_TRUE(ph == "M" || ph == "X" || ph == "i" || ph == "C" || ph == "b" || ph == "e") << e.dump();
    EXPECT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer()) << e.dump();
    if (ph != "M") {
      EXPECT_TRUE(e["ts"].is_number()) << e.dump();
    }
  }
}

// A duty-cycled function's windows, as the tracer stores them, become async slices on its
// process's own track: when its probes were in and what they counted; its calls between them
// were not seen.
TEST_F(PerfettoExport, ADutyCycledFunctionsWindowsAreSlicesOnItsProcessTrack) {
  const int64_t t0 = kRunStart;
  add_rows(fmt::format("INSERT INTO call_sampling VALUES({0}, {1}, {2}, {3}, {4}, 2, {5}, 900, 9000, 8000, 10000, "
                       "'on_cpu', 1.2);"
                       "INSERT INTO call_sampling_windows VALUES({0}, {1}, {2}, 0, {6}, {7}, 450, 0.2, 40000000, "
                       "5000000, 450, 540000, 0, 451, 54120);"
                       "INSERT INTO call_sampling_windows VALUES({0}, {1}, {2}, 1, {8}, {9}, 430, 0.2, 45000000, "
                       "5000000, 430, 516000, 1, 431, 51720);",
                       run_, kMain, contract::op_code("cuLaunchKernel").value(), t0, t0 + kRunLength, 10 * kMs,
                       t0 + 40 * kMs, t0 + 45 * kMs, t0 + 90 * kMs, t0 + 95 * kMs));
  const json doc = trace();
  const std::vector<json> begins = of_phase(doc, "b"), ends = of_phase(doc, "e");
  ASSERT_EQ(begins.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(doc["metadata"]["trace_events"]["b"], 2);
  const double starts[] = {40'000, 90'000}, calls[] = {450, 430};  // µs from the run's start
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(begins[i]["name"], "cuLaunchKernel probed");
    EXPECT_EQ(begins[i]["cat"], "sampling");
    EXPECT_EQ(begins[i]["pid"], kMain);
    EXPECT_EQ(begins[i]["ts"], starts[i]);
    EXPECT_EQ(begins[i]["args"]["calls"], calls[i]);
    EXPECT_EQ(ends[i]["id"], begins[i]["id"]);
    EXPECT_EQ(ends[i]["name"], begins[i]["name"]);
    EXPECT_EQ(ends[i]["ts"], starts[i] + 5'000);
  }
  EXPECT_NE(begins[0]["id"], begins[1]["id"]);
}

// A function duty-cycled system-wide (pid 0) gets a track of its own, named for what it is, not
// the GPUs' counters' pid 0.
TEST_F(PerfettoExport, SystemWideWindowsAreOnTheirOwnNamedTrackNotTheGpus) {
  const int64_t t0 = kRunStart;
  add_rows(fmt::format("INSERT INTO call_sampling VALUES({0}, 0, {1}, {2}, {3}, 1, {4}, 450, 9000, 8000, 10000, "
                       "'wall', NULL);"
                       "INSERT INTO call_sampling_windows VALUES({0}, 0, {1}, 0, {5}, {6}, 450, 0.2, NULL, NULL, "
                       "NULL, NULL, NULL, NULL, NULL);",
                       run_, contract::op_code("cuLaunchKernel").value(), t0, t0 + kRunLength, 5 * kMs,
                       t0 + 40 * kMs, t0 + 45 * kMs));
  const json doc = trace();
  const std::vector<json> begins = of_phase(doc, "b");
  ASSERT_EQ(begins.size(), 1u);
  EXPECT_EQ(begins[0]["name"], "cuLaunchKernel probed (every process)");
  const int64_t pid = begins[0]["pid"];
  EXPECT_NE(pid, 0);
  EXPECT_GT(pid, int64_t{1} << 22) << "above every pid Linux hands out";
  const auto processes = metadata_names(doc, "process_name");
  ASSERT_TRUE(processes.count({pid, pid}));
  EXPECT_NE(processes.at({pid, pid}).find("every process"), std::string::npos);
}

TEST_F(PerfettoExport, EveryEventsThreadIsNamedWithItsRole) {
  const json doc = trace();
  const auto threads = metadata_names(doc, "thread_name");
  const auto processes = metadata_names(doc, "process_name");
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const std::pair<int64_t, int64_t> key{e["pid"], e["tid"]};
    if (e["ph"] != "C") {
      EXPECT_TRUE(threads.count(key)) << "no thread_name for " << e.dump();
    }
    EXPECT_TRUE(processes.count({key.first, key.first})) << "no process_name for " << e.dump();
  }
  EXPECT_EQ(threads.at({kMain, kMain}), "main 100 python3");
  EXPECT_EQ(threads.at({kMain, kPin}), "pin 101 ib-pin");
  EXPECT_EQ(threads.at({kMain, kOther}), "other 102 cuda-EvtHandlr");
  EXPECT_EQ(threads.at({kMain, kUnlistedThread}), "other 103 ?");
  EXPECT_EQ(threads.at({kWorkerA, kWorkerA}), "worker 200 ib-worker-0");
  EXPECT_EQ(processes.at({kMain, kMain}), "main 100 python3");
  EXPECT_EQ(processes.at({kWorkerB, kWorkerB}), "worker 201 ib-worker-1");
}

TEST_F(PerfettoExport, MainComesFirstThenPinWorkersAndOthers) {
  const json doc = trace();
  const auto processes = sort_indexes(doc, "process_sort_index");
  EXPECT_LT(processes.at({kMain, kMain}), processes.at({kWorkerA, kWorkerA}));
  EXPECT_LT(processes.at({kWorkerA, kWorkerA}), processes.at({kWorkerB, kWorkerB}));
  const auto threads = sort_indexes(doc, "thread_sort_index");
  EXPECT_LT(threads.at({kMain, kMain}), threads.at({kMain, kPin}));
  EXPECT_LT(threads.at({kMain, kPin}), threads.at({kMain, kOther}));
  EXPECT_LT(threads.at({kMain, kOther}), threads.at({kMain, kUnlistedThread}));
}

TEST_F(PerfettoExport, SlicesInstantsAndCountersCarryTheirCategory) {
  const json doc = trace();
  std::multiset<std::string> slices, instants;
  for (const auto& e : of_phase(doc, "X")) {
    slices.insert(e["name"].get<std::string>());
    EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    const std::string name = e["name"];
    for (const auto& op : contract::kOps) {
      if (op.name == name) {
        EXPECT_EQ(e["cat"], std::string(op.category)) << e.dump();
      }
    }
  }
  for (const auto& e : of_phase(doc, "i")) {
    instants.insert(e["name"].get<std::string>());
    EXPECT_EQ(e["cat"], "process");
    EXPECT_EQ(e["s"], "t");
  }
  const std::multiset<std::string> expected_slices = {
      "batch_wait", "batch_compute",    "cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2", "offcpu_blocked", "offcpu_blocked",
      "runq_wait",  "runq_wait",        "worker_start",    "worker_start",         "offcpu_preempted", "block_io"};
  EXPECT_EQ(slices, expected_slices);
  EXPECT_EQ(instants, (std::multiset<std::string>{"exec", "fork", "exit"}));
  EXPECT_EQ(named(doc, "cudaMemcpyAsync").front()["cat"], "cuda_runtime");
  EXPECT_EQ(named(doc, "cuMemcpyHtoDAsync_v2").front()["cat"], "cuda_driver");
  EXPECT_EQ(named(doc, "batch_wait").front()["cat"], "workload");
  EXPECT_EQ(named(doc, "offcpu_preempted").front()["cat"], "sched");
  EXPECT_EQ(named(doc, "block_io").front()["cat"], "io");
}

TEST_F(PerfettoExport, TimesAreMicrosecondsFromTheRunsStart) {
  const json doc = trace();
  const json wait = named(doc, "batch_wait").front();
  EXPECT_DOUBLE_EQ(wait["ts"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(wait["dur"].get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(named(doc, "cuMemcpyHtoDAsync_v2").front()["ts"].get<double>(), 4050.0);
  EXPECT_DOUBLE_EQ(named(doc, "exec").front()["ts"].get<double>(), 500.0);
  EXPECT_EQ(doc["metadata"]["run_start_ns"], kRunStart);
  // Enclosing slices first at equal starts: batch_compute (2 ms) before the copy (300 µs) at 4 ms.
  std::vector<std::string> at_4ms;
  for (const auto& e : of_phase(doc, "X"))
    if (e["ts"] == 4000.0) at_4ms.push_back(e["name"]);
  EXPECT_EQ(at_4ms, (std::vector<std::string>{"batch_compute", "cudaMemcpyAsync"}));
}

TEST_F(PerfettoExport, ArgsAreNamedForWhatTheyHold) {
  const json doc = trace();
  const json copy = named(doc, "cudaMemcpyAsync").front()["args"];
  EXPECT_EQ(copy["bytes"], 4'000'000);
  EXPECT_EQ(copy["stream"], 7);
  EXPECT_EQ(copy["ret"], 0);
  EXPECT_EQ(named(doc, "batch_wait").front()["args"]["batch"], 0);
  EXPECT_EQ(named(doc, "worker_start").back()["args"]["worker_id"], 1);
  EXPECT_EQ(named(doc, "fork").front()["args"]["child_pid"], kWorkerA);
  EXPECT_EQ(named(doc, "exit").front()["args"]["exit_code"], 0);
  EXPECT_EQ(named(doc, "block_io").front()["args"]["bytes"], 65'536);
  EXPECT_EQ(named(doc, "block_io").front()["args"]["status"], 0);
  EXPECT_FALSE(named(doc, "runq_wait").front().contains("args"));
}

// A slow call that carries its stack (event_stacks) names the user's line in its slice's args; a call
// without one gets no site.
TEST_F(PerfettoExport, ASlowCallsSliceNamesTheUsersLineThatMadeIt) {
  add_rows(fmt::format(
      "INSERT INTO profile_frames VALUES ({0}, 1, 'python', '<module>', '/home/u/train.py', 99, 'executing'), "
      "({0}, 2, 'python', 'train_one_epoch', '/home/u/train.py', 57, 'executing'), "
      "({0}, 3, 'native', 'ffi_call_unix64', '/usr/lib/x86_64-linux-gnu/libffi.so.8', NULL, NULL);"
      "INSERT INTO profile_stacks VALUES ({0}, 1, NULL, 1), ({0}, 2, 1, 2), ({0}, 3, 2, 3);"
      "INSERT INTO event_stacks SELECT {0}, {1}, {2}, op, 3 FROM ops WHERE name = 'cudaMemcpyAsync';",
      run_, kMain, kRunStart + 4 * kMs));
  const json doc = trace();
  EXPECT_EQ(named(doc, "cudaMemcpyAsync").front()["args"]["site"], "u/train.py:57 in train_one_epoch");
  EXPECT_FALSE(named(doc, "cuMemcpyHtoDAsync_v2").front()["args"].contains("site"));
}

TEST_F(PerfettoExport, MemoryBurstsBecomeCumulativeCountersPerProcess) {
  const json doc = trace();
  EXPECT_TRUE(named(doc, "page_faults").empty());  // no slices of bursts: counters only
  const auto faults = named(doc, "page faults (cumulative)");
  ASSERT_FALSE(faults.empty());
  double last_ts = -1e18;
  int64_t last = -1;
  for (const auto& e : faults) {
    EXPECT_EQ(e["ph"], "C");
    EXPECT_EQ(e["cat"], "mm");
    EXPECT_EQ(e["pid"], kMain);  // the pin thread's burst counts for its process
    EXPECT_GE(e["ts"].get<double>(), last_ts);
    EXPECT_GE(e["args"]["faults"].get<int64_t>(), last);
    last_ts = e["ts"];
    last = e["args"]["faults"];
  }
  EXPECT_EQ(faults.front()["args"]["faults"], 0);
  EXPECT_DOUBLE_EQ(faults.front()["ts"].get<double>(), 10'000.0);  // the first burst's start
  EXPECT_EQ(last, 5 + 3);
  // The pin thread's burst (12-15 ms) ends before the main thread's (10-20 ms): 3 then 8.
  EXPECT_EQ(faults[1]["args"]["faults"], 3);
  EXPECT_DOUBLE_EQ(faults[1]["ts"].get<double>(), 15'000.0);
  const auto pages = named(doc, "page allocations (cumulative)");
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages.back()["args"]["pages"], 3);
  EXPECT_EQ(named(doc, "page allocation bytes (cumulative)").back()["args"]["bytes"], 12'288);
}

TEST_F(PerfettoExport, MaxEventsTruncatesAndSaysSo) {
  PerfettoOptions options;
  options.max_events = 5;
  const json doc = trace(options);
  EXPECT_EQ(doc["metadata"]["truncated"], true);
  EXPECT_EQ(doc["metadata"]["events_exported"], 5);
  EXPECT_EQ(doc["metadata"]["events_in_run"], 18);
  EXPECT_NE(doc["metadata"]["truncation_note"].get<std::string>().find("first 5 of the run's 18 events"),
            std::string::npos);
  EXPECT_EQ(of_phase(doc, "X").size() + of_phase(doc, "i").size(), 5u);  // the first five, no bursts among them
}

TEST_F(PerfettoExport, FileIsDeterministicAndEqualsTheDocument) {
  const std::string out_a = path_ + ".a.json", out_b = path_ + ".b.json";
  ASSERT_TRUE(export_perfetto(path_, run_, out_a).ok());
  ASSERT_TRUE(export_perfetto(path_, run_, out_b).ok());
  const std::string a = file_bytes(out_a), b = file_bytes(out_b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, trace().dump());
  std::remove(out_a.c_str());
  std::remove(out_b.c_str());
}

TEST_F(PerfettoExport, BadInputNamesTheFlag) {
  const std::string out = path_ + ".json";
  auto unknown_run = export_perfetto(path_, 99, out);
  ASSERT_FALSE(unknown_run.ok());
  EXPECT_EQ(unknown_run.error().exit_code, kExitBadInput);
  EXPECT_EQ(unknown_run.error().message.rfind("--run", 0), 0u) << unknown_run.error().message;
  auto no_db = export_perfetto("/nonexistent/trace.db", run_, out);
  ASSERT_FALSE(no_db.ok());
  EXPECT_EQ(no_db.error().exit_code, kExitBadInput);
  EXPECT_EQ(no_db.error().message.rfind("--db", 0), 0u) << no_db.error().message;
  auto bad_out = export_perfetto(path_, run_, "/proc/self/no/such/dir/x.json");
  ASSERT_FALSE(bad_out.ok());
  EXPECT_EQ(bad_out.error().exit_code, kExitBadInput);
  EXPECT_NE(bad_out.error().message.find("--out"), std::string::npos) << bad_out.error().message;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "nothing is written on bad input";
}

TEST_F(PerfettoExport, ExportLeavesTheDbUnchanged) {
  const std::string before = file_bytes(path_);
  const std::string out = path_ + ".json";
  ASSERT_TRUE(export_perfetto(path_, run_, out).ok());
  EXPECT_EQ(file_bytes(path_), before);
  std::remove(out.c_str());
}

// ---- the H200 reproduction DB (schema 1, upgraded in memory when read)

TEST(PerfettoExportRealDb, SlicesPerOpMatchTheEventsTable) {
  const std::string before = file_bytes(INGERO_H200_DB);
  auto file = TraceFile::open(INGERO_H200_DB);
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto doc = perfetto_trace(**file, 7);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  std::map<std::string, int64_t> exported;
  for (const auto& e : (*doc)["traceEvents"])
    if (e["ph"] == "X") ++exported[e["name"].get<std::string>()];

  // Counted straight from the file, without the reader's code.
  auto db = sql::open(INGERO_H200_DB, sql::Mode::read_only, 1000);
  ASSERT_TRUE(db.ok());
  auto stmt = db->prepare(
      "SELECT o.name, count(*) FROM events e JOIN ops o ON o.op = e.op WHERE e.run_id = 7 "
      "AND o.category NOT IN ('process', 'mm') GROUP BY o.name");
  ASSERT_TRUE(stmt.ok());
  std::map<std::string, int64_t> stored;
  ASSERT_TRUE(stmt->for_each_row([&](const sql::Statement& row) {
                    stored[row.column_text(0)] = row.column_int(1);
                  }).ok());
  EXPECT_EQ(exported, stored);
  EXPECT_GT(stored.at("cudaMemcpyAsync"), 0);
  EXPECT_EQ((*doc)["metadata"]["truncated"], false);
  EXPECT_EQ(file_bytes(INGERO_H200_DB), before);
}

}  // namespace
}  // namespace ingero::reports::testing
