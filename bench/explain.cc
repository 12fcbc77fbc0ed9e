// SPDX-License-Identifier: Apache-2.0
// Times `explain` (reports::explain, the text report) on a generated trace of about 10
// million events (tests/reports/synthetic_trace.h), the whole run and its last --since
// seconds. --events is the generator's budget: it stores about 5/6 of it (page faults go
// in bursts of 64, as the tracer stores them), so the default 12 M gives ~10.0 M events.
// The DB (default /tmp/ingero-explain-benchmark-<events>.db) is generated once (about a
// minute) and reused when it exists. One
// explain is one iteration, repeated 3 times; CPU time is the process's (explain reads
// the events with two threads). Target: 2 s on the 2-core CPU machine.
//
//   ingero_explain_bench [--db PATH] [--events N] [--since S] [--benchmark_...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include <sqlite3.h>

#include "bench/bench_context.h"
#include "reports/render/commands.h"
#include "tests/reports/synthetic_trace.h"

namespace {

constexpr double kTargetSeconds = 2.0;

struct Options {
  std::string db;  // default: named after `events`
  int64_t events = 12'000'000;
  double since_s = 20;
};
Options options;
int64_t db_events = 0;

int64_t count_events(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM events", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

void BM_Explain(benchmark::State& state, bool since) {
  ingero::reports::ExplainOptions explain;
  explain.db = options.db;
  if (since) explain.since_s = options.since_s;
  size_t report_bytes = 0;
  for (auto _ : state) {
    std::ostringstream report;
    const ingero::Status status = ingero::reports::explain(explain, report);
    if (!status.ok()) {
      state.SkipWithError(("explain failed: " + status.error().message).c_str());
      break;
    }
    report_bytes = report.str().size();
  }
  if (state.error_occurred()) return;
  state.counters["events_in_db"] = static_cast<double>(db_events);
  state.counters["db_events_per_s"] = benchmark::Counter(static_cast<double>(db_events), benchmark::Counter::kIsRate);
  state.counters["target_s"] = kTargetSeconds;
  state.counters["report_bytes"] = static_cast<double>(report_bytes);
  if (since) state.counters["since_s"] = options.since_s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<ingero::bench::Flag> flags = {
      {"--db", [](const char* v) { options.db = v; }},
      {"--events", [](const char* v) { options.events = atoll(v); }},
      {"--since", [](const char* v) { options.since_s = atof(v); }},
  };
  const auto valid = [] { return options.events > 0 && options.since_s > 0; };
  if (int rc = ingero::bench::start(&argc, argv, flags, valid, "[--db PATH] [--events N] [--since S]")) return rc;
  if (options.db.empty()) options.db = "/tmp/ingero-explain-benchmark-" + std::to_string(options.events) + ".db";
  if (!std::filesystem::exists(options.db)) {
    ingero::reports::testing::SyntheticTraceShape shape;
    shape.target_events = options.events;
    fprintf(stderr, "generating a trace for a budget of %lld events into %s (once; later runs reuse it)...\n",
            static_cast<long long>(options.events), options.db.c_str());
    const auto start = std::chrono::steady_clock::now();
    const int64_t written = ingero::reports::testing::write_synthetic_trace(options.db, shape);
    fprintf(stderr, "generated %lld events in %.1f s\n", static_cast<long long>(written),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  } else {
    fprintf(stderr, "reusing %s\n", options.db.c_str());
  }
  db_events = count_events(options.db);
  if (db_events < 0) {
    fprintf(stderr, "%s: no events table\n", options.db.c_str());
    return 1;
  }
  benchmark::AddCustomContext("db", options.db);
  benchmark::AddCustomContext("events_in_db", std::to_string(db_events));
  benchmark::AddCustomContext("sqlite_version", SQLITE_VERSION);
  for (bool since : {false, true}) {
    const std::string name = since ? "explain/since:" + std::to_string(static_cast<int>(options.since_s)) + "s"
                                   : std::string("explain/whole_run");
    benchmark::RegisterBenchmark(name.c_str(), BM_Explain, since)
        ->Iterations(1)
        ->Repetitions(3)
        ->UseRealTime()
        ->MeasureProcessCPUTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
