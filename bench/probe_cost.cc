// SPDX-License-Identifier: Apache-2.0
// Cost of each kind of CUDA probe: times N calls of a timed call (cudaStreamSynchronize,
// entry + return probes, stored), of a hot call (cudaEventRecord: entry-only at
// --cuda-detail count, entry + return counted in the kernel at latency, stored at full)
// and of an unprobed one (cudaGetDevice), without the tracer and with it attached to this
// process at each detail level, interleaved. Needs root; on a machine without a GPU the
// calls fail fast but the probes still fire.
//
//   ingero_probe_cost [--calls N] [--rounds R] [--db PATH]     (prints one JSON document)
#include "tests/tracer/cuda_runtime_decls.h"
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/cuda_probes.h"
#include "tracer/tracer.h"

using Clock = std::chrono::steady_clock;

namespace {

template <class Fn>
double ns_per_call(int calls, Fn&& fn) {
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
}

struct Timings {
  double timed_ns, hot_ns, unprobed_ns;
};

Timings measure(int calls) {
  int device = 0;
  return {ns_per_call(calls, [] { cudaStreamSynchronize(nullptr); }),
          ns_per_call(calls, [] { cudaEventRecord(nullptr, nullptr); }),
          ns_per_call(calls, [&] { cudaGetDevice(&device); })};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 200'000, rounds = 5;
  std::string db = "/tmp/ingero-probe-cost.db";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--db")) db = argv[i + 1];
  }
  int device = 0;
  const cudaError_t init = cudaGetDevice(&device);  // loads and initialises the runtime
  std::string runtime;
  for (const std::string& path : ingero::tracer::mapped_call_libraries(getpid()))
    if (ingero::tracer::classify_library(path) == ingero::tracer::CallLibrary::cuda_runtime) runtime = path;
  if (runtime.empty()) {
    fprintf(stderr, "no libcudart mapped by this process\n");
    return 1;
  }
  measure(calls / 10);  // warm-up
  using ingero::tracer::CudaDetail;
  const std::vector<CudaDetail> details = {CudaDetail::count, CudaDetail::latency, CudaDetail::full};
  std::map<std::string, std::vector<Timings>> by_setting;
  for (int round = 0; round < rounds; ++round) {
    by_setting["untraced"].push_back(measure(calls));
    for (CudaDetail detail : details) {
      std::filesystem::remove(db);
      ingero::tracer::TraceOptions opts;
      opts.library_paths = {runtime};
      opts.cuda_detail = detail;
      auto tracer = ingero::tracer::Tracer::start(opts, db, 1);
      if (!tracer || !(*tracer)->enroll(getpid())) {
        fprintf(stderr, "cannot trace: %s\n", tracer ? "enroll failed" : tracer.error().message.c_str());
        return 1;
      }
      by_setting[std::string(ingero::tracer::cuda_detail_name(detail))].push_back(measure(calls));
      if (!(*tracer)->stop()) return 1;
    }
  }
  nlohmann::json out = {{"library", runtime},
                        {"cudaGetDevice", init},
                        {"calls_per_measurement", calls},
                        {"rounds", rounds},
                        {"unit", "ns per call, median over rounds"}};
  const auto& base = by_setting["untraced"];
  auto med = [](const std::vector<Timings>& t, double Timings::*field) {
    std::vector<double> v;
    for (const auto& x : t) v.push_back(x.*field);
    return median(v);
  };
  for (const auto& [setting, timings] : by_setting) {
    out["settings"][setting] = {{"cudaStreamSynchronize (timed call)", med(timings, &Timings::timed_ns)},
                                {"cudaEventRecord (hot call)", med(timings, &Timings::hot_ns)},
                                {"cudaGetDevice (unprobed)", med(timings, &Timings::unprobed_ns)}};
    if (setting != "untraced")
      out["cost_per_call_ns"][setting] = {
          {"timed call", med(timings, &Timings::timed_ns) - med(base, &Timings::timed_ns)},
          {"hot call", med(timings, &Timings::hot_ns) - med(base, &Timings::hot_ns)}};
  }
  printf("%s\n", out.dump(2).c_str());
  return 0;
}
