// SPDX-License-Identifier: Apache-2.0
// What a sweep of the user's command keeps of each point's output (run-ID-LABEL.log): bounded, in
// whole lines, saying what it left out.
#include <gtest/gtest.h>

#include <string>

#include "harness/job_sweep.h"

namespace ingero::harness {
namespace {

std::string lines(int from, int to) {
  std::string text;
  for (int i = from; i < to; ++i) text += "step " + std::to_string(i) + "\n";
  return text;
}

TEST(KeptLog, AShortOutputIsKeptWhole) {
  const std::string text = lines(0, 10);
  EXPECT_EQ(kept_log(text, 64, 64), text);
  EXPECT_EQ(kept_log(""), "");
}

TEST(KeptLog, ALongOutputKeepsItsFirstAndLastLinesAndSaysWhatIsLeftOut) {
  const std::string text = lines(0, 100'000);  // ~1.1 MB
  const std::string kept = kept_log(text, 100, 200);
  EXPECT_LT(kept.size(), 400u);
  EXPECT_EQ(kept.rfind("step 0\nstep 1\n", 0), 0u) << kept;
  EXPECT_EQ(kept.substr(kept.size() - 11), "step 99999\n") << kept;
  const size_t marker = kept.find("[... ");
  ASSERT_NE(marker, std::string::npos) << kept;
  EXPECT_EQ(kept[marker - 1], '\n');  // whole lines on both sides
  const size_t left_out = std::stoul(kept.substr(marker + 5));
  const size_t marker_end = kept.find('\n', marker) + 1;
  EXPECT_EQ(kept.size() - (marker_end - marker) + left_out, text.size());
}

}  // namespace
}  // namespace ingero::harness
