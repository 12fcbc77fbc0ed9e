// SPDX-License-Identifier: Apache-2.0
// One workload run's configuration: what the user asked for, validated with
// PyTorch's DataLoader argument rules. Serialised as the "config" object of the
// result record (docs/formats.md) and handed to the workload process as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ingero::workloads {

// In the order of common/trace_contract.h's kModes, which names them (config.cc checks it at compile time).
enum class Mode {
  direct,           // contiguous slice -> device (the fast path)
  direct_shuffled,  // randperm index, one gather per batch -> device
  resident,         // dataset on the device once, batches gathered there
  loader,           // multi-process loader: per-sample fetch + collate
  loader_batched,   // same workers, one gather per batch
  torch_loader,     // LibTorch's torch::data::DataLoader (worker threads)
  python,           // the real PyTorch DataLoader, run by python3
  python_direct,    // the direct path, run by python3 (the reference for direct)
};

const std::vector<Mode>& all_modes();
std::string mode_name(Mode mode);
Result<Mode> parse_mode(const std::string& name);
// Modes whose speed depends on num_workers / prefetch_factor.
bool mode_uses_workers(Mode mode);
bool mode_runs_in_python(Mode mode);

// A bounded run's warm-up epoch holds at least this many batches: the compute path settles over
// the first few (on the CPU a model's first batches took 5-8x a settled one until the fourth; a
// measured epoch of two batches after a warm-up of two showed it).
constexpr int64_t kSettledWarmupBatches = 4;

// Where the dataset lives (issue 22). memory: the seeded tensor itself; files: one record file per
// sample; shards: a few large files of records, read by offset. Both on-disk kinds are written once
// into a cache folder (workloads/dataset_files.h) and reused.
enum class Storage { memory, files, shards };
// What a stored sample is: the tensor's float32 row (raw), or a JPEG image decoded and
// transformed per sample (jpeg).
enum class SampleFormat { raw, jpeg };
// A measured epoch starts with the dataset's pages evicted (cold) or all resident (warm).
enum class PageCache { warm, cold };

std::string storage_name(Storage storage);
std::string format_name(SampleFormat format);
std::string page_cache_name(PageCache page_cache);
Result<Storage> parse_storage(const std::string& name);
Result<SampleFormat> parse_format(const std::string& name);
Result<PageCache> parse_page_cache(const std::string& name);

// $XDG_CACHE_HOME/ingero-bench/datasets, else $HOME/.cache/ingero-bench/datasets.
std::string default_dataset_cache();

inline constexpr int64_t kDefaultImageSize = 32;
inline constexpr int64_t kMaxImageSize = 1024;

struct WorkloadConfig {
  Mode mode = Mode::direct;
  std::string device = "auto";  // auto | cpu | cuda; resolved to cpu|cuda in the workload process
  int64_t samples = 7'000'000;
  int64_t features = 100;
  int64_t hidden = 512;
  int64_t classes = 10;
  int64_t batch_size = 1'048'576;
  bool drop_last = false;
  int num_workers = 0;
  std::optional<int> prefetch_factor;  // PyTorch: None without workers, 2 with
  bool pin_memory = false;
  bool persistent_workers = false;
  bool shuffle = true;
  int epochs = 3;
  int warmup_epochs = 1;
  int repeat = 1;
  bool train = false;
  int cpus = 0;  // 0: not pinned
  int ranks = 1;  // torch.distributed ranks on this node (python mode), each with its own DataLoader
  uint64_t seed = 0;
  double epoch_deadline_s = 0;  // > 0: stop the run when an epoch takes longer (a sweep's early stop)
  int64_t max_batches = 0;      // > 0: an epoch is its first N batches (of the whole shuffled order)
  int64_t warmup_batches = 0;   // > 0 with max_batches: a warm-up epoch's first N batches instead
                                // (default: max_batches, at least kSettledWarmupBatches)
  Storage storage = Storage::memory;
  SampleFormat format = SampleFormat::raw;
  int64_t image_size = 0;       // jpeg: S (S x S x 3 images; features = 3 S^2); 0 with raw
  PageCache page_cache = PageCache::warm;
  std::string dataset_cache;    // the cache folder of on-disk datasets; empty: default_dataset_cache()

  int effective_prefetch_factor() const { return prefetch_factor.value_or(2); }
  int64_t batches_per_epoch() const;           // of a measured epoch
  int64_t batches_in_epoch(int epoch) const;   // of epoch `epoch` of the run (warm-up epochs come first)
  int64_t warmup_cut() const;                  // with max_batches: a warm-up epoch's first batches
  std::string label() const;  // "loader w4 pf2 pin"
  bool on_disk() const { return storage != Storage::memory; }
  std::string dataset_cache_dir() const { return dataset_cache.empty() ? default_dataset_cache() : dataset_cache; }
};

// PyTorch's rules plus our own bounds. Every error is bad input naming the flag.
Status validate(const WorkloadConfig& config);
// The on-disk dataset flags alone (part of validate): --storage, --format, --image-size, --page-cache.
Status validate_storage(const WorkloadConfig& config);

nlohmann::json to_json(const WorkloadConfig& config);
Result<WorkloadConfig> config_from_json(const nlohmann::json& j);

}  // namespace ingero::workloads
