// SPDX-License-Identifier: Apache-2.0
#include "reports/render/json_values.h"

#include <cmath>

#include "reports/render/json_shape.h"
#include "reports/text/interval_text.h"

namespace ingero::reports {
namespace {

using nlohmann::json;

const JsonShape<LatencyStats>& latency_shape() {
  using namespace json_schema;
  using L = LatencyStats;
  static const JsonShape<L> shape("", {{"count", integer("timed calls or events"), member(&L::count)},
                                       {"p50_ns", integer(), member(&L::p50_ns)},
                                       {"p90_ns", integer(), member(&L::p90_ns)},
                                       {"p99_ns", integer(), member(&L::p99_ns)},
                                       {"max_ns", integer(), member(&L::max_ns)},
                                       {"total_ns", integer(), member(&L::total_ns)}});
  return shape;
}

const JsonShape<BucketBounds>& bucket_shape() {
  using namespace json_schema;
  static const JsonShape<BucketBounds> shape(
      "", {{"lower_us", number(), member(&BucketBounds::lower)}, {"upper_us", number(), member(&BucketBounds::upper)}});
  return shape;
}

const JsonShape<Interval>& interval_shape() {
  using namespace json_schema;
  static const JsonShape<Interval> shape("confidence interval; null when too few samples",
                                         {{"low", number(), member(&Interval::low)},
                                          {"high", number(), member(&Interval::high)},
                                          {"confidence", number(), member(&Interval::confidence)},
                                          {"method", string(), [](const Interval& i) { return nlohmann::json(interval_method_text(i)); }}});
  return shape;
}

}  // namespace

json latency_json(const LatencyStats& stats) { return latency_shape().write(stats); }
json latency_schema(const std::string& description) { return latency_shape().schema(description); }

json bucket_json(const std::optional<BucketBounds>& bounds) { return bounds ? bucket_shape().write(*bounds) : json(); }
json bucket_schema(const std::string& what) {
  return json_schema::nullable(
      bucket_shape().schema(what + " (log2 histogram bucket holding it, µs; null when nothing was recorded)"));
}

json interval_json(const Interval& interval) {
  return std::isnan(interval.low) ? json() : interval_shape().write(interval);
}
json interval_schema() { return json_schema::nullable(interval_shape().schema()); }

}  // namespace ingero::reports
