// SPDX-License-Identifier: Apache-2.0
// A launch-heavy job for the long-trace benchmark (bench/long-trace): plain C++ against
// libcudart (no CUDA compiler or toolkit headers), in a tight loop of steps, as a training
// loop of small kernels: K times cudaLaunchKernel followed by cudaEventRecord (E of them per
// step), then one cudaStreamSynchronize. Without a GPU every call fails fast but the
// tracer's probes fire. At --cuda-detail count/latency the tracer probes launches at the
// driver layer (cuLaunchKernel in libcuda), which a machine without a GPU driver does not
// have; there the runtime's cudaEventRecord, a hot call handled exactly like a launch
// (counted and histogrammed in the kernel, stored only when slow), carries the hot-call
// load. Runs for --seconds (0: until SIGINT/SIGTERM), then prints one JSON line with the
// calls it made and the seconds it ran; with --progress FILE it also rewrites FILE every
// second with the same line, so a script can read the rate while it runs.
//
// --work-us W spins W us on the CPU after each launch and record, as a loop's own code would.
//
//   ingero_launch_heavy [--seconds S] [--launches-per-step K] [--records-per-step E] [--work-us W]
//                       [--progress FILE]
#include "tests/tracer/cuda_runtime_decls.h"
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

volatile std::sig_atomic_t stop_requested = 0;

void on_signal(int) { stop_requested = 1; }

__attribute__((noinline)) void tiny_kernel() {}

// The user work between calls a real loop does (W us on the CPU), so that a probe's trap is a
// share of the loop's time rather than all of it.
void spin(double us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1e3));
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct Counts {
  long long launches = 0, event_records = 0, syncs = 0;
};

void write_line(FILE* out, const Counts& c, double seconds) {
  const long long calls = c.launches + c.event_records + c.syncs;
  fprintf(out,
          "{\"launches\": %lld, \"event_records\": %lld, \"stream_syncs\": %lld, \"calls\": %lld, "
          "\"seconds\": %.3f, \"calls_per_s\": %.0f}\n",
          c.launches, c.event_records, c.syncs, calls, seconds, seconds > 0 ? calls / seconds : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  int per_step = 100, records = 100;
  double work_us = 0;
  const char* progress = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--launches-per-step")) per_step = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--records-per-step")) records = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--progress")) progress = argv[i + 1];
    else if (!strcmp(argv[i], "--work-us")) work_us = atof(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [--seconds S] [--launches-per-step K] [--records-per-step E] [--work-us W] [--progress FILE]\n",
              argv[0]);
      return 2;
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  int device = 0;
  cudaGetDevice(&device);  // loads the runtime (fails without a GPU; the library stays mapped)
  const auto stream = reinterpret_cast<cudaStream_t>(0x5678);
  const auto event = reinterpret_cast<cudaEvent_t>(0x9abc);
  const dim3 grid{1, 1, 1}, block{32, 1, 1};
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_progress = start + std::chrono::seconds(1);
  Counts c;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  while (!stop_requested) {
    for (int i = 0; i < per_step || i < records; ++i) {
      if (i < per_step) cudaLaunchKernel(reinterpret_cast<const void*>(&tiny_kernel), grid, block, nullptr, 0, stream);
      if (i < records) cudaEventRecord(event, stream);
      if (work_us > 0) spin(work_us);
    }
    c.launches += per_step;
    c.event_records += records;
    cudaStreamSynchronize(stream);
    ++c.syncs;
    const auto now = Clock::now();
    if (now >= next_progress) {
      next_progress += std::chrono::seconds(1);
      if (seconds > 0 && elapsed() >= seconds) break;
      if (progress) {
        const std::string tmp = std::string(progress) + ".tmp";
        if (FILE* f = fopen(tmp.c_str(), "w")) {
          write_line(f, c, elapsed());
          fclose(f);
          rename(tmp.c_str(), progress);
        }
      }
    }
  }
  write_line(stdout, c, elapsed());
  return 0;
}
