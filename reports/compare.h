// SPDX-License-Identifier: Apache-2.0
// compare RUN_A RUN_B: timings side by side, trace signatures, and the epoch-time
// difference decomposed into waiting (by cause), compute and the rest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/explain.h"

namespace ingero::reports {

struct CompareRow {
  std::string name;
  std::string unit;  // s | ns | count | bytes | share | GB/s | samples/s | µs
  std::optional<double> a;
  std::optional<double> b;
  std::optional<double> ratio() const;  // b / a
};

struct ComponentRow {
  std::string name;  // "waiting for data", "  workers on CPU ...", "compute", "other"
  bool part_of_wait = false;
  double a_s = 0;
  double b_s = 0;
  double delta_s() const { return b_s - a_s; }
  double share_of_delta = 0;  // of the total difference
};

struct CompareReport {
  RunHeader a;
  RunHeader b;
  std::vector<CompareRow> timings;
  std::vector<CompareRow> signatures;
  std::string basis;  // "per measured epoch" | "whole run"
  double total_a_s = 0;
  double total_b_s = 0;
  std::vector<ComponentRow> components;
  std::vector<std::string> explanation;
};

CompareReport make_compare_report(const RunAnalysis& a, const RunAnalysis& b);

}  // namespace ingero::reports
