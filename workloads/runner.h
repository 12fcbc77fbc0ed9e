// SPDX-License-Identifier: Apache-2.0
// Runs one workload configuration in this process: dataset, model, batch source,
// warm-up, measured epochs, per-batch wait/compute timings.
#pragma once

#include <torch/types.h>

#include <functional>

#include "workloads/result.h"

namespace ingero::workloads {

struct RunHooks {
  // Called after every batch of every epoch (warm-up included) with the sample ids and
  // the model's output for them (on the CPU). For tests; slows the run.
  std::function<void(int epoch, const torch::Tensor& indices, const torch::Tensor& output)> on_batch;
  // Called at the end of each epoch with the source's statistics.
  std::function<void(int epoch, const LoaderStats&)> on_epoch_end;
};

// cuda when available for "auto"; an explicit "cuda" without a GPU is bad input.
Result<torch::Device> resolve_device(const std::string& device);

// Throws WorkerFailure / Interrupted / DatasetError; returns the record otherwise. An on-disk
// dataset is opened, or written before the first epoch when it is not in the cache yet;
// preparation_report, when the harness prepared it (ingero-bench-workload --prepare-dataset), says
// whether that wrote it and what the device measured.
RunResult run_workload(const WorkloadConfig& config, const RunHooks& hooks = {},
                       const std::string& preparation_report = {});

}  // namespace ingero::workloads
