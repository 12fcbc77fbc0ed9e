// SPDX-License-Identifier: Apache-2.0
// The JSON of the small values several reports share (latency percentiles, a histogram bucket, a
// confidence interval), each written and described from one list of fields (reports/render/json_shape.h).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/analysis/significance.h"
#include "reports/analysis/stats.h"

namespace ingero::reports {

template <class T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json latency_json(const LatencyStats& stats);
nlohmann::json latency_schema(const std::string& description);  // what the percentiles are of

// {lower_us, upper_us}, or null when nothing was recorded.
nlohmann::json bucket_json(const std::optional<BucketBounds>& bounds);
nlohmann::json bucket_schema(const std::string& what);  // "run-queue latency p99"

// {low, high, confidence, method}, or null when the interval is empty (too few samples).
nlohmann::json interval_json(const Interval& interval);
nlohmann::json interval_schema();

}  // namespace ingero::reports
