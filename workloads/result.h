// SPDX-License-Identifier: Apache-2.0
// The workload result record (docs/formats.md, version kResultVersion): built by the
// runner, written atomically by the workload process, read back by the harness.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/trace_contract.h"
#include "workloads/config.h"
#include "workloads/loader_stats.h"

namespace ingero::workloads {

inline constexpr int kResultVersion = 1;
inline constexpr size_t kMaxBatchRecords = 10'000;

struct BatchTiming {
  int epoch = 0;
  int64_t index = 0;
  uint64_t wait_start_ns = 0;  // CLOCK_MONOTONIC
  uint64_t wait_ns = 0;
  uint64_t compute_ns = 0;
};

struct Distribution {
  double total_s = 0, p50_s = 0, p99_s = 0, max_s = 0;
};
// Nearest-rank percentiles over every value.
Distribution summarize(std::vector<double> seconds);

struct RunResult {
  WorkloadConfig config;  // device resolved to cpu|cuda
  // ok | failed | interrupted (Ctrl-C; what was measured is kept) | stopped (an epoch ran
  // past config.epoch_deadline_s; the epochs before it are kept)
  std::string status{contract::record_status::kOk};
  std::string error;
  std::vector<std::string> notes;  // e.g. a flag that does nothing on this device
  pid_t pid = 0;
  pid_t main_tid = 0;
  std::vector<double> epoch_seconds;  // measured epochs only
  int64_t samples_per_epoch = 0;
  int64_t h2d_bytes_per_epoch = 0;
  int64_t h2d_bytes_once = 0;  // resident: the one upload of the dataset
  std::vector<BatchTiming> batches;
  bool batches_truncated = false;
  double checksum = 0;
  LoaderStats loader;
  nlohmann::json storage;  // null in memory; the on-disk dataset's "storage" object (docs/formats.md)
};

nlohmann::json to_json(const RunResult& result);

// One training loop's timings: a process's main loop, one per torch.distributed rank.
struct MainLoopTimings {
  std::optional<int> rank;  // set in a DDP job
  pid_t pid = 0;
  pid_t main_tid = 0;
  std::vector<BatchTiming> batches;
  std::vector<WorkerStart> workers;  // its loader workers' start-ups (fork_ns 0: not measured)
};

// What the harness shows of a record, whoever wrote it (C++ or the Python reference).
struct ResultSummary {
  std::string label;
  std::string status;
  std::string error;
  double epoch_median_s = 0, epoch_min_s = 0, epoch_max_s = 0;
  double samples_per_s = 0;
  double h2d_gbps = 0;
  Distribution wait, compute;
  double wait_fraction = 0;
  std::vector<MainLoopTimings> loops;  // one, or one per rank
};
Result<ResultSummary> summary_from_json(const nlohmann::json& j);

// One record for a DDP job from its ranks' records (rank r at index r; nullopt where a rank
// wrote none): an epoch takes as long as its slowest rank (they step together), samples add
// up, waits and computes are over every rank's batches, and "ranks" keeps each rank's own
// figures and batch timings. The worst rank status is the job's.
nlohmann::json merge_rank_records(const std::vector<std::optional<nlohmann::json>>& ranks);

}  // namespace ingero::workloads
