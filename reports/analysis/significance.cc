// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace ingero::reports {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Coverages are sums of binomial terms; a requested 0.9 must not fail against 0.8999999999.
constexpr double kCoverageSlack = 1e-12;

Interval empty_interval() { return Interval{kNaN, kNaN, 0, {}}; }

// Median of `v` without a copy; reorders it.
double median_in_place(std::vector<double>& v) {
  const size_t n = v.size();
  if (n == 0) return kNaN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

// P(Bin(n, 1/2) = i), in log space so that 2^-n cannot underflow for large n.
double binomial_half_pmf(size_t n, size_t i) {
  const auto nd = static_cast<double>(n), id = static_cast<double>(i);
  const double log_choose = std::lgamma(nd + 1) - std::lgamma(id + 1) - std::lgamma(nd - id + 1);
  return std::exp(log_choose - nd * std::log(2.0));
}

// Unbiased index in [0, n) by rejection: portable, unlike std::uniform_int_distribution.
size_t draw_index(std::mt19937_64& rng, size_t n) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - max % n;  // [0, limit) holds a whole number of copies of [0, n)
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return static_cast<size_t>(x % n);
}

double resampled_median(const std::vector<double>& group, std::vector<double>& scratch, std::mt19937_64& rng) {
  scratch.resize(group.size());
  for (double& v : scratch) v = group[draw_index(rng, group.size())];
  return median_in_place(scratch);
}

// Linear interpolation between order statistics (Hyndman-Fan type 7) of sorted values.
double quantile_sorted(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * std::clamp(p, 0.0, 1.0);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// counts[u]: how many of the C(n1+n2, n1) equally likely rank arrangements give U = u.
// They are the coefficients of the Gaussian binomial [n1+n2 choose n1]_q
// = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), each step of which is again a polynomial.
// Doubles are exact here: the largest count allowed (20 × 20) is C(40, 20) < 2^53.
std::vector<double> u_counts(int n1, int n2) {
  std::vector<double> c(static_cast<size_t>(n1 * n2 + n1 + 1), 0.0);
  c[0] = 1;
  const int top = static_cast<int>(c.size()) - 1;
  for (int i = 1; i <= n1; ++i) {
    for (int j = top; j >= n2 + i; --j) c[j] -= c[j - n2 - i];  // times (1 - q^(n2+i))
    for (int j = i; j <= top; ++j) c[j] += c[j - i];            // over (1 - q^i)
  }
  c.resize(static_cast<size_t>(n1 * n2 + 1));
  return c;
}

double exact_p_value(double u, int n1, int n2) {
  const std::vector<double> counts = u_counts(n1, n2);
  double total = 0, at_or_below = 0, at_or_above = 0;
  for (size_t v = 0; v < counts.size(); ++v) {
    total += counts[v];
    if (static_cast<double>(v) <= u) at_or_below += counts[v];
    if (static_cast<double>(v) >= u) at_or_above += counts[v];
  }
  return std::min(1.0, 2 * std::min(at_or_below, at_or_above) / total);
}

// Normal approximation; `tie_term` is the sum of t^3 - t over groups of t tied values.
double normal_p_value(double u, int n1, int n2, double tie_term) {
  const double n = n1 + n2;
  const double mean = n1 * n2 / 2.0;
  const double variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return 1;  // every value tied: no evidence either way
  const double z = (std::abs(u - mean) - 0.5) / std::sqrt(variance);  // continuity correction
  if (z <= 0) return 1;
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2·(1 - Φ(z))
}

double tie_term(std::vector<double> pooled) {
  std::sort(pooled.begin(), pooled.end());
  double term = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j] == pooled[i]) ++j;
    const double t = static_cast<double>(j - i);
    term += t * t * t - t;
    i = j;
  }
  return term;
}

}  // namespace

double median(std::vector<double> values) { return median_in_place(values); }

double Interval::width_ratio(double center) const { return (high - low) / center; }

bool Interval::overlaps(const Interval& other) const { return low <= other.high && other.low <= high; }

Interval median_interval(std::vector<double> samples, double confidence) {
  const size_t n = samples.size();
  if (n == 0) return empty_interval();
  std::sort(samples.begin(), samples.end());
  // Coverage falls as k grows; k <= (n+1)/2 keeps x(k) <= x(n+1-k).
  size_t k = 0;
  double coverage = 0, below_k = 0;  // below_k = P(Bin(n, 1/2) <= k-1)
  for (size_t j = 1; j <= (n + 1) / 2; ++j) {
    below_k += binomial_half_pmf(n, j - 1);
    const double c = 1 - 2 * below_k;
    if (c < confidence - kCoverageSlack) break;
    k = j;
    coverage = c;
  }
  using Kind = IntervalMethod::Kind;
  if (k == 0) {  // even [min, max] falls short
    const double real = 1 - 2 * binomial_half_pmf(n, 0);  // 1 - 2^(1-n)
    return Interval{samples.front(), samples.back(), real,
                    {n == 1 ? Kind::single_sample : Kind::min_max, n, 0, 0, 0, confidence}};
  }
  return Interval{samples[k - 1], samples[n - k], coverage, {Kind::order_statistics, n, 0, k, 0, confidence}};
}

RatioEstimate ratio_of_medians(const std::vector<double>& before, const std::vector<double>& after,
                               double confidence, int resamples, uint64_t seed) {
  if (before.empty() || after.empty() || resamples < 1) return RatioEstimate{kNaN, empty_interval()};
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    const double b = resampled_median(before, scratch, rng);
    ratios.push_back(resampled_median(after, scratch, rng) / b);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  Interval interval{quantile_sorted(ratios, tail), quantile_sorted(ratios, 1 - tail), confidence,
                    {IntervalMethod::Kind::bootstrap, before.size(), after.size(), 0, resamples, confidence}};
  return RatioEstimate{median(after) / median(before), std::move(interval)};
}

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return MannWhitney{};
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  }
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double ties = tie_term(std::move(pooled));
  const int n1 = static_cast<int>(a.size()), n2 = static_cast<int>(b.size());
  const bool exact = ties == 0 && static_cast<long long>(n1) * n2 <= kMannWhitneyExactMaxPairs;
  return MannWhitney{u, exact ? exact_p_value(u, n1, n2) : normal_p_value(u, n1, n2, ties), exact};
}

}  // namespace ingero::reports
