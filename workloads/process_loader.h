// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"
#include "workloads/sample_store.h"

namespace ingero::workloads {

// `loader` (per_sample = true) and `loader-batched` (per_sample = false).
// pin: copy batches into page-locked memory (only meaningful with a CUDA device).
// Workers read through `store` after the fork (collate_into in sample_store.h).
std::unique_ptr<BatchSource> make_process_loader(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store,
                                                 bool per_sample, bool pin);

}  // namespace ingero::workloads
