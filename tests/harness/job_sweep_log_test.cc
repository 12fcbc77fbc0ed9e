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

// A stored job sweep whose request or point knobs were changed outside ingero-bench is bad input
// naming the field when resumed, before anything runs: their typed reads once threw out of main.
TEST(ResumedJobSweep, ADamagedRequestOrKnobIsBadInput) {
  SweepFlags flags;
  flags.workload.trace.db = "/tmp/sweep.db";
  UserOutputs outputs;
  SweepSpec spec;
  spec.resume_id = 4;
  spec.request = {{"command", "python3 train.py"}};
  auto resumed = resume_job_sweep(spec, flags, outputs);
  ASSERT_FALSE(resumed);
  EXPECT_EQ(resumed.error().exit_code, kExitBadInput);
  EXPECT_NE(resumed.error().message.find("'/tmp/sweep.db': sweep 4 is damaged: request_json's 'command' is string"),
            std::string::npos)
      << resumed.error().message;

  spec.request = {{"command", {"/bin/true"}}, {"steps", 50}};
  SweepPoint point;
  point.label = "w2";
  point.knobs = Knobs{{knob::kMode, "job"}, {knob::kNumWorkers, "two"}};
  spec.points = {point};
  auto again = resume_job_sweep(spec, flags, outputs);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("point 'w2''s knob num_workers is 'two', not a number"), std::string::npos)
      << again.error().message;
}

}  // namespace
}  // namespace ingero::harness
