// Cost of one traced CUDA call: times N calls of a probed libcudart function
// (cudaStreamSynchronize(0)) and of an unprobed one (cudaGetDevice) without and
// with the tracer attached to this process. The difference is what one uprobe +
// uretprobe hit costs on this machine (it depends on the function's first
// instructions). Needs root.
//
//   ingero_probe_cost_bench [--calls N] [--db PATH]
#include "tests/tracer/cuda_runtime_decls.h"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

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
  double probed_ns;
  double unprobed_ns;
};

Timings measure(int calls) {
  int device = 0;
  return {ns_per_call(calls, [] { cudaStreamSynchronize(nullptr); }),
          ns_per_call(calls, [&] { cudaGetDevice(&device); })};
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 200'000;
  std::string db = "/tmp/ingero-probe-cost.db";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--db")) db = argv[i + 1];
  }
  int device = 0;
  cudaError_t init = cudaGetDevice(&device);  // loads and initialises the runtime
  printf("cudaGetDevice: %d (%s)\n", init, cudaGetErrorString(init));
  std::string runtime;
  for (const std::string& path : ingero::tracer::mapped_call_libraries(getpid()))
    if (ingero::tracer::classify_library(path) == ingero::tracer::CallLibrary::cuda_runtime) runtime = path;
  if (runtime.empty()) {
    fprintf(stderr, "no libcudart mapped by this process\n");
    return 1;
  }
  printf("library: %s\n", runtime.c_str());

  measure(calls / 10);  // warm-up
  Timings untraced = measure(calls);

  std::filesystem::remove(db);
  ingero::tracer::TraceOptions opts;
  opts.library_paths = {runtime};
  auto tracer = ingero::tracer::Tracer::start(opts, db, 1);
  if (!tracer) {
    fprintf(stderr, "%s (%s)\n", tracer.error().message.c_str(), tracer.error().hint.c_str());
    return 1;
  }
  if (auto s = (*tracer)->enroll(getpid()); !s) {
    fprintf(stderr, "%s\n", s.error().message.c_str());
    return 1;
  }
  Timings traced = measure(calls);
  auto summary = (*tracer)->stop();
  if (!summary) {
    fprintf(stderr, "%s\n", summary.error().message.c_str());
    return 1;
  }

  printf("calls per measurement: %d\n", calls);
  printf("cudaStreamSynchronize(0) (probed):   untraced %8.1f ns  traced %8.1f ns  cost per hit %8.1f ns\n",
         untraced.probed_ns, traced.probed_ns, traced.probed_ns - untraced.probed_ns);
  printf("cudaGetDevice            (unprobed): untraced %8.1f ns  traced %8.1f ns  difference   %8.1f ns\n",
         untraced.unprobed_ns, traced.unprobed_ns, traced.unprobed_ns - untraced.unprobed_ns);
  printf("events written %llu, dropped %llu\n", (unsigned long long)summary->events_written,
         (unsigned long long)summary->events_lost());
  return 0;
}
