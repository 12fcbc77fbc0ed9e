// SPDX-License-Identifier: Apache-2.0
// The results table (harness/results_table) from what runs left: a run cut short shows the epochs
// it kept, marked; a run that measured nothing shows why.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/results_table.h"

namespace ingero::harness {
namespace {

// A workload record (docs/formats.md) of the given status with the given measured epochs.
nlohmann::json record(const std::string& status, const std::vector<double>& epochs, const std::string& error = "") {
  nlohmann::json r = {{"schema", "ingero-bench/result"}, {"version", 1},          {"label", "w2"},
                      {"status", status},                {"epoch_seconds", epochs}, {"samples_per_s", 1000.0}};
  if (!epochs.empty()) r.update({{"epoch_median_s", epochs[0]}, {"epoch_min_s", epochs[0]}, {"epoch_max_s", epochs[0]}});
  if (!error.empty()) r["error"] = error;
  return r;
}

TEST(ResultsTable, InterruptedRunShowsTheEpochsItKept) {
  const TableRow row = table_row(7, "w2", "interrupted", "", record("interrupted", {1.25, 1.25}, "interrupted"), true);
  EXPECT_TRUE(row.failure.empty()) << row.failure;
  EXPECT_EQ(row.summary.status, "interrupted, 2 epochs kept");
  const std::string table = render_results_table({row});
  EXPECT_NE(table.find("1.250"), std::string::npos) << table;
  EXPECT_NE(table.find("interrupted, 2 epochs kept"), std::string::npos) << table;
}

TEST(ResultsTable, StoppedRunSaysWhyAndShowsItsEpochs) {
  const TableRow row = table_row(8, "w4", "ok", "", record("stopped", {0.5}, "epoch 2 ran past 0.6 s"), false);
  EXPECT_TRUE(row.failure.empty()) << row.failure;
  EXPECT_EQ(row.summary.label, "w4 (untraced)");
  EXPECT_EQ(row.summary.status, "stopped, 1 epoch kept: epoch 2 ran past 0.6 s");
}

TEST(ResultsTable, InterruptedBeforeAnEpochShowsOnlyItsStatus) {
  const TableRow row = table_row(9, "w2", "interrupted", "", record("interrupted", {}, "interrupted"), true);
  EXPECT_EQ(row.failure, "interrupted");
}

TEST(ResultsTable, FailedRunShowsItsErrorNotItsEpochs) {
  const TableRow row = table_row(10, "w2", "failed", "could not store everything: disk full",
                                 record("interrupted", {1.0}, "interrupted"), true);
  EXPECT_EQ(row.failure, "failed: could not store everything: disk full");
}

}  // namespace
}  // namespace ingero::harness
