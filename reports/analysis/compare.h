// SPDX-License-Identifier: Apache-2.0
// compare RUN_A RUN_B: timings side by side, trace signatures, and the epoch-time
// difference decomposed into waiting (by cause), compute and the rest. Numbers and kinds only:
// the words (the basis, each component's name, the explanation) come from reports/text/compare_text.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/run_analysis.h"

namespace ingero::reports {

struct CompareRow {
  std::string name;
  std::string unit;  // s | ns | count | bytes | share | GB/s | samples/s | µs
  std::optional<double> a;
  std::optional<double> b;
  std::optional<double> ratio() const;  // b / a
};

// How the two runs' times are split: per measured epoch when both have result records, else over
// the whole run from the batch events.
enum class CompareBasis { per_epoch, whole_run };

enum class ComponentKind {
  waiting,     // the main loop waiting for data
  wait_cause,  //   the part of it one cause overlapped
  compute,     // copying to the device and running the model
  other,       // the rest: loop overhead, epoch set-up
};

// Components that moved the time by less than this share of the difference are not explained.
inline constexpr double kExplainedShare = 0.05;

struct ComponentRow {
  ComponentKind kind = ComponentKind::other;
  Cause cause;                     // wait_cause: which
  bool run_has_producers = false;  // wait_cause: whether the run that names it had producer threads
  double a_s = 0;
  double b_s = 0;
  double delta_s() const { return b_s - a_s; }
  double share_of_delta = 0;  // of the total difference
  bool part_of_wait() const { return kind == ComponentKind::wait_cause; }
};

struct CompareReport {
  RunHeader a;
  RunHeader b;
  std::vector<CompareRow> timings;
  std::vector<CompareRow> signatures;
  CompareBasis basis = CompareBasis::whole_run;
  double total_a_s = 0;
  double total_b_s = 0;
  std::vector<ComponentRow> components;
  // The components that explain the difference (at least kExplainedShare of it), largest change
  // first; empty unless comparable().
  std::vector<size_t> explained;
  bool comparable() const { return total_a_s > 0 && total_b_s > 0; }
};

CompareReport make_compare_report(const RunAnalysis& a, const RunAnalysis& b);

}  // namespace ingero::reports
