// SPDX-License-Identifier: Apache-2.0
// Argument rules (PyTorch's plus our own).
#include <gtest/gtest.h>

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

