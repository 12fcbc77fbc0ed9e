// SPDX-License-Identifier: Apache-2.0
#include "workloads/torch_loader_source.h"

#include <torch/torch.h>

#include <atomic>

namespace ingero::workloads {

namespace {

// dataset[i] -> (row, index), so batches carry the ids of their samples. The epoch a sample is
// read for is shared with the source (worker threads read it; a jpeg sample's flip depends on it).
class RowDataset : public torch::data::datasets::Dataset<RowDataset> {
 public:
  RowDataset(std::shared_ptr<const SampleStore> store, std::shared_ptr<std::atomic<int>> epoch)
      : store_(std::move(store)), memory_(store_->tensor()), epoch_(std::move(epoch)) {}
  torch::data::Example<> get(size_t index) override {
    const auto i = static_cast<int64_t>(index);
    return {memory_.defined() ? memory_[i] : read_row(*store_, i, epoch_->load()), torch::tensor(i)};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(store_->samples()); }

 private:
  std::shared_ptr<const SampleStore> store_;
  torch::Tensor memory_;
  std::shared_ptr<std::atomic<int>> epoch_;
};

template <class Sampler>
class TorchLoaderSource final : public BatchSource {
 public:
  TorchLoaderSource(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store)
      : epoch_(std::make_shared<std::atomic<int>>(0)),
        loader_(torch::data::make_data_loader(
            RowDataset(std::move(store), epoch_).map(torch::data::transforms::Stack<>()),
            Sampler(static_cast<size_t>(config.samples)),
            torch::data::DataLoaderOptions()
                .batch_size(static_cast<size_t>(config.batch_size))
                .workers(static_cast<size_t>(config.num_workers))
                // Without workers LibTorch must keep max_jobs at 0: jobs queued then are never run.
                .max_jobs(static_cast<size_t>(config.effective_prefetch_factor()) *
                          static_cast<size_t>(config.num_workers))
                .drop_last(config.drop_last)
                .enforce_ordering(true))) {}

  void begin_epoch(int epoch) override {
    it_.reset();
    epoch_->store(epoch);
    it_.emplace(loader_->begin());
  }
  std::optional<Batch> next() override {
    if (stop_requested()) throw Interrupted();
    if (*it_ == loader_->end()) return std::nullopt;
    auto example = **it_;
    ++*it_;
    return Batch{example.data, example.target};
  }
  void end_epoch() override { it_.reset(); }

 private:
  using Loader = decltype(torch::data::make_data_loader(
      std::declval<RowDataset>().map(torch::data::transforms::Stack<>()), std::declval<Sampler>(),
      torch::data::DataLoaderOptions()));
  using Iterator = decltype(std::declval<Loader&>()->begin());
  std::shared_ptr<std::atomic<int>> epoch_;
  Loader loader_;
  std::optional<Iterator> it_;
};

}  // namespace

std::unique_ptr<BatchSource> make_torch_loader_source(const WorkloadConfig& config,
                                                      std::shared_ptr<const SampleStore> store) {
  if (config.shuffle) {
    return std::make_unique<TorchLoaderSource<torch::data::samplers::RandomSampler>>(config, std::move(store));
  }
  return std::make_unique<TorchLoaderSource<torch::data::samplers::SequentialSampler>>(config, std::move(store));
}

}  // namespace ingero::workloads
