// SPDX-License-Identifier: Apache-2.0
// Where every mode reads its samples from: the in-memory tensor, or an on-disk dataset (one record
// file per sample, or a few shards read by offset with pread, safe in forked workers). One interface,
// so that no mode has its own copy of the reading, checking and decoding.
#pragma once

#include <torch/types.h>

#include <functional>
#include <memory>
#include <optional>

#include "workloads/config.h"
#include "workloads/dataset_files.h"
#include "workloads/page_cache.h"

namespace ingero::workloads {

// A stored sample failed its checks (or could not be read); the message names the file and sample.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SampleStore {
 public:
  virtual ~SampleStore() = default;
  virtual int64_t samples() const = 0;
  virtual int64_t features() const = 0;
  // Sample `index` as the model sees it (jpeg: decoded and transformed for `epoch`) into row
  // (features() floats). Throws DatasetError.
  virtual void read_into(float* row, int64_t index, int epoch) const = 0;
  // Samples [start, start + count) into out (count x features floats): shards read each shard's
  // part of the range with one pread; files are read in order.
  virtual void read_range_into(float* out, int64_t start, int64_t count, int epoch) const;
  // The in-memory dataset; undefined for a store on disk.
  virtual torch::Tensor tensor() const { return {}; }
  // The cache entry of a store on disk; nullptr in memory.
  virtual const dataset::Entry* entry() const { return nullptr; }
};

// A fresh count x features tensor of samples [start, start + count).
torch::Tensor read_range(const SampleStore& store, int64_t start, int64_t count, int epoch);
torch::Tensor read_row(const SampleStore& store, int64_t index, int epoch);

// Fetch + collate of one batch into `out` (count x features): per sample and stacked, as
// automatic batching does, or straight into the batch's rows (one gather in memory).
void collate_into(torch::Tensor& out, const SampleStore& store, const torch::Tensor& indices, bool per_sample,
                  int epoch);

// The payload of sample i on disk: the dataset tensor's row (raw) or a generated image (jpeg).
dataset::PayloadOf payloads_for(const WorkloadConfig& config);

// The dataset's cache entry: opened (sizes checked) or written now. stop() aborts writing.
Result<dataset::Entry> prepare_dataset(const WorkloadConfig& config, const std::function<bool()>& stop);

std::shared_ptr<SampleStore> memory_store(torch::Tensor data);
// The store of config.storage: memory makes the seeded tensor; files and shards open `entry`.
std::shared_ptr<SampleStore> open_store(const WorkloadConfig& config, const dataset::Entry* entry);

// What a run's record says about its on-disk dataset ("storage", docs/formats.md).
struct StorageReport {
  dataset::Entry entry;
  page_cache::BlockDevice device;
  struct Epoch {
    int epoch;
    page_cache::Residency before;
  };
  std::vector<Epoch> epochs;  // measured epochs: the dataset's pages resident just before each
  nlohmann::json to_json(const WorkloadConfig& config) const;
};

// Before a measured epoch: cold evicts the dataset's pages, warm reads them all once (before the
// first); either way the residency then is counted and returned.
Result<page_cache::Residency> settle_page_cache(const WorkloadConfig& config, const dataset::Entry& entry,
                                                bool first_measured);

// --prepare-dataset: writes (or checks) the entry and measures the device once; prints nothing,
// writes the preparation report (written_now, write_s, device) to report_path.
int prepare_dataset_main(const std::string& config_json, const std::string& report_path);

}  // namespace ingero::workloads
