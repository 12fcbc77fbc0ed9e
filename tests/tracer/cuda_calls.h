// SPDX-License-Identifier: Apache-2.0
// What tests/tracer/cuda_calls does, for the test that traces it.
#pragma once

#include <cstdint>

namespace ingero::tracer::testing {
inline constexpr int kMallocCalls = 3;
inline constexpr uint64_t kMallocBytes = 1u << 20;
inline constexpr int kMemcpyAsyncCalls = 5;
inline constexpr uint64_t kMemcpyBytes = 12345;
inline constexpr int kMemcpyKindHostToDevice = 1;  // cudaMemcpyHostToDevice
inline constexpr uint64_t kStream = 0x1234;
inline constexpr int kStreamSyncCalls = 7;
inline constexpr int kLaunchCalls = 2;
inline constexpr uint64_t kLaunchStream = 0x5678;
inline constexpr int kEventRecordCalls = 4;  // a hot call probed at every detail level
inline constexpr uint64_t kEvent = 0x9abc;
inline constexpr int kDeviceSyncCalls = 1;
inline constexpr int kFreeCalls = 1;
}  // namespace ingero::tracer::testing
