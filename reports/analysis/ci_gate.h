// SPDX-License-Identifier: Apache-2.0
// The performance-regression gate: per configuration, the new repeats against the
// baseline's, by the ratio of medians with a bootstrap interval and a Mann-Whitney test.
// A configuration regresses when the whole interval of the ratio lies above 1 + the
// threshold: even the slowdown's low end exceeds the allowed one, so it is beyond run-to-run
// noise. (An interval merely above 1 failed an unchanged build at 1.115x [1.045, 1.141] with a
// 10 % threshold on a shared machine.) Pure computation; its renderers (reports/render/ci_gate_render.h)
// only format what it returns.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "reports/analysis/significance.h"

namespace ingero::reports {

// The baseline file: per configuration label, one epoch time (the run's median) per repeat.
struct CiBaseline {
  std::string suite;
  nlohmann::json machine;
  std::map<std::string, std::vector<double>> epoch_seconds;
};
Result<CiBaseline> ci_baseline_from_json(const nlohmann::json& doc, const std::string& path);
nlohmann::json to_json(const CiBaseline& baseline);

// "cpu model, N cores, GPU name": two machines of one kind compare; others warn.
std::string machine_kind(const nlohmann::json& machine);

struct GateRule {
  double threshold = 0.10;   // a slowdown must exceed 10 % ...
  double confidence = 0.95;  // ... with its interval wholly above 1.10
};

enum class GateVerdict {
  unchanged,
  regression,
  improvement,
  new_config,  // no baseline yet
  missing,     // no completed repeat in this run
};
const char* gate_verdict_name(GateVerdict verdict);  // "regression", "new", ... as the reports print it
// A regression, or a configuration that was not measured: the gate fails on it.
bool fails_gate(GateVerdict verdict);

// regression when the interval's low end is above 1 + threshold, improvement when its high
// end is below 1 / (1 + threshold), else unchanged.
GateVerdict gate_verdict(const RatioEstimate& slowdown, const GateRule& rule);

struct GateResult {
  std::string label;
  std::vector<double> baseline;
  std::vector<double> current;
  GateVerdict verdict = GateVerdict::missing;
  std::optional<RatioEstimate> slowdown;  // median(current) / median(baseline)
  std::optional<MannWhitney> test;
};

// The baseline's machine and this run's, when they are not of one kind (machine_kind).
struct MachineMismatch {
  std::string baseline;
  std::string current;
};

struct GateReport {
  std::string suite;
  GateRule rule;
  std::vector<GateResult> results;  // in suite order
  std::optional<MachineMismatch> other_machine;  // ratios then compare the machines as much as the builds
  // A regression, or a configuration with no completed repeat: the gate fails.
  bool failed() const;
};

// `order`: the suite's labels; `current`: their new repeats.
GateReport gate(const std::string& suite, const std::vector<std::string>& order, const CiBaseline& baseline,
                const std::map<std::string, std::vector<double>>& current, const nlohmann::json& machine,
                const GateRule& rule);

}  // namespace ingero::reports
