// SPDX-License-Identifier: Apache-2.0
// A launch-bound loop through LibTorch: N tiny kernels (x.add_(1) on one float on the
// GPU), the rate of a real training loop's small kernels. Prints
// {"launches": N, "seconds": loop time}; the tracer's overhead is the ratio of the
// traced to the untraced loop time (scripts/gpu-benchmarks runs them interleaved).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <torch/torch.h>

int main(int argc, char** argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 300'000;
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "launch_loop needs a CUDA device\n");
    return 2;
  }
  torch::NoGradGuard no_grad;
  auto x = torch::zeros({1}, torch::kCUDA);
  for (int i = 0; i < 1000; ++i) x.add_(1);
  (void)x.item<float>();  // waits for the warm-up
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) x.add_(1);
  (void)x.item<float>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"launches\": %ld, \"seconds\": %.6f}\n", launches, seconds);
  return 0;
}
