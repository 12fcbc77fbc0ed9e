// SPDX-License-Identifier: Apache-2.0
#include "workloads/model.h"

#include <torch/torch.h>

#include <algorithm>

namespace ingero::workloads {

torch::Tensor make_dataset(const WorkloadConfig& config) {
  torch::manual_seed(config.seed);
  return torch::randn({config.samples, config.features}, torch::kFloat32);
}

torch::nn::Sequential make_model(const WorkloadConfig& config) {
  torch::manual_seed(config.seed + 1);
  return torch::nn::Sequential(torch::nn::Linear(config.features, config.hidden), torch::nn::ReLU(),
                               torch::nn::Linear(config.hidden, config.hidden), torch::nn::ReLU(),
                               torch::nn::Linear(config.hidden, config.classes));
}

torch::Tensor epoch_order(const WorkloadConfig& config, int epoch, const torch::Device& device) {
  const auto options = torch::TensorOptions().dtype(torch::kInt64).device(device);
  if (!config.shuffle) return torch::arange(config.samples, options);
  if (device.is_cuda()) {
    // Drawn where the data lives, as a device-resident pipeline would; the device's
    // default generator was seeded with the dataset.
    return torch::randperm(config.samples, options);
  }
  // A generator of our own, so the order does not depend on what else drew numbers.
  auto gen = at::detail::createCPUGenerator(config.seed * 1000003ULL + static_cast<uint64_t>(epoch) + 17);
  return torch::randperm(config.samples, gen, options);
}

BatchRange batch_range(const WorkloadConfig& config, int64_t batch) {
  const int64_t start = batch * config.batch_size;
  return {start, std::min(config.batch_size, config.samples - start)};
}

}  // namespace ingero::workloads
