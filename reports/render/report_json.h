// SPDX-License-Identifier: Apache-2.0
// JSON renderings of the report structs (the same structs the text renderer prints).
#pragma once

#include <nlohmann/json.hpp>

#include "reports/analysis/compare.h"
#include "reports/documents/explain.h"
#include "reports/analysis/recommend.h"
#include "reports/documents/report_doc.h"

namespace ingero::reports {

nlohmann::json to_json(const ChainThresholds& thresholds);
nlohmann::json to_json(const ChainEvidence& evidence);
nlohmann::json to_json(const CausalChain& chain, const ChainWords& words);
// A chain with its words, as one causal_chains entry.
struct WordedChain {
  const CausalChain& chain;
  const ChainWords& words;
};
// The JSON Schemas of what the writers below write, each from the same list of fields as its
// writer (reports/render/json_shape.h); MCP publishes these.
nlohmann::json causal_chain_schema();
// A run's CPU profile as explain's "profile" and MCP get_profile give it: its top functions per role
// (only `role`'s when set) and rank.
struct ProfileView {
  const std::optional<ProfileAnalysis>& profile;
  bool taken = false;
  size_t top = 10;
  std::string role;  // empty: every role
};
inline constexpr size_t kProfileTopJson = 10;
nlohmann::json to_json(const ProfileView& view);
nlohmann::json profile_schema();
nlohmann::json slow_interval_schema();  // one "slow_intervals" entry
nlohmann::json run_header_schema();
nlohmann::json call_row_schema();  // one "call_latency" entry
nlohmann::json tracing_cost_schema();
nlohmann::json chain_thresholds_schema();
nlohmann::json metrics_schema();
nlohmann::json process_row_schema();  // one "roles" / "processes" entry
nlohmann::json compare_report_schema();
nlohmann::json recommend_report_schema();
nlohmann::json to_json(const CallLatencyRow& row);
nlohmann::json to_json(const std::vector<CallLatencyRow>& rows);
nlohmann::json slow_intervals_json(const ChainAnalysis& analysis);  // explain's "slow_intervals"
nlohmann::json to_json(const ProcessRow& row);
nlohmann::json to_json(const RunMetrics& metrics);
nlohmann::json to_json(const RunHeader& header);
nlohmann::json to_json(const TracingCost& cost);
nlohmann::json to_json(const ExplainReport& report);
nlohmann::json to_json(const CompareReport& report);
nlohmann::json to_json(const RecommendReport& report);
nlohmann::json to_json(const ReportDoc& report);  // ingero-bench report --format json
// Worker health: each finding with its words (explain's "worker_health"), and one finding's schema.
nlohmann::json to_json(const HealthAnalysis& analysis);
nlohmann::json health_finding_schema();

}  // namespace ingero::reports
