// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/significance.h"
#include "reports/text/interval_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ingero::reports {
namespace {

TEST(Median, OddAndEvenSets) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({5.5}), 5.5);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({2, 1}), 1.5);
  EXPECT_DOUBLE_EQ(median({7, 7, 1, 9, 7, 2}), 7);
}

TEST(Median, EmptyIsNaN) { EXPECT_TRUE(std::isnan(median({}))); }

TEST(Interval, WidthRatioAndOverlap) {
  const Interval a{9, 11, 0.9, {}};
  EXPECT_DOUBLE_EQ(a.width_ratio(10), 0.2);
  EXPECT_TRUE(a.overlaps(Interval{11, 12, 0.9, {}}));  // closed: a shared end counts
  EXPECT_TRUE(a.overlaps(Interval{9.5, 10, 0.9, {}}));
  EXPECT_TRUE(Interval({8, 9.5, 0.9, {}}).overlaps(a));
  EXPECT_FALSE(a.overlaps(Interval{11.01, 12, 0.9, {}}));
  EXPECT_FALSE(Interval({1, 8.99, 0.9, {}}).overlaps(a));
}

// Coverage of [x(k), x(n+1-k)] is 1 - 2·P(Bin(n, 1/2) <= k-1); the sums below are of C(n, i) / 2^n.
TEST(MedianInterval, TenSamplesAtNinetyPercentUseSecondOrderStatistics) {
  // P(B <= 0) = 1/1024, P(B <= 1) = 11/1024, P(B <= 2) = 56/1024:
  // k = 2 covers 1 - 22/1024 = 0.9785; k = 3 covers 1 - 112/1024 = 0.8906 < 0.90.
  const Interval i = median_interval({10, 3, 7, 1, 9, 2, 8, 4, 6, 5}, 0.90);
  EXPECT_EQ(i.low, 2);
  EXPECT_EQ(i.high, 9);
  EXPECT_NEAR(i.confidence, 1 - 22.0 / 1024, 1e-12);
  EXPECT_EQ(interval_method_text(i), "order statistics x(2)..x(9) of 10 samples, 97.9 % coverage");
}

TEST(MedianInterval, TenSamplesAtNinetyNinePercentWidenToTheExtremes) {
  // k = 2 (0.9785) falls short of 0.99; k = 1 covers 1 - 2/1024 = 0.998.
  const Interval i = median_interval({10, 3, 7, 1, 9, 2, 8, 4, 6, 5}, 0.99);
  EXPECT_EQ(i.low, 1);
  EXPECT_EQ(i.high, 10);
  EXPECT_NEAR(i.confidence, 1 - 2.0 / 1024, 1e-12);
}

TEST(MedianInterval, TwentySamples) {
  // C(20, i) for i = 0..6: 1, 20, 190, 1140, 4845, 15504, 38760; P(B <= 5) = 21700/2^20, P(B <= 6) = 60460/2^20.
  // k = 6 covers 1 - 2·21700/2^20 = 0.9586; k = 7 covers 1 - 2·60460/2^20 = 0.8847 < 0.90.
  std::vector<double> samples;
  for (int v = 20; v >= 1; --v) samples.push_back(v * 0.5);
  const Interval i = median_interval(samples, 0.90);
  EXPECT_EQ(i.low, 3.0);   // x(6)
  EXPECT_EQ(i.high, 7.5);  // x(15)
  EXPECT_NEAR(i.confidence, 1 - 2 * 21700.0 / 1048576, 1e-12);
  EXPECT_EQ(interval_method_text(i), "order statistics x(6)..x(15) of 20 samples, 95.9 % coverage");
}

TEST(MedianInterval, FiveSamplesReachNinetyPercentOnlyWithTheExtremes) {
  // k = 1 covers 1 - 2/32 = 0.9375; k = 2 covers 1 - 2·6/32 = 0.625.
  const Interval i = median_interval({1.3, 1.1, 1.5, 1.2, 1.4}, 0.90);
  EXPECT_EQ(i.low, 1.1);
  EXPECT_EQ(i.high, 1.5);
  EXPECT_NEAR(i.confidence, 0.9375, 1e-12);
  EXPECT_EQ(interval_method_text(i), "order statistics x(1)..x(5) of 5 samples, 93.8 % coverage");
}

TEST(MedianInterval, SmallSampleFallsBackToMinMaxWithItsRealCoverage) {
  // n = 3: [min, max] covers 1 - 2^(1-3) = 0.75, below the 0.90 asked for.
  const Interval three = median_interval({2.0, 3.0, 1.0}, 0.90);
  EXPECT_EQ(three.low, 1.0);
  EXPECT_EQ(three.high, 3.0);
  EXPECT_NEAR(three.confidence, 0.75, 1e-12);
  EXPECT_EQ(interval_method_text(three), "min..max of 3 samples, 75.0 % coverage, below the 90 % asked for");

  // n = 5 at 95 %: the extremes cover 0.9375 < 0.95.
  const Interval five = median_interval({1.3, 1.1, 1.5, 1.2, 1.4}, 0.95);
  EXPECT_EQ(five.low, 1.1);
  EXPECT_EQ(five.high, 1.5);
  EXPECT_NEAR(five.confidence, 0.9375, 1e-12);
  EXPECT_EQ(interval_method_text(five), "min..max of 5 samples, 93.8 % coverage, below the 95 % asked for");
}

TEST(MedianInterval, SingleSampleHasNoCoverage) {
  const Interval i = median_interval({4.2});
  EXPECT_EQ(i.low, 4.2);
  EXPECT_EQ(i.high, 4.2);
  EXPECT_EQ(i.confidence, 0);
}

TEST(MedianInterval, NoSamplesGiveTheEmptyInterval) {
  const Interval i = median_interval({});
  EXPECT_TRUE(std::isnan(i.low));
  EXPECT_TRUE(std::isnan(i.high));
  EXPECT_EQ(i.confidence, 0);
  EXPECT_EQ(interval_method_text(i), "no samples");
  EXPECT_FALSE(i.overlaps(Interval{0, 100, 0.9, {}}));
  EXPECT_FALSE(i.overlaps(i));
}

// The stated coverage must hold for skewed data: lognormal(0, 1) has median exactly 1.
TEST(MedianInterval, CoversTheTrueMedianOfASkewedDistributionAsOftenAsStated) {
  std::mt19937_64 rng(20240611);
  std::lognormal_distribution<double> epoch(0.0, 1.0);
  const int sets = 2000;
  int covered = 0;
  double stated = 0;
  for (int s = 0; s < sets; ++s) {
    std::vector<double> samples(10);
    for (double& v : samples) v = epoch(rng);
    const Interval i = median_interval(samples, 0.90);
    stated = i.confidence;
    covered += i.low <= 1.0 && 1.0 <= i.high;
  }
  const double rate = static_cast<double>(covered) / sets;
  EXPECT_NEAR(stated, 0.9785, 1e-4);
  EXPECT_GE(rate, 0.88);
  // Binomial standard error at 2000 sets is 0.0032; four of them either side.
  EXPECT_NEAR(rate, stated, 0.013);
}

const std::vector<double> kEpochs = {10.2, 9.1, 11.8, 10.5, 12.9, 9.6, 10.0, 11.1, 13.4, 9.9};

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

TEST(RatioOfMedians, IdenticalGroupsContainOne) {
  const RatioEstimate r = ratio_of_medians(kEpochs, kEpochs);
  EXPECT_DOUBLE_EQ(r.ratio, 1.0);
  EXPECT_LT(r.interval.low, 1.0);
  EXPECT_GT(r.interval.high, 1.0);
  EXPECT_EQ(r.interval.confidence, 0.95);
  EXPECT_EQ(interval_method_text(r.interval),
            "percentile bootstrap of the ratio of medians, 4000 resamples of 10 and 10 samples, nominal 95 % coverage");
}

TEST(RatioOfMedians, DoubledGroupGivesTwoAndExcludesOnePointFive) {
  const RatioEstimate r = ratio_of_medians(kEpochs, scaled(kEpochs, 2.0));
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_LT(r.interval.low, 2.0);
  EXPECT_GT(r.interval.high, 2.0);
  EXPECT_GT(r.interval.low, 1.5);
  EXPECT_LT(r.interval.high, 2.5);
}

TEST(RatioOfMedians, SameSeedSameIntervalOtherSeedClose) {
  const auto after = scaled(kEpochs, 1.3);
  const RatioEstimate a = ratio_of_medians(kEpochs, after, 0.95, 4000, 7);
  const RatioEstimate b = ratio_of_medians(kEpochs, after, 0.95, 4000, 7);
  const RatioEstimate c = ratio_of_medians(kEpochs, after, 0.95, 4000, 8);
  EXPECT_EQ(a.interval.low, b.interval.low);
  EXPECT_EQ(a.interval.high, b.interval.high);
  EXPECT_EQ(a.ratio, c.ratio);
  EXPECT_NEAR(a.interval.low, c.interval.low, 0.03 * a.ratio);
  EXPECT_NEAR(a.interval.high, c.interval.high, 0.03 * a.ratio);
}

TEST(RatioOfMedians, NarrowerAtLowerConfidence) {
  const auto after = scaled(kEpochs, 1.3);
  const Interval wide = ratio_of_medians(kEpochs, after, 0.95).interval;
  const Interval narrow = ratio_of_medians(kEpochs, after, 0.50).interval;
  EXPECT_LE(wide.low, narrow.low);
  EXPECT_GE(wide.high, narrow.high);
  EXPECT_LT(narrow.high - narrow.low, wide.high - wide.low);
}

TEST(RatioOfMedians, EmptyGroupOrNoResamplesGiveNaN) {
  EXPECT_TRUE(std::isnan(ratio_of_medians({}, kEpochs).ratio));
  EXPECT_TRUE(std::isnan(ratio_of_medians(kEpochs, {}).interval.low));
  const RatioEstimate none = ratio_of_medians(kEpochs, kEpochs, 0.95, 0);
  EXPECT_TRUE(std::isnan(none.ratio));
  EXPECT_EQ(interval_method_text(none.interval), "no samples");
}

// Expected p-values below come from counting all C(n1+n2, n1) rank subsets in Python
// (itertools.combinations), or from the normal formula with tie and continuity correction
// written there from rank sums, independently of this implementation.

TEST(MannWhitney, SeparatedThreeByThreeIsExact) {
  // Only 2 of the C(6, 3) = 20 arrangements are as extreme: p = 2/20.
  const MannWhitney m = mann_whitney({1, 2, 3}, {4, 5, 6});
  EXPECT_EQ(m.u, 0);
  EXPECT_TRUE(m.exact);
  EXPECT_NEAR(m.p_value, 0.1, 1e-12);
}

TEST(MannWhitney, ExactSmallCasesMatchFullEnumeration) {
  const MannWhitney m = mann_whitney({1.1, 2.5, 3.2, 7.0, 8.1}, {2.0, 4.4, 5.3, 6.6, 9.9, 10.5});
  EXPECT_EQ(m.u, 10);
  EXPECT_TRUE(m.exact);
  EXPECT_NEAR(m.p_value, 0.42857142857142855, 1e-12);  // 198 / 462

  const MannWhitney e = mann_whitney({10.2, 11.5, 9.8, 12.1, 10.9, 11.1, 9.5, 10.0},
                                     {11.9, 12.4, 10.7, 13.0, 12.2, 11.7, 12.8, 13.5, 10.4});
  EXPECT_EQ(e.u, 10);
  EXPECT_TRUE(e.exact);
  EXPECT_NEAR(e.p_value, 0.011106540518305225, 1e-12);
}

TEST(MannWhitney, ExactUpToTwentyByTwenty) {
  std::vector<double> low, high;
  for (int i = 0; i < 20; ++i) {
    low.push_back(1 + i);
    high.push_back(100 + i);
  }
  const MannWhitney m = mann_whitney(low, high);
  EXPECT_EQ(m.u, 0);
  EXPECT_TRUE(m.exact);
  EXPECT_NEAR(m.p_value, 2 / 137846528820.0, 1e-22);  // 2 / C(40, 20)

  high.push_back(121);  // 20 × 21 pairs: past the exact limit
  EXPECT_FALSE(mann_whitney(low, high).exact);
}

TEST(MannWhitney, InterleavedGroupsAreNotDifferent) {
  const MannWhitney m = mann_whitney({1, 4, 5, 8}, {2, 3, 6, 7});
  EXPECT_EQ(m.u, 8);  // n1·n2 / 2
  EXPECT_DOUBLE_EQ(m.p_value, 1.0);
}

TEST(MannWhitney, TiesCountHalfAndUseTheCorrectedNormalApproximation) {
  // U = 0 (for 1) + 2·0.5 (2s tie the 2) + 1 + 2·0.5 (3 beats 2, ties two 3s) + 3 (4) = 6.
  // Tie term: 3^3-3 (three 2s) + 3^3-3 (three 3s) + 2^3-2 (two 6s) = 54.
  const MannWhitney m = mann_whitney({1, 2, 2, 3, 4}, {2, 3, 3, 5, 6, 6});
  EXPECT_EQ(m.u, 6);
  EXPECT_FALSE(m.exact);
  EXPECT_NEAR(m.p_value, 0.11304997885632297, 1e-12);
}

TEST(MannWhitney, AllValuesTiedGiveOne) {
  const MannWhitney m = mann_whitney({5, 5, 5}, {5, 5});
  EXPECT_EQ(m.u, 3);
  EXPECT_FALSE(m.exact);
  EXPECT_EQ(m.p_value, 1.0);
}

const std::vector<double> kLargeA = {10.0,   10.226, 10.452, 10.613, 10.839, 11.0,   11.226, 11.452, 11.613,
                                     11.839, 12.0,   12.226, 12.452, 12.613, 12.839, 13.0,   13.226, 13.452,
                                     13.613, 13.839, 14.0,   14.226, 14.452, 14.613, 14.839};
const std::vector<double> kLargeB = {11.05,  11.313, 11.576, 11.762, 12.025, 12.211, 12.474, 12.66,  12.923, 13.186,
                                     13.372, 13.635, 13.821, 14.084, 14.27,  14.533, 14.796, 14.982, 15.245, 15.431};

TEST(MannWhitney, LargeSampleUsesTheNormalApproximation) {
  const MannWhitney m = mann_whitney(kLargeA, kLargeB);  // 25 × 20 = 500 pairs, no ties
  EXPECT_EQ(m.u, 170);
  EXPECT_FALSE(m.exact);
  EXPECT_NEAR(m.p_value, 0.0693844912212876, 1e-12);

  std::vector<double> c, d;  // integers with many ties
  for (int i = 0; i < 30; ++i) c.push_back((i * 7) % 13);
  for (int i = 0; i < 24; ++i) d.push_back((i * 5) % 11 + 2);
  const MannWhitney t = mann_whitney(c, d);
  EXPECT_EQ(t.u, 301.5);
  EXPECT_FALSE(t.exact);
  EXPECT_NEAR(t.p_value, 0.3111549303067781, 1e-12);
}

TEST(MannWhitney, SwappingGroupsMirrorsUAndKeepsP) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> cases = {
      {{1, 2, 3}, {4, 5, 6}},
      {{1.1, 2.5, 3.2, 7.0, 8.1}, {2.0, 4.4, 5.3, 6.6, 9.9, 10.5}},
      {{1, 2, 2, 3, 4}, {2, 3, 3, 5, 6, 6}},
      {kLargeA, kLargeB},
  };
  for (const auto& [a, b] : cases) {
    const MannWhitney ab = mann_whitney(a, b);
    const MannWhitney ba = mann_whitney(b, a);
    EXPECT_EQ(ba.u, static_cast<double>(a.size() * b.size()) - ab.u);
    EXPECT_NEAR(ba.p_value, ab.p_value, 1e-12);
    EXPECT_EQ(ba.exact, ab.exact);
  }
}

TEST(MannWhitney, EmptyGroupGivesNoEvidence) {
  const MannWhitney m = mann_whitney({}, {1, 2});
  EXPECT_EQ(m.u, 0);
  EXPECT_EQ(m.p_value, 1.0);
}

}  // namespace
}  // namespace ingero::reports
