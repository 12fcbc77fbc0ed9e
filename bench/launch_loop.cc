// SPDX-License-Identifier: Apache-2.0
// A launch-bound loop through LibTorch: N tiny kernels (x.add_(1) on one float on the
// GPU), the rate of a real training loop's small kernels. Prints
// {"launches": N, "seconds": loop time, ...} with the loop thread's CPU time, context switches and
// page faults over the loop (what a tracer's presence could change besides the traps); the tracer's
// overhead is the ratio of the traced to the untraced loop time (scripts/gpu-benchmarks runs them
// interleaved). LAUNCH_TIMES=FILE keeps each launch's time (bench/call_times.h).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <torch/cuda.h>
#include <torch/types.h>

#include "bench/call_times.h"

int main(int argc, char** argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 300'000;
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "launch_loop needs a CUDA device\n");
    return 2;
  }
  torch::NoGradGuard no_grad;
  CallTimes times(static_cast<size_t>(launches) + 1000);
  auto x = torch::zeros({1}, torch::kCUDA);
  const auto launch = [&] {
    times.mark();
    x.add_(1);
  };
  for (int i = 0; i < 1000; ++i) launch();
  (void)x.item<float>();  // waits for the warm-up
  rusage before{};
  getrusage(RUSAGE_THREAD, &before);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) launch();
  (void)x.item<float>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  getrusage(RUSAGE_THREAD, &after);
  const auto s = [](const timeval& a, const timeval& b) {
    return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_usec - a.tv_usec) / 1e6;
  };
  std::printf(
      "{\"launches\": %ld, \"seconds\": %.6f, \"user_s\": %.4f, \"sys_s\": %.4f, \"ctx_voluntary\": %ld, "
      "\"ctx_involuntary\": %ld, \"minor_faults\": %ld}\n",
      launches, seconds, s(before.ru_utime, after.ru_utime), s(before.ru_stime, after.ru_stime),
      after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw, after.ru_minflt - before.ru_minflt);
  return 0;
}
