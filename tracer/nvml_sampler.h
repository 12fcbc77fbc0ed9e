// SPDX-License-Identifier: Apache-2.0
// The GPU's busy share, sampled out of process through NVML. libnvidia-ml.so.1 is loaded at
// run time (the CI machine has no driver, the GPU machine no NVML header), so a missing
// library, driver or GPU is not an error: the sampler records nothing and says why.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/trace_contract.h"

namespace ingero::tracer {

struct GpuInfo {
  unsigned index = 0;  // NVML's device index
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
};

// Metric names of GpuSample::metric.
inline constexpr const char* kGpuUtilMetric = contract::gpu_metric::kGpuUtil.data();    // % of time a kernel ran
inline constexpr const char* kMemUtilMetric = contract::gpu_metric::kMemUtil.data();    // % of time memory was busy
inline constexpr const char* kSmActiveMetric = contract::gpu_metric::kSmActive.data();  // GPM: % of SMs busy

// ts_ns is CLOCK_MONOTONIC. For gpu_util and mem_util it is the driver's own timestamp, the end of
// the window the percentage covers (the driver's sampling period: 200 ms on an H200, driver 580).
// For sm_active it is when the second GPM sample of the period was read; the driver refreshes the
// GPM counters about every 100 ms, so the value can trail that time by up to as much.
struct GpuSample {
  unsigned gpu = 0;  // GpuInfo::index
  uint64_t ts_ns = 0;
  std::string metric;  // one of the k*Metric names above
  double value = 0;
};

struct GpuSamples {
  std::vector<GpuInfo> gpus;
  std::vector<GpuSample> samples;  // ordered by ts_ns
  std::string source;              // "nvml" when at least one GPU was sampled, else ""
  std::vector<std::string> notes;  // why something is missing or incomplete, each once
};

struct NvmlSamplerOptions {
  std::string library = "libnvidia-ml.so.1";  // INGERO_NVML_LIBRARY, when set, replaces it
  std::chrono::milliseconds poll_interval{500};  // how often the driver's sample buffers are read
  std::chrono::milliseconds gpm_period{1000};    // one sm_active sample per period (at least 100 ms)
  std::size_t max_samples = 1'000'000;           // beyond it samples are counted in a note, not kept
};

// Samples gpu_util and mem_util from the driver's own sample buffers (nvmlDeviceGetSamples, at
// the driver's native rate) and, where GPM is supported and permitted, sm_active from pairs of
// GPM samples, on one background thread.
class NvmlSampler {
 public:
  // Never fails: without NVML (or without a GPU) it returns a sampler that records nothing and
  // whose stop() explains why in notes.
  static std::unique_ptr<NvmlSampler> start(const NvmlSamplerOptions& options = {}) noexcept;

  // Stops the sampling thread, drains what the driver still holds since the last poll, unloads
  // the library (nvmlShutdown + dlclose) and hands back everything. Call once; a second call
  // returns nothing but a note.
  GpuSamples stop() noexcept;
  // Each sampled GPU with its last gpu_util sample as a 0-1 ratio (a live view; none sampled yet:
  // left out). Safe to call from any thread while sampling.
  std::vector<std::pair<GpuInfo, double>> latest_busy() const;

  ~NvmlSampler();  // stops and unloads if stop() was not called; never throws

  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

 private:
  struct Impl;
  explicit NvmlSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingero::tracer
