// Expands the command line into the runs of a sweep: every requested mode, and for
// the loader modes every num_workers x prefetch_factor combination.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "workloads/config.h"

namespace ingero::harness {

struct SweepRequest {
  std::vector<std::string> modes;           // names, or "all"
  std::vector<int> num_workers = {0};
  std::vector<int> prefetch_factors;        // empty: PyTorch's default
  workloads::WorkloadConfig base;           // every other setting
  bool samples_given = false;               // --samples / --batch-size on the command line
  bool batch_size_given = false;
};

// The CPU-only default scale: the full case (7M x 100, batch 1M) is GPU-sized.
inline constexpr int64_t kCpuDefaultSamples = 65'536;
inline constexpr int64_t kCpuDefaultBatchSize = 8'192;

struct SweepPlan {
  std::vector<workloads::WorkloadConfig> runs;
  std::string scaling_note;  // non-empty when the default size was scaled down
};

// device_is_cuda: where the runs will execute ("auto" already resolved by the caller).
Result<SweepPlan> plan_sweep(const SweepRequest& request, bool device_is_cuda);

}  // namespace ingero::harness
