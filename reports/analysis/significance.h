// SPDX-License-Identifier: Apache-2.0
// Statistics behind every noise-aware decision (sweep repeats, a recommendation's
// speed-up, the regression gate). Run-to-run noise on the benchmark machines reaches
// ±30 %, and samples are small (3-20 epoch times), so every statistic here is
// distribution-free or resampling-based and states its own coverage.
//
// Inputs are epoch times: finite, positive, NaN-free. Nothing here validates that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ingero::reports {

// Mean of the two middle values for even n. Empty input gives NaN.
double median(std::vector<double> values);

// How an interval was found, with the numbers that say so (reports/text/interval_text words it).
struct IntervalMethod {
  enum class Kind {
    no_samples,
    single_sample,     // one sample: no spread to estimate
    min_max,           // [min, max], whose coverage falls short of what was asked
    order_statistics,  // [x(k), x(n+1-k)]
    bootstrap,         // percentile bootstrap of a ratio of medians
  };
  Kind kind = Kind::no_samples;
  size_t samples = 0;        // n (bootstrap: the first group's)
  size_t samples_after = 0;  // bootstrap: the second group's
  size_t k = 0;              // order statistics: the lower rank
  int resamples = 0;         // bootstrap
  double asked = 0;          // the confidence asked for
};

struct Interval {
  double low = 0, high = 0;
  double confidence = 0;  // actual coverage; may be below what was asked for (small n)
  IntervalMethod method;
  double width_ratio(double center) const;  // (high - low) / center
  // Closed intervals; an empty interval (NaN bounds) overlaps nothing.
  bool overlaps(const Interval& other) const;
};

// Distribution-free interval for the median from order statistics: [x(k), x(n+1-k)]
// with the largest k whose coverage 1 - 2·P(Bin(n, 1/2) <= k-1) is >= `confidence`.
// When even [min, max] falls short, returns [min, max] with its real coverage
// 1 - 2^(1-n) (so n = 1 gives low = high = the value, coverage 0).
// n = 0 gives the empty interval: NaN bounds, coverage 0, method "no samples".
Interval median_interval(std::vector<double> samples, double confidence = 0.90);

struct RatioEstimate {
  double ratio = 1;   // median(after) / median(before)
  Interval interval;  // confidence is the nominal one: a bootstrap has no exact coverage
};

// Percentile bootstrap of median(after) / median(before): each group is resampled
// independently with replacement `resamples` times from std::mt19937_64(seed).
// Indices are drawn without std::uniform_int_distribution, whose output differs
// between standard libraries, so a seed gives the same interval everywhere.
// With 3-5 samples per group the resampled medians take few distinct values and
// the interval is coarse and tends to undercover.
// An empty group, or resamples < 1, gives ratio NaN and the empty interval.
RatioEstimate ratio_of_medians(const std::vector<double>& before, const std::vector<double>& after,
                               double confidence = 0.95, int resamples = 4000, uint64_t seed = 1);

struct MannWhitney {
  double u = 0;        // pairs (a_i, b_j) with a_i > b_j, plus 1/2 for each tie
  double p_value = 1;  // two-sided
  bool exact = false;  // true: counted over all rank arrangements; false: normal approximation
};

// Largest n1·n2 for which the p-value is counted exactly (20 × 20 epochs).
inline constexpr int kMannWhitneyExactMaxPairs = 400;

// Two-sided Mann-Whitney U test of `a` against `b`. Exact when there are no ties and
// n1·n2 <= kMannWhitneyExactMaxPairs; otherwise the normal approximation with tie and
// continuity correction. An empty group gives U = 0, p = 1.
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ingero::reports
