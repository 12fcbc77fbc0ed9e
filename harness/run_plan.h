// SPDX-License-Identifier: Apache-2.0
// Expands a command line into the runs to make: every requested mode, and for the loader
// modes every num_workers x prefetch_factor x pin_memory x persistent_workers point; and
// the checks that refuse, before anything runs, a plan this machine cannot carry.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "workloads/config.h"

namespace ingero::harness {

struct GridRequest {
  std::vector<std::string> modes;               // names, or "all"
  std::vector<int> num_workers = {0};
  std::vector<int> prefetch_factors;            // empty: PyTorch's default
  std::vector<bool> pin_memory;                 // empty: the base's setting
  std::vector<bool> persistent_workers;         // empty: the base's setting
  workloads::WorkloadConfig base;               // every other setting
  bool samples_given = false;                   // --samples / --batch-size on the command line
  bool batch_size_given = false;
};

// The CPU-only default scale: the full case (7M x 100, batch 1M) is GPU-sized.
inline constexpr int64_t kCpuDefaultSamples = 65'536;
inline constexpr int64_t kCpuDefaultBatchSize = 8'192;
// A dataset on disk (--storage files|shards) without --samples: 100,000 samples (7,000,000 files
// would be absurd), batch 1,024 unless --batch-size is given.
inline constexpr int64_t kStorageDefaultSamples = 100'000;
inline constexpr int64_t kStorageDefaultBatchSize = 1'024;

struct RunPlan {
  std::vector<workloads::WorkloadConfig> runs;  // in order, labels unique
  std::string scaling_note;                     // non-empty when the default size was scaled down
  std::vector<std::string> warnings;            // e.g. more workers than cores
};

// device_is_cuda: where the runs will execute ("auto" already resolved by the caller).
Result<RunPlan> plan_grid(const GridRequest& request, bool device_is_cuda);

// What the machine can carry, read once.
struct MachineLimits {
  int usable_cores = 1;          // sched_getaffinity
  int64_t available_bytes = 0;   // MemAvailable
  int64_t process_headroom = 0;  // RLIMIT_NPROC minus the processes this user runs now
};
MachineLimits read_machine_limits();

// Refuses (bad input, before any fork) a run that would need more memory or processes than
// the machine has: the dataset, and num_workers x (prefetch_factor batches + a process's
// own footprint); warns, as PyTorch does, of more workers than usable cores.
Status check_resources(const workloads::WorkloadConfig& config, const MachineLimits& limits,
                       std::vector<std::string>* warnings);

// "--num-workers 0,2,auto": integers >= 0; "auto" is 0, 1, 2, 4, ... up to the usable cores.
Result<std::vector<int>> parse_count_list(const std::string& flag, const std::string& text, bool allow_auto,
                                          int usable_cores, int minimum);
// "--pin-memory on,off".
Result<std::vector<bool>> parse_switch_list(const std::string& flag, const std::string& text);

}  // namespace ingero::harness
