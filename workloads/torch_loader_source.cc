// SPDX-License-Identifier: Apache-2.0
#include "workloads/torch_loader_source.h"

namespace ingero::workloads {

namespace {

// dataset[i] -> (row, index), so batches carry the ids of their samples.
class RowDataset : public torch::data::datasets::Dataset<RowDataset> {
 public:
  explicit RowDataset(torch::Tensor data) : data_(std::move(data)) {}
  torch::data::Example<> get(size_t index) override {
    return {data_[static_cast<int64_t>(index)], torch::tensor(static_cast<int64_t>(index))};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(data_.size(0)); }

 private:
  torch::Tensor data_;
};

template <class Sampler>
class TorchLoaderSource final : public BatchSource {
 public:
  TorchLoaderSource(const WorkloadConfig& config, torch::Tensor dataset)
      : loader_(torch::data::make_data_loader(
            RowDataset(std::move(dataset)).map(torch::data::transforms::Stack<>()),
            Sampler(static_cast<size_t>(config.samples)),
            torch::data::DataLoaderOptions()
                .batch_size(static_cast<size_t>(config.batch_size))
                .workers(static_cast<size_t>(config.num_workers))
                // Without workers LibTorch must keep max_jobs at 0: jobs queued then are never run.
                .max_jobs(static_cast<size_t>(config.effective_prefetch_factor()) *
                          static_cast<size_t>(config.num_workers))
                .drop_last(config.drop_last)
                .enforce_ordering(true))) {}

  void begin_epoch(int) override {
    it_.reset();
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
  Loader loader_;
  std::optional<Iterator> it_;
};

}  // namespace

std::unique_ptr<BatchSource> make_torch_loader_source(const WorkloadConfig& config, const torch::Tensor& dataset) {
  if (config.shuffle) {
    return std::make_unique<TorchLoaderSource<torch::data::samplers::RandomSampler>>(config, dataset);
  }
  return std::make_unique<TorchLoaderSource<torch::data::samplers::SequentialSampler>>(config, dataset);
}

}  // namespace ingero::workloads
