// SPDX-License-Identifier: Apache-2.0
// Collate vs gather, the cost at the heart of pytorch/pytorch#154318: one batch of the
// in-memory dataset fetched per sample and stacked (what the `loader` workers and
// PyTorch's automatic batching do) against one gather (index_select; `loader-batched`,
// `direct-shuffled`), through the loader's own function (workloads::collate_into) on the
// workload's own dataset (workloads::make_dataset; the CPU default size, 65,536 x 100
// float32). The indices are a seeded random permutation's first `batch` entries. Args:
// batch size, and LibTorch intra-op threads (1 is what a loader worker runs with).
//
//   ingero_collate_bench [--samples N] [--features F] [--benchmark_...]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>

#include "bench/bench_context.h"
#include "workloads/model.h"
#include "workloads/process_loader.h"

namespace {

ingero::workloads::WorkloadConfig config;
torch::Tensor dataset;
std::shared_ptr<ingero::workloads::SampleStore> store;

void BM_Collate(benchmark::State& state, bool per_sample) {
  const int64_t batch = state.range(0);
  if (batch > config.samples) {
    state.SkipWithError("batch larger than the dataset");
    return;
  }
  torch::set_num_threads(static_cast<int>(state.range(1)));
  torch::manual_seed(1);
  const torch::Tensor indices = torch::randperm(config.samples, torch::kInt64).slice(0, 0, batch).contiguous();
  torch::Tensor out = torch::empty({batch, config.features}, torch::kFloat32);
  for (auto _ : state) {
    ingero::workloads::collate_into(out, *store, indices, per_sample, 0);
    benchmark::DoNotOptimize(out.data_ptr<float>());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch);  // items_per_second: samples per second
  state.SetBytesProcessed(state.iterations() * batch * config.features * static_cast<int64_t>(sizeof(float)));
  state.counters["batch_bytes"] = static_cast<double>(batch * config.features * sizeof(float));
}

}  // namespace

int main(int argc, char** argv) {
  config.samples = 65'536;
  config.features = 100;
  const std::vector<ingero::bench::Flag> flags = {
      {"--samples", [](const char* v) { config.samples = atoll(v); }},
      {"--features", [](const char* v) { config.features = atoll(v); }},
  };
  const auto valid = [] { return config.samples > 0 && config.features > 0; };
  if (int rc = ingero::bench::start(&argc, argv, flags, valid, "[--samples N] [--features F]")) return rc;
  dataset = ingero::workloads::make_dataset(config);
  store = ingero::workloads::memory_store(dataset);
  benchmark::AddCustomContext("dataset", std::to_string(config.samples) + " x " + std::to_string(config.features) +
                                             " float32");
  benchmark::AddCustomContext("torch_version", TORCH_VERSION);
  for (bool per_sample : {true, false}) {
    benchmark::RegisterBenchmark(per_sample ? "collate/per_sample_stack" : "collate/one_gather", BM_Collate,
                                 per_sample)
        ->ArgNames({"batch", "threads"})
        ->ArgsProduct({{1024, 8192}, {1, 2}})
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
