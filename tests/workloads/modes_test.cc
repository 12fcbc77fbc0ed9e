// SPDX-License-Identifier: Apache-2.0
// Every LibTorch mode sees every sample exactly once per epoch and gives the same
// model output per sample as `direct`; the loader keeps its in-flight bound and its
// worker life cycle; a forked worker survives a parent whose thread pool already ran.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "tests/workloads/process_helpers.h"
#include "workloads/batch_source.h"
#include "workloads/model.h"
#include "workloads/process_loader.h"
#include "workloads/runner.h"

namespace ingero::workloads {
namespace {

WorkloadConfig small_config(Mode mode, int workers = 0) {
  WorkloadConfig c;
  c.mode = mode;
  c.device = "cpu";
  c.samples = 1000;  // 7 full batches + one of 104: the partial batch is covered too
  c.features = 8;
  c.hidden = 16;
  c.classes = 4;
  c.batch_size = 128;
  c.num_workers = workers;
  c.epochs = 2;
  c.warmup_epochs = 1;
  return c;
}

// epoch -> sample id -> output row
using Outputs = std::map<int, std::map<int64_t, std::vector<float>>>;

Outputs collect_outputs(const WorkloadConfig& config, std::vector<LoaderStats>* stats = nullptr) {
  Outputs outputs;
  RunHooks hooks;
  hooks.on_batch = [&](int epoch, const torch::Tensor& indices, const torch::Tensor& out) {
    auto idx = indices.contiguous();
    auto rows = out.contiguous();
    for (int64_t i = 0; i < idx.size(0); ++i) {
      const int64_t id = idx[i].item<int64_t>();
      auto row = rows[i];
      std::vector<float> v(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
      EXPECT_TRUE(outputs[epoch].emplace(id, std::move(v)).second) << "sample " << id << " seen twice in epoch " << epoch;
    }
  };
  if (stats != nullptr) hooks.on_epoch_end = [&](int, const LoaderStats& s) { stats->push_back(s); };
  auto result = run_workload(config, hooks);
  EXPECT_EQ(result.status, "ok");
  EXPECT_EQ(result.samples_per_epoch, config.samples);
  EXPECT_EQ(result.epoch_seconds.size(), static_cast<size_t>(config.epochs * config.repeat));
  return outputs;
}

void expect_same_outputs(const Outputs& reference, const Outputs& actual, int64_t samples) {
  const auto& ref = reference.begin()->second;
  ASSERT_EQ(static_cast<int64_t>(ref.size()), samples);
  for (const auto& [epoch, by_id] : actual) {
    ASSERT_EQ(static_cast<int64_t>(by_id.size()), samples) << "epoch " << epoch << " missed samples";
    for (const auto& [id, row] : by_id) {
      const auto& want = ref.at(id);
      ASSERT_EQ(row.size(), want.size());
      for (size_t k = 0; k < row.size(); ++k) {
        ASSERT_NEAR(row[k], want[k], 1e-5) << "sample " << id << " output " << k << " in epoch " << epoch;
      }
    }
  }
}

class ModeEquivalence : public ::testing::TestWithParam<std::tuple<Mode, int, bool>> {};

TEST_P(ModeEquivalence, EverySampleOnceWithTheDirectOutput) {
  const auto [mode, workers, shuffle] = GetParam();
  const Outputs reference = collect_outputs(small_config(Mode::direct));
  auto config = small_config(mode, workers);
  config.shuffle = shuffle;
  const Outputs actual = collect_outputs(config);
  EXPECT_EQ(actual.size(), 3u);  // warm-up + 2 measured epochs
  expect_same_outputs(reference, actual, config.samples);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ModeEquivalence,
    ::testing::Values(std::make_tuple(Mode::direct_shuffled, 0, true), std::make_tuple(Mode::resident, 0, true),
                      std::make_tuple(Mode::loader, 0, true), std::make_tuple(Mode::loader, 2, true),
                      std::make_tuple(Mode::loader, 3, false), std::make_tuple(Mode::loader_batched, 0, true),
                      std::make_tuple(Mode::loader_batched, 2, true), std::make_tuple(Mode::torch_loader, 0, true),
                      std::make_tuple(Mode::torch_loader, 2, true)));

TEST(Shuffle, OrderDiffersBetweenEpochsAndIsAPermutation) {
  auto c = small_config(Mode::loader);
  auto a = epoch_order(c, 0);
  auto b = epoch_order(c, 1);
  EXPECT_FALSE(torch::equal(a, b));
  EXPECT_TRUE(torch::equal(std::get<0>(a.sort()), torch::arange(c.samples, torch::kInt64)));
  c.shuffle = false;
  EXPECT_TRUE(torch::equal(epoch_order(c, 3), torch::arange(c.samples, torch::kInt64)));
}

TEST(Loader, NeverMoreThanPrefetchTimesWorkersInFlight) {
  auto config = small_config(Mode::loader, 3);
  config.samples = 2560;  // 20 batches: enough to fill the pipeline
  config.prefetch_factor = 2;
  std::vector<LoaderStats> stats;
  collect_outputs(config, &stats);
  ASSERT_FALSE(stats.empty());
  for (const auto& s : stats) {
    EXPECT_LE(s.max_in_flight, 6);
    EXPECT_EQ(s.max_in_flight, 6) << "the pipeline never filled: prefetching does not work";
  }
}

TEST(Loader, PersistentWorkersSurviveEpochsOthersAreReforked) {
  auto config = small_config(Mode::loader, 2);
  std::vector<LoaderStats> stats;
  collect_outputs(config, &stats);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats.back().worker_forks, 6);  // 2 workers x 3 epochs

  config.persistent_workers = true;
  stats.clear();
  collect_outputs(config, &stats);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats.back().worker_forks, 2);
}

TEST(Loader, WorkersAreGoneAfterTheRun) {
  auto config = small_config(Mode::loader, 2);
  config.persistent_workers = true;
  collect_outputs(config);
  EXPECT_TRUE(testing::children_of(getpid()).empty());
}

// LibTorch's intra-op pool is not fork-safe; workers must still run after the parent used it.
TEST(Loader, ForkAfterTheParentsThreadPoolRan) {
  at::set_num_threads(2);
  auto big = torch::randn({512, 512});
  auto product = torch::mm(big, big);  // spins the intra-op pool up
  ASSERT_EQ(product.size(0), 512);
  auto config = small_config(Mode::loader, 2);
  const Outputs reference = collect_outputs(small_config(Mode::direct));
  expect_same_outputs(reference, collect_outputs(config), config.samples);
}

TEST(Loader, AKilledWorkerIsReportedByIdAndSignal) {
  auto config = small_config(Mode::loader, 2);
  config.samples = 200'000;  // slow enough per batch that the workers are still busy
  config.batch_size = 20'000;
  auto dataset = make_dataset(config);
  auto source = make_process_loader(config, memory_store(dataset), /*per_sample=*/true, /*pin=*/false);
  source->begin_epoch(0);
  ASSERT_TRUE(source->next().has_value());
  auto workers = testing::children_of(getpid());
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(workers[1], SIGKILL), 0);
  try {
    while (source->next()) {
    }
    FAIL() << "the epoch finished although a worker was killed";
  } catch (const WorkerFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("loader worker"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pid " + std::to_string(workers[1])), std::string::npos) << msg;
    EXPECT_NE(msg.find("signal 9"), std::string::npos) << msg;
  }
  source.reset();
  EXPECT_TRUE(testing::children_of(getpid()).empty());
}

TEST(Loader, CollatePerSampleEqualsOneGather) {
  auto config = small_config(Mode::loader);
  auto dataset = make_dataset(config);
  auto idx = torch::tensor({5, 3, 999, 0}, torch::kInt64);
  auto a = torch::empty({4, config.features});
  auto b = torch::empty({4, config.features});
  auto store = memory_store(dataset);
  collate_into(a, *store, idx, true, 0);
  collate_into(b, *store, idx, false, 0);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_TRUE(torch::equal(a[2], dataset[999]));
}

}  // namespace
}  // namespace ingero::workloads
