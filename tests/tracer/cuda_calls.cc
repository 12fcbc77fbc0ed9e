// SPDX-License-Identifier: Apache-2.0
// Calls into the real libcudart a known number of times with known arguments, so
// the tracer's CUDA probes can be checked exactly. Without a GPU every call fails,
// but the probes fire all the same.
//
//   cuda_calls [--delay-ms N]   N: wait before the first call (lets a tracer discover the library)
//   cuda_calls --records N --every-us U [--delay-ms D]
//                               N cudaEventRecord calls, one every U us of CPU work (a hot or a slow
//                               call, by its rate), then one cudaStreamSynchronize
#include "tests/tracer/cuda_runtime_decls.h"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/tracer/cuda_calls.h"

namespace {

// N event records, each after `every_us` of work on the CPU (the rest of a loop's step).
int records(long n, double every_us) {
  using Clock = std::chrono::steady_clock;
  const auto step = std::chrono::nanoseconds(static_cast<long>(every_us * 1e3));
  for (long i = 0; i < n; ++i) {
    const auto until = Clock::now() + step;
    while (Clock::now() < until) {
    }
    cudaEventRecord(reinterpret_cast<cudaEvent_t>(ingero::tracer::testing::kEvent), nullptr);
  }
  cudaStreamSynchronize(nullptr);
  printf("records: %ld\n", n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  long n = -1;
  double every_us = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--delay-ms") == 0) usleep(atoi(argv[i + 1]) * 1000);
    else if (strcmp(argv[i], "--records") == 0) n = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--every-us") == 0) every_us = atof(argv[i + 1]);
  }
  if (n >= 0) return records(n, every_us);
  using namespace ingero::tracer::testing;
  void* device = nullptr;
  static char host[kMemcpyBytes];
  for (int i = 0; i < kMallocCalls; ++i) cudaMalloc(&device, kMallocBytes);
  for (int i = 0; i < kMemcpyAsyncCalls; ++i)
    cudaMemcpyAsync(device, host, kMemcpyBytes, cudaMemcpyHostToDevice, reinterpret_cast<cudaStream_t>(kStream));
  for (int i = 0; i < kStreamSyncCalls; ++i) cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(kStream));
  dim3 grid{1, 2, 3}, block{4, 5, 6};
  for (int i = 0; i < kLaunchCalls; ++i)
    cudaLaunchKernel(reinterpret_cast<const void*>(&main), grid, block, nullptr, 64,
                     reinterpret_cast<cudaStream_t>(kLaunchStream));
  for (int i = 0; i < kEventRecordCalls; ++i)
    cudaEventRecord(reinterpret_cast<cudaEvent_t>(kEvent), reinterpret_cast<cudaStream_t>(kStream));
  for (int i = 0; i < kDeviceSyncCalls; ++i) cudaDeviceSynchronize();
  cudaError_t last = cudaFree(device);
  printf("last cudaFree: %d (%s)\n", last, cudaGetErrorString(last));
  return 0;
}
