#include "workloads/model.h"

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

torch::Tensor epoch_order(const WorkloadConfig& config, int epoch) {
  if (!config.shuffle) return torch::arange(config.samples, torch::kInt64);
  // A generator of our own, so the order does not depend on what else drew numbers.
  auto gen = at::detail::createCPUGenerator(config.seed * 1000003ULL + static_cast<uint64_t>(epoch) + 17);
  return torch::randperm(config.samples, gen, torch::kInt64);
}

BatchRange batch_range(const WorkloadConfig& config, int64_t batch) {
  const int64_t start = batch * config.batch_size;
  return {start, std::min(config.batch_size, config.samples - start)};
}

}  // namespace ingero::workloads
