// SPDX-License-Identifier: Apache-2.0
// Cost of each kind of CUDA probe: the time per call of a timed call (cudaStreamSynchronize,
// entry + return probes, stored), of a hot call (cudaEventRecord: entry-only at
// --cuda-detail count, entry + return counted in the kernel at latency, stored at full)
// and of an unprobed one (cudaGetDevice), without the tracer and with it attached to this
// process at each detail level. One benchmark per (call, setting), one iteration per call
// (--calls of them in one run). Each run first times the same calls untraced, then attaches
// the tracer: counters untraced_ns and cost_ns (= traced - untraced, per call) come from the
// same run, so a drift of the machine between benchmarks does not enter the cost. Run with
// --benchmark_repetitions=R --benchmark_enable_random_interleaving=true for rounds.
// The traced ones need root and say so (skipped with an error) otherwise; on a machine
// without a GPU the calls fail fast but the probes still fire.
//
//   ingero_probe_cost [--calls N] [--db PATH] [--benchmark_...]
#include "tests/tracer/cuda_runtime_decls.h"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "bench/bench_context.h"
#include "tracer/cuda_probes.h"
#include "tracer/tracer.h"

using Clock = std::chrono::steady_clock;
using ingero::tracer::CudaDetail;

namespace {

struct Options {
  int64_t calls = 50'000;
  std::string db = "/tmp/ingero-probe-cost.db";
};
Options options;
std::string runtime;  // the libcudart this process maps

enum class Call { timed, hot, unprobed };

inline void call_once(Call call) {
  static int device = 0;
  switch (call) {
    case Call::timed:
      cudaStreamSynchronize(nullptr);
      break;
    case Call::hot:
      cudaEventRecord(nullptr, nullptr);
      break;
    case Call::unprobed:
      cudaGetDevice(&device);
      break;
  }
}

double ns_per_call(Call call, int64_t calls) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < calls; ++i) call_once(call);
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(calls);
}

void BM_Probe(benchmark::State& state, Call call, std::optional<CudaDetail> detail) {
  if (runtime.empty()) {
    state.SkipWithError("no libcudart mapped by this process (INGERO_CUDART at build time names the library)");
    return;
  }
  std::unique_ptr<ingero::tracer::Tracer> tracer;
  const double untraced_ns = ns_per_call(call, state.max_iterations);
  if (detail) {
    if (ingero::Status can = ingero::tracer::check_can_trace(); !can) {
      state.SkipWithError(("skipped: " + can.error().message).c_str());
      return;
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(options.db + suffix);
    ingero::tracer::TraceOptions opts;
    opts.library_paths = {runtime};
    opts.cuda_detail = *detail;
    auto started = ingero::tracer::Tracer::start(opts, options.db, 1);
    if (!started) {
      state.SkipWithError(("cannot trace: " + started.error().message).c_str());
      return;
    }
    tracer = std::move(*started);
    if (ingero::Status enrolled = tracer->enroll(getpid()); !enrolled) {
      state.SkipWithError(("cannot enroll this process: " + enrolled.error().message).c_str());
      return;
    }
  }
  // Timed from the first call to the last, without the benchmark loop's start and stop.
  Clock::time_point first, last;
  const int64_t calls = state.max_iterations;
  int64_t n = 0;
  for (auto _ : state) {
    if (n == 0) first = Clock::now();
    call_once(call);
    if (++n == calls) last = Clock::now();
  }
  const double measured_ns = std::chrono::duration<double, std::nano>(last - first).count() / static_cast<double>(n);
  uint64_t counted = 0, lost = 0;
  if (tracer) {
    auto totals = tracer->stop();
    if (!totals) {
      state.SkipWithError(("the tracer failed: " + totals.error().message).c_str());
      return;
    }
    for (const auto& [key, stats] : totals->call_stats) counted += stats.calls;
    lost = totals->events_lost();
  }
  state.SetItemsProcessed(state.iterations());  // items_per_second: calls per second
  state.counters["untraced_ns"] = untraced_ns;
  state.counters["cost_ns"] = measured_ns - untraced_ns;
  if (detail) {
    state.counters["calls_counted_in_kernel"] = static_cast<double>(counted);
    state.counters["events_lost"] = static_cast<double>(lost);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<ingero::bench::Flag> flags = {
      {"--calls", [](const char* v) { options.calls = atoll(v); }},
      {"--db", [](const char* v) { options.db = v; }},
  };
  if (int rc = ingero::bench::start(&argc, argv, flags, [] { return options.calls > 0; }, "[--calls N] [--db PATH]"))
    return rc;
  int device = 0;
  const cudaError_t init = cudaGetDevice(&device);  // loads and initialises the runtime
  for (const std::string& path : ingero::tracer::mapped_call_libraries(getpid()))
    if (ingero::tracer::classify_library(path) == ingero::tracer::CallLibrary::cuda_runtime) runtime = path;
  for (Call call : {Call::timed, Call::hot, Call::unprobed}) ns_per_call(call, options.calls / 10);  // warm-up

  benchmark::AddCustomContext("library", runtime);
  benchmark::AddCustomContext("cudaGetDevice", std::to_string(init));
  benchmark::AddCustomContext("calls_per_run", std::to_string(options.calls));
  const struct {
    Call call;
    const char* name;
  } calls[] = {{Call::timed, "cudaStreamSynchronize(timed)"},
               {Call::hot, "cudaEventRecord(hot)"},
               {Call::unprobed, "cudaGetDevice(unprobed)"}};
  const std::optional<CudaDetail> settings[] = {std::nullopt, CudaDetail::count, CudaDetail::latency,
                                                CudaDetail::full};
  for (const auto& c : calls) {
    for (const auto& detail : settings) {
      const std::string name = std::string("probe_cost/") + c.name + "/" +
                               (detail ? std::string(ingero::tracer::cuda_detail_name(*detail)) : "untraced");
      benchmark::RegisterBenchmark(name.c_str(), BM_Probe, c.call, detail)
          ->Iterations(options.calls)
          ->UseRealTime()
          ->Unit(benchmark::kNanosecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(options.db + suffix);
  return 0;
}
