// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"
#include "workloads/sample_store.h"

namespace ingero::workloads {

// `direct`: contiguous slices of the host dataset (in memory: views; on disk: one read per batch
// from shards, the batch's files in order).
std::unique_ptr<BatchSource> make_direct_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store);
// `direct-shuffled`: one gather per batch through the epoch order (on disk: the batch's samples
// read one by one in the main thread).
std::unique_ptr<BatchSource> make_gather_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store);
// `resident`: the dataset (in memory, already on the device): one index_select per batch there.
std::unique_ptr<BatchSource> make_resident_source(const WorkloadConfig& config, const torch::Tensor& on_device);

}  // namespace ingero::workloads
