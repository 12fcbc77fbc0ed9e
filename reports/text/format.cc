// SPDX-License-Identifier: Apache-2.0
#include "reports/text/format.h"

#include <cmath>

#include <fmt/format.h>

namespace ingero::reports {

std::string format_duration_ns(double ns) {
  const double magnitude = std::fabs(ns);
  if (magnitude >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (magnitude >= 1e3) return fmt::format("{:.3g} µs", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string format_seconds(double seconds) { return format_duration_ns(seconds * 1e9); }

std::string format_count(int64_t count) {
  std::string digits = std::to_string(count < 0 ? -count : count);
  std::string out;
  const int lead = static_cast<int>(digits.size()) % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (static_cast<int>(i) - lead) % 3 == 0) out += ',';
    out += digits[i];
  }
  return count < 0 ? "-" + out : out;
}

std::string format_calls(int64_t calls, const std::optional<CountEstimate>& estimate, bool with_interval) {
  if (!estimate) return format_count(calls);
  if (estimate->lower_bound_only()) return (with_interval ? "at least " : "≥ ") + format_count(estimate->low);
  if (!with_interval) return "≈ " + format_count(estimate->calls);
  return "≈ " + format_count(estimate->calls) + " [" + format_count(estimate->low) + ", " +
         (estimate->high ? format_count(*estimate->high) : std::string("—")) + "]";
}

std::string sampled_share_text(const std::optional<CountEstimate>& estimate) {
  if (!estimate) return {};
  return "sampled " + format_percent(estimate->duty_share) + " of the time";
}

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1000.0 && unit < 4) {
    bytes /= 1000.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, units[unit]);
}

std::string format_percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }

std::string format_ratio(double ratio) {
  if (ratio >= 100.0) return format_count(static_cast<int64_t>(std::llround(ratio))) + "×";
  return fmt::format("{:.3g}×", ratio);
}

}  // namespace ingero::reports
