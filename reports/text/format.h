// SPDX-License-Identifier: Apache-2.0
// Human-readable numbers for the terminal renderers: durations, sizes, counts, shares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "reports/data/count_estimate.h"

namespace ingero::reports {

std::string format_duration_ns(double ns);       // "25 µs", "42 ms", "1.23 s"
std::string format_seconds(double seconds);      // same scale choice, from seconds
std::string format_count(int64_t count);         // "1,880"
std::string format_bytes(double bytes);          // "2.8 GB", "512 KiB" uses decimal units: "512 kB"
std::string format_percent(double fraction);     // 0.213 -> "21.3 %"
std::string format_ratio(double ratio);          // 1638.2 -> "1,638×", 3.14 -> "3.1×"
// A call count: "1,880" when exact; "≈ 1,210,000 [1,190,000, 1,230,000]" when estimated; in a table
// column, "≈ 1,210,000". Where only a lower bound is known: "at least 9,838", in a table "≥ 9,838".
std::string format_calls(int64_t calls, const std::optional<CountEstimate>& estimate, bool with_interval = true);
// Why a count is an estimate: "sampled 10 % of the time"; empty when exact.
std::string sampled_share_text(const std::optional<CountEstimate>& estimate);

}  // namespace ingero::reports
