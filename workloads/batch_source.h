// SPDX-License-Identifier: Apache-2.0
// A batch source yields one epoch's batches to the main loop. The main loop times
// next() as "waiting for data" and everything after it as compute.
#pragma once

#include <torch/types.h>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "workloads/config.h"
#include "workloads/loader_stats.h"
#include "workloads/sample_store.h"

namespace ingero::workloads {

struct Batch {
  torch::Tensor data;     // B x F, on the host (maybe pinned) or already on the device
  torch::Tensor indices;  // B sample ids (int64, on the data's device): which rows of the dataset these are
};

// A loader worker died or reported an error; the run fails with this message.
class WorkerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Ctrl-C / SIGTERM arrived while the source was waiting.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// An epoch ran past the run's epoch deadline (config.epoch_deadline_s): a sweep has
// already seen that this configuration is clearly slower than the best one.
class DeadlineExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual void begin_epoch(int epoch) = 0;
  // nullopt at the end of the epoch.
  virtual std::optional<Batch> next() = 0;
  virtual void end_epoch() {}
  virtual LoaderStats stats() const { return {}; }
};

// The dataset lives on the host (in memory or on disk); `device` is where the model runs.
std::unique_ptr<BatchSource> make_batch_source(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store,
                                               const torch::Device& device);

// Set by the workload process's signal handler; sources poll it while waiting.
bool stop_requested();
void request_stop();

}  // namespace ingero::workloads
