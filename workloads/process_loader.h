// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"

namespace ingero::workloads {

// `loader` (per_sample = true) and `loader-batched` (per_sample = false).
// pin: copy batches into page-locked memory (only meaningful with a CUDA device).
std::unique_ptr<BatchSource> make_process_loader(const WorkloadConfig& config, const torch::Tensor& dataset,
                                                 bool per_sample, bool pin);

// Fetch + collate of one batch into `out` (count x features): per sample and stacked,
// as automatic batching does, or one gather.
void collate_into(torch::Tensor& out, const torch::Tensor& dataset, const torch::Tensor& indices,
                  bool per_sample);

}  // namespace ingero::workloads
