// SPDX-License-Identifier: Apache-2.0
#include "reports/text/interval_text.h"

#include <fmt/format.h>

namespace ingero::reports {
namespace {

// 0.978515625 -> "97.9" (a coverage found); 0.975 -> "97.5" (a coverage asked for).
std::string percent(double fraction) { return fmt::format("{:.1f}", 100 * fraction); }
std::string asked_percent(double fraction) { return fmt::format("{:.4g}", 100 * fraction); }

}  // namespace

std::string interval_method_text(const Interval& interval) {
  const IntervalMethod& m = interval.method;
  switch (m.kind) {
    case IntervalMethod::Kind::no_samples:
      return "no samples";
    case IntervalMethod::Kind::single_sample:
      return "a single sample: no spread to estimate, 0.0 % coverage";
    case IntervalMethod::Kind::min_max:
      return fmt::format("min..max of {} samples, {} % coverage, below the {} % asked for", m.samples,
                         percent(interval.confidence), asked_percent(m.asked));
    case IntervalMethod::Kind::order_statistics:
      return fmt::format("order statistics x({})..x({}) of {} samples, {} % coverage", m.k, m.samples + 1 - m.k,
                         m.samples, percent(interval.confidence));
    case IntervalMethod::Kind::bootstrap:
      return fmt::format(
          "percentile bootstrap of the ratio of medians, {} resamples of {} and {} samples, nominal {} % coverage",
          m.resamples, m.samples, m.samples_after, asked_percent(m.asked));
  }
  return "";
}

}  // namespace ingero::reports
