// SPDX-License-Identifier: Apache-2.0
#include "tests/reports/synthetic_trace.h"

#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "tests/reports/trace_fixture.h"

namespace ingero::reports::testing {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;
constexpr int64_t kMainPid = 100;
constexpr int64_t kPinTid = 101;
constexpr int64_t kDriverTid = 102;
constexpr int64_t kFirstWorkerPid = 200;

// Event budget split: the main loop's CUDA calls take about half, worker
// scheduling intervals a third, page faults the rest.
struct Budget {
  int64_t batches;
  int64_t worker_bursts_per_worker;
  int64_t faults_per_worker;
};

Budget split_budget(const SyntheticTraceShape& shape) {
  constexpr int64_t kCallsPerBatch = 1 + 200 + 1 + 4;  // memcpy, launches, sync, sched + workload
  const int64_t main_events = shape.target_events / 2;
  const int64_t worker_events = shape.target_events / 3;
  const int64_t fault_events = shape.target_events - main_events - worker_events;
  return Budget{main_events / kCallsPerBatch, worker_events / (2 * shape.workers),
                fault_events / shape.workers};
}

class Generator {
 public:
  Generator(TraceFixture& db, int64_t run_id, uint32_t seed) : db_(db), run_(run_id), rng_(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void event(const char* op, int64_t ts, int64_t dur, int64_t pid, int64_t tid,
             std::optional<int64_t> bytes = std::nullopt, std::optional<int64_t> arg = std::nullopt) {
    db_.add_event(run_, op, ts, dur, pid, tid, bytes, arg);
    ++count_;
  }

  // The main loop: wait for a batch (blocked), copy it, launch kernels, synchronise.
  int64_t main_loop(int64_t batches) {
    int64_t t = 10 * kMs;
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t wait = uniform(50 * kUs, 400 * kUs);
      event("batch_wait", t, wait, kMainPid, kMainPid, std::nullopt, b);
      event("offcpu_blocked", t + 5 * kUs, wait - 10 * kUs, kMainPid, kMainPid);
      t += wait;
      const int64_t compute_start = t;
      event("cudaMemcpyAsync", t, uniform(15 * kUs, 30 * kUs), kMainPid, kMainPid, 4 << 20, 1);
      t += 40 * kUs;
      for (int k = 0; k < 200; ++k) {
        event("cudaLaunchKernel", t, uniform(4 * kUs, 9 * kUs), kMainPid, kMainPid);
        t += 10 * kUs;
      }
      int64_t sync = uniform(20 * kUs, 40 * kUs);
      if (chance(0.01)) {  // the tail: preempted inside the synchronisation
        sync = uniform(10 * kMs, 40 * kMs);
        event("offcpu_preempted", t + 100 * kUs, sync - 200 * kUs, kMainPid, kMainPid);
      } else {
        event("runq_wait", t, 5 * kUs, kMainPid, kMainPid);
      }
      event("cudaStreamSynchronize", t, sync, kMainPid, kMainPid);
      t += sync;
      event("batch_compute", compute_start, t - compute_start, kMainPid, kMainPid, std::nullopt, b);
    }
    return t;
  }

  // A worker alternates on-CPU bursts with preemption (runnable) or blocking.
  void worker(int64_t pid, int64_t bursts, int64_t faults, int64_t end_ns) {
    const int64_t period = std::max<int64_t>(end_ns / std::max<int64_t>(bursts, 1), 2 * kUs);
    int64_t t = 5 * kMs;
    for (int64_t i = 0; i < bursts && t < end_ns; ++i) {
      const int64_t off = uniform(period / 4, period / 2);
      const int64_t start = t + period - off;
      event(chance(0.5) ? "offcpu_preempted" : "offcpu_blocked", start, off, pid, pid);
      event("runq_wait", start + off / 2, off - off / 2, pid, pid);
      t += period;
    }
    // As the tracer reports them: one event per burst of 64 faults.
    const int64_t bursts_of_faults = std::max<int64_t>(faults / 64, 1);
    const int64_t fault_gap = std::max<int64_t>(end_ns / bursts_of_faults, 1);
    for (int64_t i = 0; i < bursts_of_faults; ++i)
      event("page_faults", 5 * kMs + i * fault_gap, fault_gap / 4, pid, pid, std::nullopt, std::min<int64_t>(faults, 64));
  }

  int64_t count() const { return count_; }

 private:
  TraceFixture& db_;
  int64_t run_;
  std::mt19937_64 rng_;
  int64_t count_ = 0;
};

void add_threads(TraceFixture& db, int64_t run_id, int workers, int64_t end_ns) {
  db.add_thread(run_id, {kMainPid, kMainPid, 1, "python3", "main", 0, end_ns, std::nullopt, std::nullopt});
  db.add_thread(run_id,
                {kPinTid, kMainPid, std::nullopt, "ib-pin", "pin", 1 * kMs, end_ns, std::nullopt, std::nullopt});
  db.add_thread(run_id, {kDriverTid, kMainPid, std::nullopt, "cuda-EvtHandlr", "other", 1 * kMs,
                         end_ns, std::nullopt, std::nullopt});
  for (int w = 0; w < workers; ++w) {
    const int64_t pid = kFirstWorkerPid + w;
    db.add_thread(run_id, {pid, pid, kMainPid, fmt::format("ib-worker-{}", w), "worker", 2 * kMs,
                           end_ns, std::nullopt, std::nullopt});
    db.add_thread_stats(run_id, {pid, pid, {1000, 5000, end_ns / 2, end_ns / 2, 3 * kMs, 6000,
                                            end_ns / 4, 50000, 50000 * 4096, 250000}});
    for (int slot = 0; slot < 12; ++slot) db.add_histogram(run_id, pid, "runq_us", slot, 1000 >> (slot / 2));
  }
  db.add_thread_stats(run_id, {kMainPid, kMainPid, {30000, 300, end_ns / 2, end_ns / 2, 40 * kMs,
                                                     30000, end_ns / 100, 2000, 2000 * 4096, 10000}});
  db.add_histogram(run_id, kMainPid, "runq_us", 2, 30000);
  db.add_histogram(run_id, kMainPid, "runq_us", 14, 300);
}

}  // namespace

int64_t write_synthetic_trace(const std::string& path, const SyntheticTraceShape& shape) {
  auto db = TraceFixture::create(path);
  // A generated benchmark input needs no crash safety; this makes writing it several times faster.
  if (!db->db().exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF").ok()) return 0;
  const Budget budget = split_budget(shape);
  const int64_t batch_period_estimate = 2300 * kUs;
  const int64_t end_estimate = 10 * kMs + budget.batches * batch_period_estimate;

  RunSpec run;
  run.label = fmt::format("loader w{} pf2 pin (synthetic)", shape.workers);
  run.config_json = fmt::format(
      R"({{"mode":"loader","num_workers":{},"prefetch_factor":2,"pin_memory":true,)"
      R"("persistent_workers":false,"shuffle":true,"cpus":0,"batch_size":1048576}})",
      shape.workers);
  run.end_ns = end_estimate + 100 * kMs;
  const int64_t run_id = db->add_run(run);

  db->begin();
  Generator gen(*db, run_id, shape.seed);
  const int64_t loop_end = gen.main_loop(budget.batches);
  for (int w = 0; w < shape.workers; ++w) {
    gen.worker(kFirstWorkerPid + w, budget.worker_bursts_per_worker, budget.faults_per_worker,
               loop_end);
  }
  add_threads(*db, run_id, shape.workers, loop_end + 50 * kMs);
  if (!db->db().exec(fmt::format("UPDATE runs SET end_ns = {} WHERE run_id = {}",
                                    loop_end + 100 * kMs, run_id)).ok()) {
    return 0;
  }
  db->commit();
  return gen.count();
}

}  // namespace ingero::reports::testing
