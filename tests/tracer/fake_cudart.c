// SPDX-License-Identifier: Apache-2.0
// A stand-in CUDA runtime for the tests of call stacks: given to the tracer as the library to probe
// (TraceOptions.library_paths, --cudart), its cudaDeviceSynchronize takes a known time, so that
// every call is a slow call the tracer stores, on a machine with or without a GPU.
#include <time.h>

int cudaDeviceSynchronize(void) {
  struct timespec wait = {0, 5 * 1000 * 1000};  // 5 ms
  nanosleep(&wait, 0);
  return 0;
}
