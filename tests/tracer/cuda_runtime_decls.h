// SPDX-License-Identifier: Apache-2.0
// The few CUDA runtime entry points the tracer's test programs call, declared by
// hand so that only the library is needed (a PyTorch install ships libcudart
// without the full toolkit headers). Signatures as in cuda_runtime_api.h (CUDA 13).
#pragma once

#include <cstddef>

extern "C" {
typedef int cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
struct dim3 {
  unsigned int x, y, z;
};
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1 };

cudaError_t cudaGetDevice(int* device);
cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                             cudaStream_t stream);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
const char* cudaGetErrorString(cudaError_t error);
}
