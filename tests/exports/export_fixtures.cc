// SPDX-License-Identifier: Apache-2.0
#include "tests/exports/export_fixtures.h"

#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reports/profile_scenario.h"

namespace ingero::reports::testing {
namespace {

void must(const Status& status, const std::string& what) {
  if (!status) throw std::runtime_error(what + ": " + status.error().message);
}

// add_event stores no ret or stream; these set them on the run's only event of an op.
void set_columns(TraceFixture& db, int64_t run, const std::string& op, const std::string& assignments) {
  const std::string sql =
      fmt::format("UPDATE events SET {} WHERE run_id = {} AND op = {}", assignments, run, db.op_code(op));
  must(db.db().exec(sql), "update " + op);
}

void add_threads(TraceFixture& db, int64_t run, int64_t start, int64_t end, int workers) {
  const auto thread = [&](int64_t tid, int64_t pid, std::optional<int64_t> ppid, std::string comm, std::string role,
                          int64_t from) {
    db.add_thread(run, {tid, pid, ppid, std::move(comm), std::move(role), from, end, std::nullopt, std::nullopt});
  };
  thread(kMain, kMain, 1, "python3", "main", start);
  thread(kPin, kMain, std::nullopt, "ib-pin", "pin", start);
  thread(kOther, kMain, std::nullopt, "cuda-EvtHandlr", "other", start);
  for (int w = 0; w < workers; ++w)
    thread(kWorkerA + w, kWorkerA + w, kMain, fmt::format("ib-worker-{}", w), "worker", start + kMs);
}

ThreadStatsRecord stats(int64_t tid, int64_t pid, int64_t scale) {
  ThreadStatsRecord s;
  s.tid = tid;
  s.pid = pid;
  s.counters.voluntary_switches = 100 * scale;
  s.counters.involuntary_switches = 10 * scale;
  s.counters.oncpu_ns = 400 * kMs * scale;
  s.counters.offcpu_ns = 300 * kMs * scale;
  s.counters.offcpu_max_ns = 20 * kMs;
  s.counters.runq_count = 50 * scale;
  s.counters.runq_ns = 5 * kMs * scale;
  s.counters.page_allocs = 1000 * scale;
  s.counters.page_alloc_bytes = 4096 * 1000 * scale;
  s.counters.page_faults = 500 * scale;
  return s;
}

void add_thread_stats(TraceFixture& db, int64_t run, int workers) {
  db.add_thread_stats(run, stats(kMain, kMain, 4));
  db.add_thread_stats(run, stats(kPin, kMain, 2));
  db.add_thread_stats(run, stats(kOther, kMain, 1));
  for (int w = 0; w < workers; ++w) db.add_thread_stats(run, stats(kWorkerA + w, kWorkerA + w, 3));
}

// ---- sweeps

struct Point {
  int workers;
  std::optional<int> prefetch;
  std::string label() const {
    return prefetch ? fmt::format("loader w{} pf{}", workers, *prefetch) : fmt::format("loader w{}", workers);
  }
};

std::string point_config(const Point& p) {
  auto config = nlohmann::json::parse(loader_config(p.workers, p.prefetch.value_or(2), false));
  if (!p.prefetch) config["prefetch_factor"] = nullptr;
  config["samples"] = 1'000'000;
  config["features"] = 100;
  return config.dump();
}

std::string result_record(double median_s, double wait_fraction) {
  const std::vector<double> epochs = {median_s * 0.97, median_s, median_s * 1.03};
  return nlohmann::json{{"status", "ok"}, {"epoch_seconds", epochs}, {"epoch_median_s", median_s},
                        {"wait_fraction", wait_fraction}}
      .dump();
}

void add_sweep(TraceFixture& db, int64_t sweep, const std::string& baseline, const std::string& recommended) {
  must(db.db().exec(fmt::format(
           "INSERT INTO sweeps(sweep_id, started_unix, ended_unix, status, request_json, rules_json, baseline_point, "
           "recommended_point) VALUES ({}, 1.7e9, 1.7e9 + 600, 'done', '{{}}', '{{}}', '{}', {})",
           sweep, baseline, recommended.empty() ? "NULL" : "'" + recommended + "'")),
       "insert sweep");
}

void add_point(TraceFixture& db, int64_t sweep, const Point& p, int position, const std::string& state,
               const std::string& reason = "") {
  auto stmt = db.db().prepare(
      "INSERT INTO sweep_points(sweep_id, point, position, config_json, state, reason) VALUES (?, ?, ?, ?, ?, ?)");
  if (!stmt) throw std::runtime_error("prepare sweep_points");
  stmt->bind(1, sweep).bind(2, p.label()).bind(3, int64_t{position}).bind(4, point_config(p)).bind(5, state);
  stmt->bind(6, reason.empty() ? std::optional<std::string>() : std::optional<std::string>(reason));
  must(stmt->run(), "insert sweep point");
}

constexpr int64_t kSweepRunLength = 5'000 * kMs;

int64_t add_sweep_run(TraceFixture& db, int64_t sweep, const Point& p, const std::string& phase, double median_s,
                      int64_t start) {
  RunSpec spec;
  spec.label = p.label();
  spec.config_json = point_config(p);
  spec.result_json = result_record(median_s, p.workers == 0 ? 0.6 : 0.3 / p.workers);
  spec.start_ns = start;
  spec.end_ns = start + kSweepRunLength;
  spec.root_pid = kMain;
  spec.sweep_id = sweep;
  spec.sweep_point = p.label();
  spec.sweep_phase = phase;
  const int64_t run = db.add_run(spec);
  add_threads(db, run, start, start + kSweepRunLength, p.workers);
  add_thread_stats(db, run, p.workers);
  return run;
}

// The main loop of the baseline run: each batch a wait (blocked most of it) then a copy, a launch
// and a synchronize; workers start, then alternate fetching with waits.
void add_loop_events(TraceFixture& db, int64_t run, int64_t start, int workers) {
  for (int w = 0; w < workers; ++w) {
    const int64_t tid = kWorkerA + w;
    db.add_event(run, "worker_start", start + kMs, 300 * kMs, tid, tid, std::nullopt, w);
    for (int k = 0; k < 10; ++k) {
      const int64_t t = start + 400 * kMs + k * 450 * kMs;
      db.add_event(run, "offcpu_blocked", t + 200 * kMs, 150 * kMs, tid, tid);
      db.add_event(run, "runq_wait", t + 350 * kMs, 2 * kMs, tid, tid);
    }
  }
  for (int b = 0; b < 10; ++b) {
    const int64_t t = start + 400 * kMs + b * 450 * kMs;
    db.add_event(run, "batch_wait", t, 200 * kMs, kMain, kMain, std::nullopt, b);
    db.add_event(run, "offcpu_blocked", t + kMs, 190 * kMs, kMain, kMain);
    db.add_event(run, "batch_compute", t + 200 * kMs, 230 * kMs, kMain, kMain, std::nullopt, b);
    db.add_event(run, "cudaMemcpyAsync", t + 201 * kMs, 20 * kMs, kMain, kMain, 4'000'000);
    db.add_event(run, "cudaLaunchKernel", t + 222 * kMs, 10 * kUs, kMain, kMain);
    db.add_event(run, "cudaStreamSynchronize", t + 223 * kMs, 100 * kMs, kMain, kMain);
  }
}

}  // namespace

int64_t add_profiled_job(TraceFixture& db) {
  using namespace frames;
  RunSpec spec;
  spec.label = "python3 train.py";
  spec.kind = std::string(contract::kind::kCommand);
  spec.end_ns = 500 * kMs;
  const int64_t run = db.add_run(spec);
  db.add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
  db.add_thread(run, {kWorkerA, kWorkerA, kMain, "pt_data_worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
  db.add_thread(run, {kWorkerB, kWorkerB, kMain, "pt_data_worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
  db.set_setting(run, std::string(contract::kBatchSourceSetting), std::string(contract::kBatchSourceObserver));
  db.begin();
  for (int b = 0; b < 20; ++b) {
    const int64_t start = 10 * kMs + b * 20 * kMs;
    db.add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
    db.add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
    db.add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
  }
  db.commit();
  ProfileBuilder p(db, run);
  p.add(kMain, {module(), train(), forward(), conv()}, 40, 10 * kMs);
  p.add(kMain, {module(), train(), forward(), conv()}, 20, 250 * kMs);
  p.add(kMain, {module(), train(), next_batch(), fetch(), collate(), at_cat()}, 30, 10 * kMs);
  p.add(kMain, {module(), train(), log_step()}, 10, 250 * kMs);
  p.add(kWorkerA, {worker_loop(), fetch(), getitem(), pil_load(), jpeg_decode()}, 41, 10 * kMs);
  p.add(kWorkerA, {worker_loop(), fetch(), getitem(), to_tensor()}, 22, 250 * kMs);
  p.add(kWorkerB, {worker_loop(), fetch(), getitem()}, 37, 10 * kMs);
  return run;
}

int64_t add_perfetto_run(TraceFixture& db) {
  RunSpec spec;
  spec.label = "perfetto fixture";
  spec.config_json = loader_config(2);
  spec.start_ns = kRunStart;
  spec.end_ns = kRunStart + kRunLength;
  spec.root_pid = kMain;
  const int64_t run = db.add_run(spec);
  add_threads(db, run, kRunStart, kRunStart + kRunLength, 2);
  add_thread_stats(db, run, 2);
  const int64_t t0 = kRunStart;
  db.add_event(run, "exec", t0 + 500 * kUs, 0, kMain, kMain);
  db.add_event(run, "fork", t0 + kMs, 0, kMain, kMain, std::nullopt, kWorkerA);
  db.add_event(run, "batch_wait", t0 + 2 * kMs, 1500 * kUs, kMain, kMain, std::nullopt, 0);
  db.add_event(run, "offcpu_blocked", t0 + 2100 * kUs, kMs, kMain, kMain);
  db.add_event(run, "runq_wait", t0 + 3100 * kUs, 100 * kUs, kMain, kMain);
  db.add_event(run, "batch_compute", t0 + 4 * kMs, 2 * kMs, kMain, kMain, std::nullopt, 0);
  db.add_event(run, "cudaMemcpyAsync", t0 + 4 * kMs, 300 * kUs, kMain, kMain, 4'000'000);
  set_columns(db, run, "cudaMemcpyAsync", "ret = 0, stream = 7");
  db.add_event(run, "cuMemcpyHtoDAsync_v2", t0 + 4050 * kUs, 200 * kUs, kMain, kMain, 4'000'000);
  db.add_event(run, "page_faults", t0 + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, 5);
  db.add_event(run, "page_faults", t0 + 12 * kMs, 3 * kMs, kMain, kPin, std::nullopt, 3);
  db.add_event(run, "page_allocs", t0 + 30 * kMs, kMs, kMain, kMain, 12'288, 3);
  db.add_event(run, "block_io", t0 + 40 * kMs, 2 * kMs, kMain, kPin, 65'536);
  set_columns(db, run, "block_io", "ret = 0");
  db.add_event(run, "worker_start", t0 + kMs, 5 * kMs, kWorkerA, kWorkerA, std::nullopt, 0);
  db.add_event(run, "offcpu_preempted", t0 + 7 * kMs, 250 * kUs, kWorkerA, kWorkerA);
  db.add_event(run, "exit", t0 + 90 * kMs, 0, kWorkerA, kWorkerA);
  set_columns(db, run, "exit", "ret = 0");
  db.add_event(run, "worker_start", t0 + 1200 * kUs, 5 * kMs, kWorkerB, kWorkerB, std::nullopt, 1);
  db.add_event(run, "runq_wait", t0 + 8 * kMs, 40 * kUs, kWorkerB, kWorkerB);
  db.add_event(run, "offcpu_blocked", t0 + 50 * kMs, kMs, kMain, kUnlistedThread);
  return run;
}

double sweep1_epoch_factor(int workers, std::optional<int> prefetch) {
  if (workers == 0) return 3.0;
  if (workers == 2) return prefetch == 2 ? 2.0 : 1.9;
  return prefetch == 2 ? 1.0 : 0.98;  // within noise of each other: the cheaper pf2 is recommended
}

SweepDb write_sweep_db(const std::string& path) {
  auto db = TraceFixture::create(path);
  db->begin();
  SweepDb out;
  const std::vector<Point> points = {{0, std::nullopt}, {2, 2}, {2, 4}, {4, 2}, {4, 4}};
  const Point baseline{2, 2}, recommended{4, 2}, pruned{8, 2};
  add_sweep(*db, 1, baseline.label(), recommended.label());
  int position = 0;
  for (const auto& p : points) add_point(*db, 1, p, position++, "measured");
  add_point(*db, 1, pruned, position++, "pruned", "slower than loader w4 pf2 beyond noise after 1 epoch");
  int64_t start = 10'000 * kMs;
  for (const auto& p : points) {
    const int64_t run = add_sweep_run(*db, 1, p, "measure", sweep1_epoch_factor(p.workers, p.prefetch), start);
    if (p.label() == baseline.label()) {
      out.baseline_run = run;
      add_loop_events(*db, run, start, p.workers);
    }
    if (p.label() == recommended.label()) out.recommended_run = run;
    start += 2 * kSweepRunLength;
  }
  for (int repeat = 0; repeat < 2; ++repeat) {
    add_sweep_run(*db, 1, baseline, "verify", 2.0, start);
    start += 2 * kSweepRunLength;
    add_sweep_run(*db, 1, recommended, "verify", 1.0, start);
    start += 2 * kSweepRunLength;
  }
  const Point w0{0, std::nullopt}, w1{1, 2};
  add_sweep(*db, 2, w0.label(), "");
  add_point(*db, 2, w0, 0, "measured");
  add_point(*db, 2, w1, 1, "measured");
  add_sweep_run(*db, 2, w0, "measure", 3.0, start);
  out.last_run = add_sweep_run(*db, 2, w1, "measure", 2.5, start + 2 * kSweepRunLength);
  db->commit();
  return out;
}

}  // namespace ingero::reports::testing
