// SPDX-License-Identifier: Apache-2.0
// An interval's method in words, with its coverage: "order statistics x(2)..x(9) of 10 samples,
// 97.9 % coverage", "percentile bootstrap of the ratio of medians, ...".
#pragma once

#include <string>

#include "reports/analysis/significance.h"

namespace ingero::reports {

std::string interval_method_text(const Interval& interval);

}  // namespace ingero::reports
