// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workloads/batch_source.h"

namespace ingero::workloads {

// `direct`: contiguous slices of the host dataset.
std::unique_ptr<BatchSource> make_direct_source(const WorkloadConfig& config, const torch::Tensor& dataset);
// `direct-shuffled` (dataset on the host) and `resident` (dataset already on the device):
// one index_select per batch through the epoch order.
std::unique_ptr<BatchSource> make_gather_source(const WorkloadConfig& config, const torch::Tensor& dataset);

}  // namespace ingero::workloads
