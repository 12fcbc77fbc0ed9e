// SPDX-License-Identifier: Apache-2.0
// Planning the runs of a grid, and the limits checked before any process starts.
#include <gtest/gtest.h>

#include <set>

#include "harness/run_plan.h"
#include "workloads/config.h"

namespace ingero::harness {
namespace {

GridRequest request(std::vector<std::string> modes, std::vector<int> workers, std::vector<int> pf = {}) {
  GridRequest r;
  r.modes = std::move(modes);
  r.num_workers = std::move(workers);
  r.prefetch_factors = std::move(pf);
  r.base.samples = 1000;
  r.base.batch_size = 100;
  r.samples_given = r.batch_size_given = true;
  return r;
}

std::vector<std::string> labels(const RunPlan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.runs) out.push_back(c.label());
  return out;
}

TEST(RunPlan, ExpandsWorkersAndPrefetchForLoaderModesOnly) {
  auto plan = plan_grid(request({"direct", "loader"}, {0, 4}, {2, 12}), true);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(labels(*plan), (std::vector<std::string>{"direct", "loader w0", "loader w4 pf2", "loader w4 pf12"}));
}

TEST(RunPlan, PinAndPersistentSwitchesMultiplyOnlyWhereTheyMatter) {
  auto r = request({"loader"}, {0, 2});
  r.pin_memory = {true, false};
  r.persistent_workers = {false, true};
  auto plan = plan_grid(r, true);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  // w0 has no workers to keep: persistent_workers does not multiply it.
  EXPECT_EQ(plan->runs.size(), 2u + 4u);
  const std::vector<std::string> all = labels(*plan);
  const std::set<std::string> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), plan->runs.size());
}

TEST(RunPlan, AllModes) {
  auto plan = plan_grid(request({"all"}, {2}), true);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs.size(), workloads::all_modes().size());
}

TEST(RunPlan, PrefetchWithOnlyZeroWorkersIsAnError) {
  auto plan = plan_grid(request({"loader"}, {0}, {4}), true);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().exit_code, kExitBadInput);
}

TEST(RunPlan, UnknownModeIsAnError) {
  auto plan = plan_grid(request({"direct", "nope"}, {0}), true);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("nope"), std::string::npos);
}

TEST(RunPlan, CpuDefaultsAreScaledAndSaySo) {
  auto r = request({"direct"}, {0});
  r.samples_given = r.batch_size_given = false;
  r.base.samples = 7'000'000;
  r.base.batch_size = 1'048'576;
  auto plan = plan_grid(r, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs[0].samples, kCpuDefaultSamples);
  EXPECT_FALSE(plan->scaling_note.empty());
  auto gpu = plan_grid(r, true);
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->runs[0].samples, 7'000'000);
  EXPECT_TRUE(gpu->scaling_note.empty());
}

TEST(CountList, AutoDoublesUpToTheCoresAndBadValuesNameTheFlag) {
  auto autos = parse_count_list("--num-workers", "auto", true, 6, 0);
  ASSERT_TRUE(autos.ok());
  EXPECT_EQ(*autos, (std::vector<int>{0, 1, 2, 4, 6}));
  auto listed = parse_count_list("--num-workers", "0,2,8", true, 2, 0);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<int>{0, 2, 8}));
  for (const char* bad : {"", "-1", "2,,4", "x", "2.5", "99999999999", "auto"}) {
    auto r = parse_count_list("--prefetch-factor", bad, false, 4, 1);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().exit_code, kExitBadInput);
    EXPECT_NE(r.error().message.find("--prefetch-factor"), std::string::npos) << r.error().message;
    EXPECT_FALSE(r.error().hint.empty());
  }
  EXPECT_FALSE(parse_count_list("--prefetch-factor", "0", false, 4, 1).ok());
  auto switches = parse_switch_list("--pin-memory", "on,off");
  ASSERT_TRUE(switches.ok());
  EXPECT_EQ(*switches, (std::vector<bool>{true, false}));
  EXPECT_FALSE(parse_switch_list("--pin-memory", "yes").ok());
}

// --num-workers 10000 is refused before any fork: more processes than the user may start.
TEST(Resources, TooManyWorkersOrTooMuchMemoryIsBadInputBeforeAnyFork) {
  workloads::WorkloadConfig config;
  config.mode = workloads::Mode::loader;
  config.num_workers = 10000;
  config.samples = 1000;
  config.batch_size = 100;
  MachineLimits limits;
  limits.usable_cores = 2;
  limits.available_bytes = int64_t{8} << 30;
  limits.process_headroom = 500;
  std::vector<std::string> warnings;
  Status s = check_resources(config, limits, &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().exit_code, kExitBadInput);
  EXPECT_NE(s.error().message.find("10000"), std::string::npos) << s.error().message;

  config.num_workers = 4;
  warnings.clear();
  EXPECT_TRUE(check_resources(config, limits, &warnings).ok());
  ASSERT_FALSE(warnings.empty());  // 4 workers on 2 cores, as PyTorch warns
  EXPECT_NE(warnings[0].find("4"), std::string::npos);

  config.samples = int64_t{1} << 40;  // a dataset far beyond memory
  Status memory = check_resources(config, limits, &warnings);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.error().exit_code, kExitBadInput);
}

// --hidden 1000000 and --classes 100000000 once reached LibTorch and its allocation backtrace.
TEST(Resources, AModelBeyondMemoryIsBadInputNamingItsFlags) {
  workloads::WorkloadConfig config;
  config.samples = 4096;
  config.batch_size = 512;
  MachineLimits limits;
  limits.available_bytes = int64_t{8} << 30;
  limits.process_headroom = 500;
  EXPECT_TRUE(check_resources(config, limits, nullptr).ok());
  for (auto [hidden, classes] : {std::pair<int64_t, int64_t>{1'000'000, 10}, {512, 100'000'000},
                                 {int64_t{1} << 40, int64_t{1} << 40}}) {  // beyond int64 when multiplied
    config.hidden = hidden;
    config.classes = classes;
    Status s = check_resources(config, limits, nullptr);
    ASSERT_FALSE(s.ok()) << hidden << " x " << classes;
    EXPECT_EQ(s.error().exit_code, kExitBadInput);
    EXPECT_NE(s.error().message.find("--hidden " + std::to_string(hidden)), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().hint.find("lower --hidden or --classes"), std::string::npos);
  }
}

}  // namespace
}  // namespace ingero::harness
