// SPDX-License-Identifier: Apache-2.0
// The duty cycle of hot calls against the real kernel, and what the readers make of it:
// tests/tracer/cuda_calls calls cudaEventRecord in /usr/local/cuda's libcudart a known number
// of times at a chosen rate. Needs root (CAP_BPF); skips without the library.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <sstream>
#include <string>

#include "common/trace_contract.h"
#include "reports/render/commands.h"
#include "reports/render/report_json.h"
#include "reports/text/tracing_cost_text.h"
#include "tests/tracer/trace_run.h"

namespace ingero::tracer::testing {
namespace {

#define REQUIRE_ROOT_AND_CUDART()                                                                  \
  if (geteuid() != 0) GTEST_SKIP() << "needs root for eBPF: run the tracer tests as root (sudo ctest)"; \
  if (access(INGERO_CUDART, R_OK) != 0 || access(INGERO_CUDA_CALLS, X_OK) != 0)                     \
    GTEST_SKIP() << INGERO_CUDART << " (or the test program calling it) is absent; CUDA probes not tested"; \
  if (access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "a GPU is present: cuda_calls is meant for machines without one"

// cudaEventRecord `records` times, one every `every_us` of CPU work.
Result<TracedRun> trace_records(const TempDir& dir, const TraceOptions& opts, long records, int every_us) {
  const std::string n = std::to_string(records), us = std::to_string(every_us);
  return run_traced(dir, opts, [&] {
    execl(INGERO_CUDA_CALLS, INGERO_CUDA_CALLS, "--records", n.c_str(), "--every-us", us.c_str(),
          static_cast<char*>(nullptr));
    return 127;
  });
}

TraceOptions explicit_library() {
  TraceOptions opts;
  opts.library_paths = {INGERO_CUDART};
  return opts;
}

int64_t records_counted(const TracedRun& run) {
  return run.query_int("SELECT coalesce(sum(calls), 0) FROM call_stats WHERE" + run.where() +
                       "AND op = (SELECT op FROM ops WHERE name = 'cudaEventRecord')");
}

int64_t sampled_rows(const TracedRun& run) {
  return run.query_int("SELECT count(*) FROM call_sampling WHERE" + run.where());
}

std::string setting(const TracedRun& run, std::string_view key) {
  auto stmt = run.db.prepare("SELECT value FROM run_settings WHERE run_id = ? AND key = ?");
  if (!stmt) return {};
  stmt->bind(1, run.run_id).bind(2, key);
  auto row = stmt->step();
  return row && *row ? stmt->column_text(0) : std::string();
}

reports::ExplainReport explain(const std::string& db, int64_t run_id) {
  auto trace = reports::TraceFile::open(db);
  EXPECT_TRUE(trace.ok());
  reports::ExplainOptions options;
  options.db = db;
  options.run = run_id;
  auto report = reports::make_explain_report(**trace, options);
  EXPECT_TRUE(report.ok()) << report.error().message;
  return std::move(report).value();
}

// 400 calls a second cost a thread well under the 1 % hot share: every call is trapped and counted.
TEST(CallSampling, ACallAtALowRateIsCountedExactlyAtTheDefault) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  auto run = trace_records(dir, explicit_library(), 300, 2500);
  ASSERT_RUN(run);
  EXPECT_EQ(run->wait_status, 0);
  EXPECT_EQ(records_counted(*run), 300);
  EXPECT_EQ(sampled_rows(*run), 0);
  EXPECT_EQ(setting(*run, contract::kCallSamplingSetting), "on");
  // The calibration ran and is stored: a hit costs something, and less than a millisecond.
  const double entry = std::stod(setting(*run, contract::kProbeEntryNsSetting));
  const double call = std::stod(setting(*run, contract::kProbeCallNsSetting));
  EXPECT_GT(entry, 0);
  EXPECT_GT(call, 0);
  EXPECT_LT(call, 1e6);
  const reports::ExplainReport report = explain(dir.file("trace.db"), run->run_id);
  ASSERT_TRUE(report.tracing_cost.known());
  EXPECT_TRUE(report.tracing_cost.sampled.empty());
  ASSERT_TRUE(report.tracing_cost.main);
  EXPECT_EQ(report.tracing_cost.main->hits, 301);  // and the sync
  EXPECT_LT(report.tracing_cost.main->share, 0.01);
  const auto lines = reports::tracing_cost_lines(report.tracing_cost);
  // The probes', the other kernel programs' (timed by default), the CPU profile's and the worker-health
  // sampler's (both on by default).
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].rfind("the worker-health sampler read /proc for ", 0), 0u) << lines[3];
  EXPECT_NE(lines[0].find("exact counts for all functions"), std::string::npos) << lines[0];
  ASSERT_TRUE(report.tracing_cost.programs) << report.tracing_cost.programs_unknown_because;
  EXPECT_GT(report.tracing_cost.programs->runs, 0);
  EXPECT_EQ(lines[1].rfind("the tracer's scheduler, memory, process and block programs ran ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("the CPU profile's sampling program ran ", 0), 0u) << lines[2];
  for (const auto& row : report.calls) EXPECT_FALSE(row.estimate) << row.function;
}

// 25,000 calls a second: the function is duty-cycled in that process, its count estimated, and the
// readers say so. (At 50,000 a second the traps took ~30 % of the windows, and a busy machine that
// doubled their cost left only a lower bound, rightly.)
TEST(CallSampling, ACallAtAHighRateIsDutyCycledAndEstimatedWithinItsInterval) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  constexpr long kRecords = 45'000;
  auto run = trace_records(dir, explicit_library(), kRecords, 40);
  ASSERT_RUN(run);
  EXPECT_EQ(run->wait_status, 0);
  ASSERT_EQ(sampled_rows(*run), 1);
  const std::string row = " FROM call_sampling WHERE" + run->where();
  EXPECT_EQ(run->query_int("SELECT pid" + row), run->root_pid);
  EXPECT_GE(run->query_int("SELECT windows" + row), 10);
  const int64_t probed = records_counted(*run);
  EXPECT_EQ(run->query_int("SELECT probed_calls" + row), probed);
  EXPECT_LT(probed, kRecords / 2);  // most calls were not trapped
  const int64_t estimate = run->query_int("SELECT estimated_calls" + row);
  EXPECT_LE(run->query_int("SELECT estimated_low" + row), kRecords);
  EXPECT_TRUE(run->query_int("SELECT estimated_high IS NULL OR estimated_high >= " + std::to_string(kRecords) + row));
  EXPECT_NEAR(static_cast<double>(estimate), kRecords, 0.25 * kRecords);
  // Timed on the caller's own clock: its on-CPU time around every window, read from the
  // scheduler programs (a thread that busy-waits between calls ran through every window).
  ASSERT_EQ(run->totals.sampled.size(), 1u);
  const tracer::SampledFunction& sampled = run->totals.sampled.front();
  EXPECT_TRUE(sampled.estimate.on_cpu_clock) << [&] {
    std::string windows;
    for (const auto& w : sampled.calls.windows)
      windows += w.callers ? fmt::format(" [{} calls, {} timed in {} ns, {} around]", w.calls, w.callers->calls,
                                         w.callers->window_ns, w.callers->counted_in_gaps)
                           : fmt::format(" [{} calls, untimed]", w.calls);
    return windows;
  }();
  ASSERT_TRUE(sampled.calls.callers_tail_ns.has_value());
  EXPECT_EQ(run->query_int("SELECT rate_clock = 'on_cpu'" + row), 1) << "the DB says which clock the rates were on";
  for (const auto& w : sampled.calls.windows) {
    ASSERT_TRUE(w.callers.has_value());
    EXPECT_LE(w.callers->window_ns, w.end_ns - w.start_ns);  // it ran at most the window
    // Its calls while it was timed, and those the probes caught just outside that span, are all
    // the window counted (it is the only caller).
    EXPECT_EQ(w.callers->calls + w.callers->counted_in_gaps, w.calls);
  }
  // The calibrated cost was scaled by what the return probe's program took per hit in the windows,
  // against its time in the calibration; both are stored. (A kernel that refuses the run-time
  // statistics leaves both unmeasured: the next test's case.)
  const bool timed = !setting(*run, contract::kProbeReturnProgramNsSetting).empty();
  if (!timed) std::cerr << "this kernel refused BPF run-time statistics: the trap cost scale is not checked\n";
  if (timed) {
    EXPECT_GT(std::stod(setting(*run, contract::kProbeReturnProgramNsSetting)), 0);
    ASSERT_TRUE(sampled.estimate.trap_cost_scale);
    EXPECT_EQ(run->query_int("SELECT trap_cost_scale IS NOT NULL" + row), 1);
    // Every window that counted calls timed their returns.
    EXPECT_EQ(run->query_int("SELECT count(*) FROM call_sampling_windows WHERE calls > 0 AND "
                             "return_program_runs > 0 AND" + run->where()),
              run->query_int("SELECT count(*) FROM call_sampling_windows WHERE calls > 0 AND" + run->where()));
  }

  const reports::ExplainReport report = explain(dir.file("trace.db"), run->run_id);
  const reports::CallLatencyRow* records = nullptr;
  for (const auto& r : report.calls)
    if (r.function == "cudaEventRecord") records = &r;
  ASSERT_NE(records, nullptr);
  ASSERT_TRUE(records->estimate);
  EXPECT_EQ(records->count(), estimate);
  ASSERT_EQ(report.tracing_cost.sampled.size(), 1u);
  const auto lines = reports::tracing_cost_lines(report.tracing_cost);
  // The probes', the sampled function's, the other programs', the CPU profile's, the health sampler's.
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[3].find("the CPU profile's sampling program ran"), std::string::npos) << lines[3];
  EXPECT_NE(lines[1].find("cudaEventRecord sampled"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("count ≈"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("its rate per second its calling threads ran"), std::string::npos) << lines[1];
  if (timed) {
    EXPECT_NE(lines[1].find("x the calibrated cost, as measured in the job"), std::string::npos) << lines[1];
  }
  const auto json = reports::to_json(report);
  EXPECT_EQ(json["tracing_cost"]["sampled"][0]["rate_clock"], "on_cpu");
  if (timed) {
    EXPECT_NEAR(json["tracing_cost"]["sampled"][0]["trap_cost_scale"].get<double>(),
                *sampled.estimate.trap_cost_scale, 1e-9);
  }
  bool estimated = false;
  for (const auto& c : json["call_latency"])
    if (c["function"] == "cudaEventRecord") estimated = c["estimated"].get<bool>();
  EXPECT_TRUE(estimated);
  EXPECT_EQ(json["tracing_cost"]["sampled"].size(), 1u);
  std::ostringstream text;
  reports::ExplainOptions options;
  options.db = dir.file("trace.db");
  options.run = run->run_id;
  ASSERT_TRUE(reports::explain(options, text).ok());
  EXPECT_NE(text.str().find("≈ " ), std::string::npos);
  EXPECT_NE(text.str().find("estimated: sampled"), std::string::npos) << text.str();
}

// A launch-like loop at the default (cudaEventRecord every 10 us, a call of well under 2 us): its
// windows' edges once paired an entry seen in one window with a later call's return in the next,
// and about one "slow call" of up to 80 ms per window (3.98 s in a 5.4 s loop) ranked a HIGH chain.
// An entry pairs only with its own return, with no edge of the probes between: the calls an edge
// cuts are counted as such and timed as nothing. (A call the scheduler preempted is slow for real:
// on a busy 2-core machine a few are, each as long as the preemption, and they may make a LOW chain
// that says so; none spans an edge.)
TEST(CallSampling, WindowEdgesInventNoSlowCallsAndNoChain) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  constexpr long kRecords = 300'000;
  auto run = trace_records(dir, explicit_library(), kRecords, 10);
  ASSERT_RUN(run);
  EXPECT_EQ(run->wait_status, 0);
  ASSERT_EQ(sampled_rows(*run), 1);
  const std::string op = " AND op = (SELECT op FROM ops WHERE name = 'cudaEventRecord')";
  const int64_t windows = run->query_int("SELECT windows FROM call_sampling WHERE" + run->where());
  ASSERT_GE(windows, 20);
  // No timed call spans an edge: the start of sampling, or a window's attach or close.
  const std::string slow_calls = " FROM events e WHERE e.dur_ns >= 1000000 AND e.run_id = " +
                                 std::to_string(run->run_id) + " AND e.op = (SELECT op FROM ops WHERE name = "
                                 "'cudaEventRecord')";
  EXPECT_EQ(run->query_int("SELECT count(*)" + slow_calls +
                           " AND (EXISTS (SELECT 1 FROM call_sampling s WHERE s.run_id = e.run_id AND s.since_ns "
                           "BETWEEN e.ts_ns AND e.ts_ns + e.dur_ns) OR EXISTS (SELECT 1 FROM call_sampling_windows w "
                           "WHERE w.run_id = e.run_id AND (w.start_ns BETWEEN e.ts_ns AND e.ts_ns + e.dur_ns OR "
                           "w.end_ns BETWEEN e.ts_ns AND e.ts_ns + e.dur_ns)))"),
            0);
  // What is slow is a preemption's worth, not a window gap's: a phantom per window would be seconds.
  const int64_t slow_ns = run->query_int("SELECT coalesce(sum(e.dur_ns), 0)" + slow_calls);
  const int64_t span_ns = run->query_int("SELECT until_ns - since_ns FROM call_sampling WHERE" + run->where());
  EXPECT_LT(slow_ns, span_ns / 50) << run->query_int("SELECT count(*)" + slow_calls) << " slow calls, of " << windows
                                   << " windows";
  // The edges did cut calls (the probes come and go one link at a time), and they are counted.
  const int64_t cut = run->query_int("SELECT coalesce(sum(cut_calls), 0) FROM call_stats WHERE" + run->where() + op);
  EXPECT_GT(cut, 0);
  // Every probed call was timed or cut (but the last, whose return the end of tracing may have taken).
  EXPECT_EQ(run->query_int("SELECT sum(returns) + sum(cut_calls) >= sum(calls) - 1 FROM call_stats WHERE" +
                           run->where() + op),
            1);

  const reports::ExplainReport report = explain(dir.file("trace.db"), run->run_id);
  // A real slow call remains possible on this loaded VM, preempted or, about 1 run in 10, spent on the
  // CPU inside the trap; none spans an edge (above), and none is worth more than a LOW chain.
  for (const auto& chain : report.chains.chains) {
    if (chain.victim == "cudaEventRecord") {
      EXPECT_EQ(chain.severity, reports::Severity::low) << chain.cause.code();
    }
  }
  const reports::CallLatencyRow* records = nullptr;
  for (const auto& r : report.calls)
    if (r.function == "cudaEventRecord") records = &r;
  ASSERT_NE(records, nullptr);
  ASSERT_TRUE(records->cut);
  EXPECT_EQ(*records->cut, cut);
  const auto json = reports::to_json(report);
  for (const auto& c : json["call_latency"]) {
    if (c["function"] == "cudaEventRecord") {
      EXPECT_EQ(c["cut_calls"].get<int64_t>(), cut);
    }
  }
  std::ostringstream text;
  reports::ExplainOptions options;
  options.db = dir.file("trace.db");
  options.run = run->run_id;
  ASSERT_TRUE(reports::explain(options, text).ok());
  EXPECT_NE(text.str().find("probed calls could not be timed"), std::string::npos) << text.str();
}

// Bursts of failing calls with no work between them: 1 M calls that end within ~0.1 s, before the
// first window (once "≈ 9,838 [9,838, 9,838]"), and 20 M in about 0.4 s, whose windows are mostly
// traps (once "≈ 291,937 [64,847, —]"). Neither may claim what it does not know: the interval holds
// the truth and has width, and where no upper bound is known the count is a lower bound only.
TEST(CallSampling, BurstsGiveAnIntervalThatHoldsTheTruthOrALowerBoundOnly) {
  REQUIRE_ROOT_AND_CUDART();
  for (long records : {1'000'000L, 20'000'000L}) {
    TempDir dir;
    auto run = trace_records(dir, explicit_library(), records, 0);
    ASSERT_RUN(run);
    EXPECT_EQ(run->wait_status, 0);
    if (sampled_rows(*run) == 0) {  // the burst ended before it was found hot: every call trapped
      EXPECT_EQ(records_counted(*run), records);
      continue;
    }
    const std::string row = " FROM call_sampling WHERE" + run->where();
    const int64_t low = run->query_int("SELECT estimated_low" + row);
    EXPECT_LE(low, records);
    EXPECT_EQ(run->query_int("SELECT estimated_high IS NULL OR (estimated_high >= " + std::to_string(records) +
                             " AND estimated_high > estimated_low)" + row),
              1)
        << records << " calls";
    if (run->query_int("SELECT estimated_high IS NULL" + row)) {
      EXPECT_EQ(run->query_int("SELECT estimated_calls" + row), low);
      const reports::ExplainReport report = explain(dir.file("trace.db"), run->run_id);
      const auto lines = reports::tracing_cost_lines(report.tracing_cost);
      ASSERT_GE(lines.size(), 2u);
      EXPECT_NE(lines[1].find("count at least "), std::string::npos) << lines[1];
    }
  }
}

// With the kernel's run-time statistics off (--no-program-time) the windows cannot time the return
// probe's program: the estimate keeps the calibrated cost, and the DB and the text say so.
TEST(CallSampling, WithoutProgramTimeTheCalibratedCostStandsAndTheRunSaysSo) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  TraceOptions opts = explicit_library();
  opts.program_time = false;
  auto run = trace_records(dir, opts, 60'000, 20);
  ASSERT_RUN(run);
  ASSERT_EQ(sampled_rows(*run), 1);
  EXPECT_EQ(setting(*run, contract::kProbeReturnProgramNsSetting), "");
  ASSERT_EQ(run->totals.sampled.size(), 1u);
  EXPECT_FALSE(run->totals.sampled.front().estimate.trap_cost_scale);
  EXPECT_EQ(run->query_int("SELECT trap_cost_scale IS NULL FROM call_sampling WHERE" + run->where()), 1);
  EXPECT_EQ(run->query_int("SELECT count(*) FROM call_sampling_windows WHERE return_program_runs IS NOT NULL AND" +
                           run->where()),
            0);
  const auto lines = reports::tracing_cost_lines(explain(dir.file("trace.db"), run->run_id).tracing_cost);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[1].find("the windows' traps taken at the calibrated cost"), std::string::npos) << lines[1];
}

// --cuda-detail exact traps every call at any rate: exact counts, nothing sampled, and the run
// says why.
TEST(CallSampling, ExactDetailCountsEveryCallAtAHighRate) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  TraceOptions opts = explicit_library();
  opts.cuda_detail = CudaDetail::exact;
  constexpr long kRecords = 20'000;
  auto run = trace_records(dir, opts, kRecords, 20);
  ASSERT_RUN(run);
  EXPECT_EQ(records_counted(*run), kRecords);
  EXPECT_EQ(sampled_rows(*run), 0);
  EXPECT_EQ(setting(*run, contract::kCallSamplingSetting), "off");
  EXPECT_NE(setting(*run, contract::kCallSamplingNoteSetting).find("--cuda-detail exact"), std::string::npos);
}

// Without a calibration the run says its tracing cost is unknown, and why; hot calls are still
// found (with the documented fallback cost).
TEST(CallSampling, AnUncalibratedRunSaysItsTracingCostIsUnknown) {
  REQUIRE_ROOT_AND_CUDART();
  TempDir dir;
  TraceOptions opts = explicit_library();
  opts.calibrate = false;
  auto run = trace_records(dir, opts, 300, 2500);
  ASSERT_RUN(run);
  EXPECT_EQ(setting(*run, contract::kProbeEntryNsSetting), "");
  EXPECT_NE(setting(*run, contract::kProbeCostUnknownSetting), "");
  const reports::ExplainReport report = explain(dir.file("trace.db"), run->run_id);
  EXPECT_FALSE(report.tracing_cost.known());
  const auto lines = reports::tracing_cost_lines(report.tracing_cost);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("tracing cost unknown: ", 0), 0u) << lines[0];
}

}  // namespace
}  // namespace ingero::tracer::testing
