// SPDX-License-Identifier: Apache-2.0
// The dataset and model of pytorch/pytorch#154318: an in-memory float32 tensor
// N x F and Linear(F,H)-ReLU-Linear(H,H)-ReLU-Linear(H,C).
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/types.h>

#include "workloads/config.h"

namespace ingero::workloads {

// Seeded: the same config gives the same tensor on every machine and in Python
// (torch.manual_seed(seed); torch.randn(N, F)).
torch::Tensor make_dataset(const WorkloadConfig& config);

torch::nn::Sequential make_model(const WorkloadConfig& config);

// The order samples are visited in one epoch: a permutation seeded by (seed, epoch)
// when shuffling, 0..N-1 otherwise; int64, made on `device`.
torch::Tensor epoch_order(const WorkloadConfig& config, int epoch, const torch::Device& device = torch::kCPU);

// [start, start+count) of batch b within an epoch order, honouring drop_last.
struct BatchRange {
  int64_t start;
  int64_t count;
};
BatchRange batch_range(const WorkloadConfig& config, int64_t batch);

}  // namespace ingero::workloads
