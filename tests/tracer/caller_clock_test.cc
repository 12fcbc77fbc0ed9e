// SPDX-License-Identifier: Apache-2.0
// The callers' clock between two edges of a duty-cycle window.
#include "tracer/caller_clock.h"

#include <gtest/gtest.h>

namespace ingero::tracer {
namespace {

TEST(CallerMarks, AdvanceSumsEachCallersTimeSinceItsMark) {
  CallerMarks marks;
  marks.mark({1, 2}, {{1, 100}, {2, 1'000}});
  EXPECT_EQ(marks.advance({{1, 150}, {2, 1'030}}), 80u);
  EXPECT_EQ(marks.advance({{1, 150}, {2, 1'030}}), 0u);
  EXPECT_TRUE(marks.known());
  EXPECT_EQ(marks.advance({{1, 160}}), 10u);  // thread 2 could not be read
  EXPECT_FALSE(marks.known());
}

// A thread whose first reading came out low (its switch in unseen) shows more time than the
// window's span: no thread runs longer than the wall clock, and the rest ran before the span.
TEST(CallerMarks, NoThreadRunsLongerThanTheSpanBetweenItsReadings) {
  CallerMarks marks;
  marks.mark({1, 2}, {{1, 0}, {2, 0}});
  uint64_t before = 99;
  EXPECT_EQ(marks.advance_within({{1, 10'600'000}, {2, 3'000'000}}, 6'500'000, before), 9'500'000u);
  EXPECT_EQ(before, 4'100'000u);
  // The marks move to the readings all the same: the next window starts from them.
  EXPECT_EQ(marks.advance_within({{1, 12'600'000}, {2, 3'000'000}}, 6'500'000, before), 2'000'000u);
  EXPECT_EQ(before, 0u);
}

}  // namespace
}  // namespace ingero::tracer
