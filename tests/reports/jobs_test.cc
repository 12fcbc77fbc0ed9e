// SPDX-License-Identifier: Apache-2.0
// The rule that tells which runs of several nodes are one distributed job (reports/analysis/jobs.h),
// on runs described directly: ranks, world sizes, wall-clock windows.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reports/analysis/jobs.h"
#include "reports/text/rank_text.h"

namespace ingero::reports {
namespace {

JobMember member(int64_t run_id, std::vector<int64_t> ranks, std::optional<int64_t> world_size, double start,
                 double end) {
  return {run_id, fmt::format("n{}", run_id), std::move(ranks), world_size, start, end};
}

std::vector<std::vector<int64_t>> job_runs(const std::vector<Job>& jobs) {
  std::vector<std::vector<int64_t>> out;
  for (const Job& job : jobs) {
    out.emplace_back();
    for (const JobMember& m : job.members) out.back().push_back(m.run_id);
  }
  return out;
}

TEST(JobGrouping, RunsJoinTheFirstJobTheyFitWithEveryMemberOf) {
  const std::vector<Job> jobs = group_jobs({
      member(1, {0, 1}, 8, 0, 100),
      member(2, {0, 1}, 2, 1, 50),     // a single-node job at the same time: rank 0 again
      member(3, {2, 3}, 8, 2, 100),
      member(4, {4, 5}, std::nullopt, 3, 100),  // world size unknown: ranks below 8 fit
      member(5, {8}, std::nullopt, 3, 100),     // rank 8 of a world of 8 cannot be
      member(6, {}, std::nullopt, 0, 100),      // no ranks: never in a job
  });
  ASSERT_EQ(job_runs(jobs), (std::vector<std::vector<int64_t>>{{1, 3, 4}}));
  EXPECT_EQ(jobs[0].world_size, 8);
  EXPECT_EQ(jobs[0].missing_ranks, (std::vector<int64_t>{6, 7}));
  EXPECT_DOUBLE_EQ(jobs[0].overlap_start_unix, 3);
  EXPECT_DOUBLE_EQ(jobs[0].overlap_end_unix, 100);
}

TEST(JobGrouping, EveryMemberMustOverlapEveryOther) {
  // 1 and 2 overlap, 2 and 3 overlap, 1 and 3 do not: 3 is not in 1's job, and alone is none.
  EXPECT_EQ(job_runs(group_jobs({member(1, {0}, 3, 0, 10), member(2, {1}, 3, 9, 20), member(3, {2}, 3, 15, 25)})),
            (std::vector<std::vector<int64_t>>{{1, 2}}));
  // Touching ends share no time.
  EXPECT_TRUE(group_jobs({member(1, {0}, 2, 0, 10), member(2, {1}, 2, 10, 20)}).empty());
  // Taken in order of start, whatever the run ids.
  EXPECT_EQ(job_runs(group_jobs({member(7, {1}, 2, 5, 20), member(3, {0}, 2, 0, 10)})),
            (std::vector<std::vector<int64_t>>{{3, 7}}));
}

TEST(JobGrouping, RanksText) {
  EXPECT_EQ(ranks_text({0, 1, 2, 3, 6}), "0-3, 6");
  EXPECT_EQ(ranks_text({5}), "5");
  EXPECT_EQ(ranks_text({}), "");
}

}  // namespace
}  // namespace ingero::reports
