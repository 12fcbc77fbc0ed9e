// SPDX-License-Identifier: Apache-2.0
// Calls into the real libcudart a known number of times with known arguments, so
// the tracer's CUDA probes can be checked exactly. Without a GPU every call fails,
// but the probes fire all the same.
//
//   cuda_calls [--delay-ms N]   N: wait before the first call (lets a tracer discover the library)
#include "tests/tracer/cuda_runtime_decls.h"
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/tracer/cuda_calls.h"

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--delay-ms") == 0) usleep(atoi(argv[2]) * 1000);
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
