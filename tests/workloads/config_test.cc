// Argument rules (PyTorch's plus our own) and sweep expansion.
#include <gtest/gtest.h>

#include "harness/sweep.h"
#include "workloads/config.h"

namespace ingero::workloads {
namespace {

WorkloadConfig valid() {
  WorkloadConfig c;
  c.samples = 1000;
  c.batch_size = 100;
  return c;
}

void expect_bad_input(const WorkloadConfig& c, const std::string& mentions) {
  Status s = validate(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().exit_code, kExitBadInput);
  EXPECT_NE(s.error().message.find(mentions), std::string::npos) << s.error().message;
}

TEST(Config, ValidDefaults) { EXPECT_TRUE(validate(valid()).ok()); }

TEST(Config, RejectsBadInputNamingTheFlag) {
  auto c = valid();
  c.batch_size = 0;
  expect_bad_input(c, "--batch-size");
  c = valid();
  c.num_workers = -1;
  expect_bad_input(c, "--num-workers");
  c = valid();
  c.samples = 10;
  expect_bad_input(c, "smaller than --batch-size");
  c = valid();
  c.mode = Mode::kLoader;
  c.prefetch_factor = 4;
  expect_bad_input(c, "--prefetch-factor needs --num-workers");
  c = valid();
  c.mode = Mode::kLoader;
  c.persistent_workers = true;
  expect_bad_input(c, "--persistent-workers needs");
  c = valid();
  c.device = "tpu";
  expect_bad_input(c, "unknown device");
}

TEST(Config, UnknownModeListsTheKnownOnes) {
  auto m = parse_mode("fast");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().exit_code, kExitBadInput);
  EXPECT_NE(m.error().hint.find("loader-batched"), std::string::npos);
}

TEST(Config, JsonRoundTrip) {
  auto c = valid();
  c.mode = Mode::kLoaderBatched;
  c.num_workers = 4;
  c.prefetch_factor = 12;
  c.pin_memory = true;
  auto back = config_from_json(to_json(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(to_json(*back), to_json(c));
  EXPECT_EQ(back->label(), "loader-batched w4 pf12 pin");
}

TEST(Config, BatchesPerEpochHonoursDropLast) {
  auto c = valid();
  c.samples = 1050;
  EXPECT_EQ(c.batches_per_epoch(), 11);
  c.drop_last = true;
  EXPECT_EQ(c.batches_per_epoch(), 10);
}

}  // namespace
}  // namespace ingero::workloads

namespace ingero::harness {
namespace {

SweepRequest request(std::vector<std::string> modes, std::vector<int> workers, std::vector<int> pf = {}) {
  SweepRequest r;
  r.modes = std::move(modes);
  r.num_workers = std::move(workers);
  r.prefetch_factors = std::move(pf);
  r.base.samples = 1000;
  r.base.batch_size = 100;
  r.samples_given = r.batch_size_given = true;
  return r;
}

std::vector<std::string> labels(const SweepPlan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.runs) out.push_back(c.label());
  return out;
}

TEST(Sweep, ExpandsWorkersAndPrefetchForLoaderModesOnly) {
  auto plan = plan_sweep(request({"direct", "loader"}, {0, 4}, {2, 12}), true);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(labels(*plan), (std::vector<std::string>{"direct", "loader w0", "loader w4 pf2", "loader w4 pf12"}));
}

TEST(Sweep, AllModes) {
  auto plan = plan_sweep(request({"all"}, {2}), true);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs.size(), workloads::all_modes().size());
}

TEST(Sweep, PrefetchWithOnlyZeroWorkersIsAnError) {
  auto plan = plan_sweep(request({"loader"}, {0}, {4}), true);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().exit_code, kExitBadInput);
}

TEST(Sweep, UnknownModeIsAnError) {
  auto plan = plan_sweep(request({"direct", "nope"}, {0}), true);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("nope"), std::string::npos);
}

TEST(Sweep, CpuDefaultsAreScaledAndSaySo) {
  auto r = request({"direct"}, {0});
  r.samples_given = r.batch_size_given = false;
  r.base.samples = 7'000'000;
  r.base.batch_size = 1'048'576;
  auto plan = plan_sweep(r, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs[0].samples, kCpuDefaultSamples);
  EXPECT_FALSE(plan->scaling_note.empty());
  auto gpu = plan_sweep(r, true);
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->runs[0].samples, 7'000'000);
  EXPECT_TRUE(gpu->scaling_note.empty());
}

}  // namespace
}  // namespace ingero::harness
