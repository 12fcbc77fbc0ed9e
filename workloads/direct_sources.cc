// SPDX-License-Identifier: Apache-2.0
// The in-memory paths with no loader: the fast paths of pytorch/pytorch#154318.
#include "workloads/direct_sources.h"

#include "workloads/model.h"

namespace ingero::workloads {

namespace {

// Shared by every source that walks an epoch order batch by batch.
class OrderedBatches {
 public:
  explicit OrderedBatches(const WorkloadConfig& config) : config_(config) {}
  void reset(torch::Tensor order, int epoch) {
    order_ = std::move(order);
    next_ = 0;
    limit_ = config_.batches_in_epoch(epoch);
  }
  std::optional<BatchRange> take() {
    if (next_ >= limit_) return std::nullopt;
    return batch_range(config_, next_++);
  }
  const torch::Tensor& order() const { return order_; }

 private:
  const WorkloadConfig& config_;
  torch::Tensor order_;
  int64_t next_ = 0;
  int64_t limit_ = 0;
};

// Contiguous slices: X[i:i+B] (no copy on the host), or the same range read from disk.
class DirectSource final : public BatchSource {
 public:
  DirectSource(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store)
      : config_(config), store_(std::move(store)), memory_(store_->tensor()), batches_(config_) {}
  void begin_epoch(int epoch) override {
    batches_.reset({}, epoch);
    epoch_ = epoch;
  }
  std::optional<Batch> next() override {
    auto r = batches_.take();
    if (!r) return std::nullopt;
    return Batch{memory_.defined() ? memory_.narrow(0, r->start, r->count)
                                   : read_range(*store_, r->start, r->count, epoch_),
                 torch::arange(r->start, r->start + r->count, torch::kInt64)};
  }

 private:
  WorkloadConfig config_;
  std::shared_ptr<const SampleStore> store_;
  torch::Tensor memory_;
  OrderedBatches batches_;
  int epoch_ = 0;
};

// One gather per batch through the epoch order, on the host: from memory or sample by sample from disk.
class HostGatherSource final : public BatchSource {
 public:
  HostGatherSource(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store)
      : config_(config), store_(std::move(store)), batches_(config_) {}
  void begin_epoch(int epoch) override {
    batches_.reset(epoch_order(config_, epoch), epoch);
    epoch_ = epoch;
  }
  std::optional<Batch> next() override {
    auto r = batches_.take();
    if (!r) return std::nullopt;
    auto idx = batches_.order().narrow(0, r->start, r->count);
    auto out = torch::empty({r->count, store_->features()}, torch::kFloat32);
    collate_into(out, *store_, idx, /*per_sample=*/false, epoch_);
    return Batch{out, idx};
  }

 private:
  WorkloadConfig config_;
  std::shared_ptr<const SampleStore> store_;
  OrderedBatches batches_;
  int epoch_ = 0;
};

// One gather per batch through an epoch order, on the device that holds the data.
class GatherSource final : public BatchSource {
 public:
  GatherSource(const WorkloadConfig& config, torch::Tensor dataset)
      : config_(config), dataset_(std::move(dataset)), batches_(config_) {}
  void begin_epoch(int epoch) override { batches_.reset(epoch_order(config_, epoch, dataset_.device()), epoch); }
  // The sample ids stay where the data is: a resident pipeline never copies them back.
  std::optional<Batch> next() override {
    auto r = batches_.take();
    if (!r) return std::nullopt;
    auto idx = batches_.order().narrow(0, r->start, r->count);
    return Batch{dataset_.index_select(0, idx), idx};
  }

 private:
  WorkloadConfig config_;
  torch::Tensor dataset_;
  OrderedBatches batches_;
};

}  // namespace

std::unique_ptr<BatchSource> make_direct_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store) {
  return std::make_unique<DirectSource>(config, std::move(store));
}

std::unique_ptr<BatchSource> make_gather_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store) {
  // In memory exactly as before on-disk datasets: one index_select per batch.
  if (const torch::Tensor memory = store->tensor(); memory.defined()) return std::make_unique<GatherSource>(config, memory);
  return std::make_unique<HostGatherSource>(config, std::move(store));
}

std::unique_ptr<BatchSource> make_resident_source(const WorkloadConfig& config, const torch::Tensor& on_device) {
  return std::make_unique<GatherSource>(config, on_device);
}

}  // namespace ingero::workloads
