// SPDX-License-Identifier: Apache-2.0
// recommend --json (version 2, a stable contract) and the get_recommendation answer, written and
// described from one list of fields each.
#include "common/trace_contract.h"
#include "reports/render/json_shape.h"
#include "reports/render/json_values.h"
#include "reports/text/recommend_text.h"
#include "reports/render/report_json.h"

namespace ingero::reports {
namespace {

using nlohmann::json;

const JsonShape<ConfigResult>& config_result_shape() {
  using namespace json_schema;
  using C = ConfigResult;
  static const JsonShape<C> shape(
      "", {{"label", string("the sweep point, or the run label"), member(&C::label)},
           {"state", string_enum_of(contract::point_state::kAll), member(&C::state)},
           {"reason", string(), member(&C::reason)},
           {"run_ids", array_of(integer()), member(&C::run_ids)},
           {"config", any("the workload configuration as stored"), member(&C::config_json)},
           {"mode", string(), [](const C& c) { return json(c.config.mode); }},
           {"num_workers", integer(), [](const C& c) { return json(c.config.num_workers); }},
           {"prefetch_factor", integer(), [](const C& c) { return json(c.config.prefetch_factor); }},
           {"pin_memory", boolean(), [](const C& c) { return json(c.config.pin_memory); }},
           {"persistent_workers", boolean(), [](const C& c) { return json(c.config.persistent_workers); }},
           {"shuffle", boolean(), [](const C& c) { return json(c.config.shuffle); }},
           {"cpus", integer("0: not pinned"), [](const C& c) { return json(c.config.cpus); }},
           {"epoch_seconds", array_of(number()), member(&C::epoch_seconds)},
           {"median_s", nullable(number("median epoch time; null when not measured")),
            [](const C& c) { return c.measured() ? json(c.median_s) : json(); }},
           {"interval", interval_schema(), [](const C& c) { return interval_json(c.interval); }},
           {"cores", nullable(integer()), optional_member(&C::cores)},
           {"wait_fraction", nullable(number()), optional_member(&C::wait_fraction)},
           {"runq_p99_bucket_us", bucket_schema("run-queue latency p99"),
            [](const C& c) { return bucket_json(c.runq_p99); }},
           {"flags", array_of(string(), "oversubscribed, high run-queue latency, no shuffle"),
            [](const C& c) { return json(flag_texts(c.flags)); }}});
  return shape;
}

// A point not measured to the end, in the contract's "skipped" list.
const JsonShape<ConfigResult>& skipped_shape() {
  using namespace json_schema;
  using C = ConfigResult;
  static const JsonShape<C> shape("", {{"label", string(), member(&C::label)},
                                       {"state", string(), member(&C::state)},
                                       {"reason", string(), member(&C::reason)}});
  return shape;
}

// One side of the advice as the stable contract gives it: from the interleaved re-runs when the
// sweep made them, else from the search's runs.
struct ContractEntry {
  const ConfigResult& config;
  const std::vector<int64_t>& run_ids;
  double median_s = 0;
};

ContractEntry contract_entry(const ConfigResult& c, const std::optional<Verification>& verification,
                             std::vector<int64_t> Verification::*runs, std::vector<double> Verification::*epochs) {
  if (!verification) return {c, c.run_ids, c.median_s};
  const std::vector<int64_t>& reruns = *verification.*runs;
  return {c, reruns.empty() ? c.run_ids : reruns, median(*verification.*epochs)};
}

const JsonShape<ContractEntry>& contract_entry_shape() {
  using namespace json_schema;
  using E = ContractEntry;
  static const JsonShape<E> shape(
      "", {{"run_id", nullable(integer()),
            [](const E& e) { return e.run_ids.empty() ? json() : json(e.run_ids.front()); }},
           {"label", string(), [](const E& e) { return json(e.config.label); }},
           {"config", any("the workload configuration as stored"), [](const E& e) { return e.config.config_json; }},
           {"median_s", number(), member(&E::median_s)},
           {"interval", interval_schema(), [](const E& e) { return interval_json(e.config.interval); }}});
  return shape;
}

json baseline_json(const RecommendReport& r) {
  return contract_entry_shape().write(
      contract_entry(r.base(), r.verification, &Verification::baseline_runs, &Verification::baseline_epochs));
}

json recommended_json(const RecommendReport& r) {
  return contract_entry_shape().write(
      contract_entry(r.rec(), r.verification, &Verification::recommended_runs, &Verification::recommended_epochs));
}

// The re-runs' ids: the baseline's, then the recommendation's.
json verified_by(const RecommendReport& r) {
  json ids = json::array();
  if (!r.verification) return ids;
  for (int64_t id : r.verification->baseline_runs) ids.push_back(id);
  for (int64_t id : r.verification->recommended_runs) ids.push_back(id);
  return ids;
}

json skipped_json(const RecommendReport& r) {
  json points = json::array();
  for (const auto& c : r.configs)
    if (!c.measured()) points.push_back(skipped_shape().write(c));
  return points;
}

const JsonShape<RecommendReport>& recommend_shape() {
  using namespace json_schema;
  using R = RecommendReport;
  static const JsonShape<R> shape(
      "",
      {constant<R>("schema", "ingero-bench/recommend"),
       constant<R>("version", 2),
       {"sweep_id", nullable(integer()), optional_member(&R::sweep_id)},
       {"headline", string(), [](const R& r) { return json(headline_text(r)); }},
       {"baseline", contract_entry_shape().schema("the configuration compared against"), baseline_json},
       {"recommended", contract_entry_shape().schema("the configuration to use"), recommended_json},
       {"speedup", number(), member(&R::speedup)},
       {"speedup_low", number(), member(&R::speedup_low)},
       {"speedup_high", number(), member(&R::speedup_high)},
       {"speedup_basis", string(),
        [](const R& r) {
          return json(r.verified ? "interleaved re-runs (verified_by)" : "the search's own measurements");
        }},
       {"verified", boolean("true: proven by interleaved re-runs (verified_by)"), member(&R::verified)},
       {"verified_by", array_of(integer()), verified_by},
       {"evidence", array_of(string(), "the baseline's causal chains"),
        [](const R& r) { return json(baseline_evidence_lines(r)); }},
       {"skipped", array_of(skipped_shape().schema()), skipped_json},
       {"not_a_loader_setting", boolean(), member(&R::not_a_loader_setting)},
       {"job", boolean("a sweep of the user's own command: samples are seconds per step"), member(&R::job)},
       {"alternative_measured", boolean("false: only the baseline was measured, so nothing is recommended"),
        member(&R::alternative_measured)},
       {"reasons", array_of(string()), [](const R& r) { return json(reason_lines(r)); }},
       {"noise_rule", string(), [](const R& r) { return json(noise_rule_text(r.noise_rule)); }},
       {"high_runq_p99_us", number(), [](const R&) { return json(kHighRunQueueP99Us); }},
       {"configs", array_of(config_result_shape().schema(), "measured ones fastest first, then the others"),
        [](const R& r) { return config_result_shape().write_all(r.configs); }}});
  return shape;
}

}  // namespace

json to_json(const RecommendReport& report) { return recommend_shape().write(report); }
json recommend_report_schema() { return recommend_shape().schema(); }

}  // namespace ingero::reports
