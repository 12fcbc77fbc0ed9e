// SPDX-License-Identifier: Apache-2.0
#include "workloads/runner.h"

#include <torch/torch.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "workloads/direct_sources.h"
#include "workloads/model.h"
#include "workloads/page_cache.h"
#include "workloads/preparation_report.h"
#include "workloads/process_loader.h"
#include "workloads/torch_loader_source.h"

namespace ingero::workloads {

namespace {

std::atomic<bool> g_stop{false};

uint64_t now_ns() { return static_cast<uint64_t>(monotonic_ns()); }

// Every source is stoppable between batches: Ctrl-C, and an epoch past its deadline. A
// warm-up epoch (start-up, first-use costs) gets twice the deadline.
void check_stop(const WorkloadConfig& config, uint64_t epoch_start_ns, bool measured) {
  if (stop_requested()) throw Interrupted();
  if (config.epoch_deadline_s <= 0) return;
  const double elapsed = static_cast<double>(now_ns() - epoch_start_ns) / 1e9;
  if (elapsed > config.epoch_deadline_s * (measured ? 1.0 : 2.0))
    throw DeadlineExceeded(fmt::format("an epoch ran past the deadline of {:.3g} s (stopped after {:.3g} s)",
                                       config.epoch_deadline_s, elapsed));
}

// The model step on one batch; returns the output (kept for hooks) after synchronising
// through .item(), so the time measured is the device's real time.
class ModelStep {
 public:
  ModelStep(const WorkloadConfig& config, const torch::Device& device)
      : config_(config), device_(device), model_(make_model(config)) {
    model_->to(device_);
    if (config_.train) {
      model_->train();
      optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(0.01));
    } else {
      model_->eval();
    }
  }

  torch::Tensor run(const Batch& batch, double* checksum, int64_t* h2d_bytes) {
    torch::Tensor x = batch.data;
    if (x.device() != device_) {
      if (x.device().is_cpu() && device_.is_cuda()) *h2d_bytes += x.numel() * static_cast<int64_t>(x.element_size());
      x = x.to(device_, /*non_blocking=*/x.is_pinned());
    }
    torch::Tensor out;
    if (config_.train) {
      optimizer_->zero_grad();
      out = model_->forward(x);
      auto target = batch.indices.remainder(config_.classes).to(device_);
      auto loss = torch::nn::functional::cross_entropy(out, target);
      loss.backward();
      optimizer_->step();
      out = out.detach();
    } else {
      torch::NoGradGuard no_grad;
      out = model_->forward(x);
    }
    *checksum += out.sum().item<double>();
    return out;
  }

 private:
  WorkloadConfig config_;
  torch::Device device_;
  torch::nn::Sequential model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

}  // namespace

bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void request_stop() { g_stop.store(true, std::memory_order_relaxed); }

Result<torch::Device> resolve_device(const std::string& device) {
  const bool cuda = torch::cuda::is_available();
  if (device == "cuda" && !cuda) {
    return Error::bad_input("--device cuda was asked for, but no CUDA device is available to LibTorch",
                            "use --device cpu (or auto), or build against a CUDA LibTorch on a GPU machine");
  }
  if (device == "cpu" || !cuda) return torch::Device(torch::kCPU);
  return torch::Device(torch::kCUDA, 0);
}

std::unique_ptr<BatchSource> make_batch_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store,
                                               const torch::Device& device) {
  const bool pin = config.pin_memory && device.is_cuda();
  switch (config.mode) {
    case Mode::direct:
      return make_direct_source(config, std::move(store));
    case Mode::direct_shuffled:
      return make_gather_source(config, std::move(store));
    case Mode::resident:
      if (!store->tensor().defined()) throw std::invalid_argument("resident needs the dataset in memory");
      return make_resident_source(config, store->tensor().to(device));
    case Mode::loader:
      return make_process_loader(config, std::move(store), /*per_sample=*/true, pin);
    case Mode::loader_batched:
      return make_process_loader(config, std::move(store), /*per_sample=*/false, pin);
    case Mode::torch_loader:
      return make_torch_loader_source(config, std::move(store));
    case Mode::python:
    case Mode::python_direct:
      break;
  }
  throw std::invalid_argument("mode " + mode_name(config.mode) + " runs in python3, not in LibTorch");
}

namespace {

// The on-disk dataset of a run: opened (or written, before any epoch), and what the record says of it.
std::optional<StorageReport> prepare_storage(const WorkloadConfig& config, const std::string& preparation_report) {
  if (!config.on_disk()) return std::nullopt;
  auto entry = prepare_dataset(config, stop_requested);
  if (!entry) throw DatasetError(entry.error().message + (entry.error().hint.empty() ? "" : "; fix: " + entry.error().hint));
  StorageReport report{*entry, {}, {}};
  // The harness's preparation ran before the tracer: it wrote the entry, and measured the device.
  if (!preparation_report.empty()) {
    auto text = read_file(preparation_report);
    const auto prepared = text ? preparation_report_from_text(*text) : std::nullopt;
    if (prepared && !prepared->error && prepared->key == entry->layout.key()) {
      report.entry.written_now = prepared->written_now;
      report.entry.write_s = prepared->write_s;
      report.device.name = prepared->device_name;
      report.device.maj_min = prepared->device_maj_min;
      report.device.seq_read_mb_s = prepared->device_seq_read_mb_s;
      report.device.how = prepared->device_how;
      return report;
    }
  }
  const std::vector<std::string> probe =
      config.storage == Storage::shards ? entry->paths() : std::vector<std::string>{};
  auto device = page_cache::block_device(config.dataset_cache_dir(), probe);
  if (!device) throw DatasetError(device.error().message);
  report.device = *device;
  return report;
}

}  // namespace

RunResult run_workload(const WorkloadConfig& requested, const RunHooks& hooks, const std::string& preparation_report) {
  RunResult result;
  result.config = requested;
  auto device_or = resolve_device(requested.device);
  if (!device_or) throw std::invalid_argument(device_or.error().message);
  const torch::Device device = *device_or;
  result.config.device = device.is_cuda() ? "cuda" : "cpu";
  if (requested.pin_memory && !device.is_cuda()) {
    result.notes.push_back("pin_memory has no effect without a CUDA device (as in PyTorch); ignored");
  }
  result.pid = getpid();
  result.main_tid = static_cast<pid_t>(syscall(SYS_gettid));

  std::optional<StorageReport> storage = prepare_storage(result.config, preparation_report);
  if (storage) result.storage = storage->to_json(result.config);
  const std::shared_ptr<const SampleStore> store = open_store(result.config, storage ? &storage->entry : nullptr);
  ModelStep step(result.config, device);
  if (requested.mode == Mode::resident && device.is_cuda()) {
    result.h2d_bytes_once = store->samples() * store->features() * static_cast<int64_t>(sizeof(float));
  }
  bool first_measured = true;
  bool cold_not_held = false;

  // What was measured before a stop is kept: the record says how the run ended.
  try {
    int epoch = 0;
    for (int rep = 0; rep < requested.repeat; ++rep) {
      auto source = make_batch_source(result.config, store, device);
      const int epochs_this_repeat = requested.epochs + (rep == 0 ? requested.warmup_epochs : 0);
      for (int e = 0; e < epochs_this_repeat; ++e, ++epoch) {
        const bool measured = rep > 0 || e >= requested.warmup_epochs;
        int64_t h2d = 0, samples = 0, index = 0;
        double checksum = 0;
        if (storage && measured) {
          // Outside the epoch's time: eviction (cold) or the warming read, and the residency then.
          auto residency = settle_page_cache(result.config, storage->entry, first_measured);
          if (!residency) throw DatasetError(residency.error().message);
          // Said once, at the first epoch whose eviction did not hold.
          if (result.config.page_cache == PageCache::cold && !cold_not_held) {
            const std::string note = page_cache::cold_not_held_note(*residency, storage->entry.dir);
            cold_not_held = !note.empty();
            if (cold_not_held) result.notes.push_back(note);
          }
          storage->epochs.push_back({epoch, *residency});
          result.storage = storage->to_json(result.config);
        }
        if (measured) first_measured = false;
        const uint64_t t0 = now_ns();
        source->begin_epoch(epoch);
        for (;; ++index) {
          check_stop(result.config, t0, measured);
          if (result.config.max_batches > 0 && index >= result.config.batches_in_epoch(epoch)) break;
          const uint64_t w0 = now_ns();
          std::optional<Batch> batch = source->next();
          const uint64_t w1 = now_ns();
          if (!batch) break;
          torch::Tensor out = step.run(*batch, &checksum, &h2d);
          const uint64_t c1 = now_ns();
          samples += batch->indices.size(0);
          if (hooks.on_batch) hooks.on_batch(epoch, batch->indices.to(torch::kCPU), out.to(torch::kCPU));
          if (!measured) continue;
          if (result.batches.size() < kMaxBatchRecords) {
            result.batches.push_back(BatchTiming{epoch, index, w0, w1 - w0, c1 - w1});
          } else {
            result.batches_truncated = true;
          }
        }
        source->end_epoch();
        const uint64_t t1 = now_ns();
        const LoaderStats stats = source->stats();
        if (hooks.on_epoch_end) hooks.on_epoch_end(epoch, stats);
        result.loader.max_in_flight = std::max(result.loader.max_in_flight, stats.max_in_flight);
        if (!measured) continue;
        result.epoch_seconds.push_back(static_cast<double>(t1 - t0) / 1e9);
        result.samples_per_epoch = samples;
        result.h2d_bytes_per_epoch = h2d;
        result.checksum = checksum;
      }
      const LoaderStats stats = source->stats();
      result.loader.worker_forks += stats.worker_forks;
      result.loader.starts.insert(result.loader.starts.end(), stats.starts.begin(), stats.starts.end());
    }
  } catch (const DeadlineExceeded& e) {
    result.status = contract::record_status::kStopped;
    result.error = e.what();
  } catch (const Interrupted&) {
    result.status = contract::record_status::kInterrupted;
    result.error = "interrupted";
  }
  return result;
}

}  // namespace ingero::workloads
