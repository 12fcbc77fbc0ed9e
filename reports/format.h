// SPDX-License-Identifier: Apache-2.0
// Human-readable numbers for the terminal renderers: durations, sizes, counts, shares.
#pragma once

#include <cstdint>
#include <string>

namespace ingero::reports {

std::string format_duration_ns(double ns);       // "25 µs", "42 ms", "1.23 s"
std::string format_seconds(double seconds);      // same scale choice, from seconds
std::string format_count(int64_t count);         // "1,880"
std::string format_bytes(double bytes);          // "2.8 GB", "512 KiB" uses decimal units: "512 kB"
std::string format_percent(double fraction);     // 0.213 -> "21.3 %"
std::string format_ratio(double ratio);          // 1638.2 -> "1,638×", 3.14 -> "3.1×"

}  // namespace ingero::reports
