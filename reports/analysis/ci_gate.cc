// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/ci_gate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>


namespace ingero::reports {

namespace {

using nlohmann::json;

constexpr const char* kBaselineSchema = "ingero-bench/ci-baseline";

Error bad_baseline(const std::string& path, const std::string& what) {
  return Error::bad_input(fmt::format("{} is not a usable CI baseline: {}", path, what),
                          "re-create it with ingero-bench ci --suite FILE --baseline FILE --update-baseline");
}

GateResult judge(const std::string& label, std::vector<double> base, std::vector<double> now, const GateRule& rule) {
  GateResult r{label, std::move(base), std::move(now), GateVerdict::missing, std::nullopt, std::nullopt};
  if (r.current.empty()) return r;
  if (r.baseline.empty()) {
    r.verdict = GateVerdict::new_config;
    return r;
  }
  r.slowdown = ratio_of_medians(r.baseline, r.current, rule.confidence);
  r.test = mann_whitney(r.current, r.baseline);
  r.verdict = gate_verdict(*r.slowdown, rule);
  return r;
}

}  // namespace

GateVerdict gate_verdict(const RatioEstimate& slowdown, const GateRule& rule) {
  const Interval& in = slowdown.interval;
  if (in.low > 1 + rule.threshold) return GateVerdict::regression;
  if (in.high < 1 / (1 + rule.threshold)) return GateVerdict::improvement;
  return GateVerdict::unchanged;
}

const char* gate_verdict_name(GateVerdict verdict) {
  switch (verdict) {
    case GateVerdict::regression: return "regression";
    case GateVerdict::improvement: return "improvement";
    case GateVerdict::new_config: return "new";
    case GateVerdict::missing: return "missing";
    case GateVerdict::unchanged: break;
  }
  return "unchanged";
}

bool fails_gate(GateVerdict verdict) { return verdict == GateVerdict::regression || verdict == GateVerdict::missing; }

Result<CiBaseline> ci_baseline_from_json(const json& doc, const std::string& path) {
  if (!doc.is_object() || doc.value("schema", "") != kBaselineSchema)
    return bad_baseline(path, fmt::format("its \"schema\" is not \"{}\"", kBaselineSchema));
  CiBaseline b;
  b.suite = doc.value("suite", "");
  b.machine = doc.value("machine", json::object());
  const json configs = doc.value("configs", json::object());
  if (!configs.is_object()) return bad_baseline(path, "\"configs\" is not an object");
  for (const auto& [label, entry] : configs.items()) {
    const json epochs = entry.is_object() ? entry.value("epoch_seconds", json()) : json();
    if (!epochs.is_array()) return bad_baseline(path, fmt::format("\"{}\" has no epoch_seconds list", label));
    for (const json& v : epochs) {
      if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
        return bad_baseline(path, fmt::format("\"{}\" holds a value that is not a positive time", label));
      b.epoch_seconds[label].push_back(v.get<double>());
    }
  }
  return b;
}

json to_json(const CiBaseline& b) {
  json configs = json::object();
  for (const auto& [label, epochs] : b.epoch_seconds) configs[label] = {{"epoch_seconds", epochs}};
  return {{"schema", kBaselineSchema}, {"version", 1}, {"suite", b.suite}, {"machine", b.machine},
          {"configs", configs}};
}

std::string machine_kind(const json& m) {
  if (!m.is_object()) return "unknown machine";
  const json gpu = m.value("gpu", json());
  return fmt::format("{}, {} cores, {}", m.value("cpu_model", std::string("?")), m.value("cpu_count", 0),
                     gpu.is_string() ? gpu.get<std::string>() : std::string("no GPU"));
}

bool GateReport::failed() const {
  return std::any_of(results.begin(), results.end(),
                     [](const GateResult& r) { return fails_gate(r.verdict); });
}

GateReport gate(const std::string& suite, const std::vector<std::string>& order, const CiBaseline& baseline,
                const std::map<std::string, std::vector<double>>& current, const json& machine, const GateRule& rule) {
  GateReport report{suite, rule, {}, std::nullopt};
  if (machine_kind(baseline.machine) != machine_kind(machine))
    report.other_machine = MachineMismatch{machine_kind(baseline.machine), machine_kind(machine)};
  for (const std::string& label : order) {
    auto base = baseline.epoch_seconds.find(label);
    auto now = current.find(label);
    report.results.push_back(judge(label, base == baseline.epoch_seconds.end() ? std::vector<double>{} : base->second,
                                   now == current.end() ? std::vector<double>{} : now->second, rule));
  }
  return report;
}

}  // namespace ingero::reports
