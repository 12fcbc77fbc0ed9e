// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"
#include "workloads/sample_store.h"

namespace ingero::workloads {

// `torch-loader`: LibTorch's own torch::data::DataLoader (worker threads, per-sample get + Stack).
std::unique_ptr<BatchSource> make_torch_loader_source(const WorkloadConfig& config,
                                                      std::shared_ptr<const SampleStore> store);

}  // namespace ingero::workloads
