// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"

namespace ingero::workloads {

// `torch-loader`: LibTorch's own torch::data::DataLoader (worker threads, per-sample get + Stack).
std::unique_ptr<BatchSource> make_torch_loader_source(const WorkloadConfig& config, const torch::Tensor& dataset);

}  // namespace ingero::workloads
