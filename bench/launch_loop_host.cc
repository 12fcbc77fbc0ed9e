// SPDX-License-Identifier: Apache-2.0
// The launch loop's host side on a machine without a GPU: N steps of K tiny LibTorch ops on the
// CPU (x.add_(1) on one float: the dispatcher's code, as a launch's own host code runs it), each
// step followed by one cudaEventRecord into /usr/local/cuda's libcudart (it fails fast without a GPU,
// but the tracer's probe on it fires). cudaEventRecord is a hot call the tracer handles as it
// handles launches, so the duty cycle's estimate of its count, against the exact N + warm-up,
// can be measured here (bench/estimate_bias.sh). K sets the share of a step its trap takes: a
// trap costs several µs on a virtual machine, about 1 µs on the H200's host, so K = 20 here gives
// the trapped share of the H200's launch loop (about a fifth). Prints
// {"launches": N, "calls": N + warm-up, "seconds": loop time, "user_s": ..., "sys_s": ...}.
// LAUNCH_TIMES=FILE keeps each cudaEventRecord's time (bench/call_times.h).
//
//   ingero_launch_loop_host [N] [K]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <torch/types.h>

#include "bench/call_times.h"
#include "tests/tracer/cuda_runtime_decls.h"

int main(int argc, char** argv) {
  const long steps = argc > 1 ? std::atol(argv[1]) : 200'000;
  const long ops = argc > 2 ? std::atol(argv[2]) : 1;
  constexpr long kWarmUp = 1000;
  if (steps <= 0 || ops <= 0) {
    std::fprintf(stderr, "usage: %s [N > 0] [K > 0]\n", argv[0]);
    return 2;
  }
  int device = 0;
  cudaGetDevice(&device);  // maps and initialises the runtime (fails without a GPU)
  const auto stream = reinterpret_cast<cudaStream_t>(0x5678);
  const auto event = reinterpret_cast<cudaEvent_t>(0x9abc);
  torch::NoGradGuard no_grad;
  auto x = torch::zeros({1});
  CallTimes times(static_cast<size_t>(steps + kWarmUp));
  const auto step = [&] {
    for (long k = 0; k < ops; ++k) x.add_(1);
    times.mark();
    cudaEventRecord(event, stream);
  };
  for (long i = 0; i < kWarmUp; ++i) step();
  rusage before{};
  getrusage(RUSAGE_THREAD, &before);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < steps; ++i) step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  getrusage(RUSAGE_THREAD, &after);
  const auto s = [](const timeval& a, const timeval& b) {
    return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_usec - a.tv_usec) / 1e6;
  };
  std::printf("{\"launches\": %ld, \"calls\": %ld, \"seconds\": %.6f, \"user_s\": %.4f, \"sys_s\": %.4f, \"check\": %.0f}\n",
              steps, steps + kWarmUp, seconds, s(before.ru_utime, after.ru_utime), s(before.ru_stime, after.ru_stime),
              x.item<float>());
  return 0;
}
