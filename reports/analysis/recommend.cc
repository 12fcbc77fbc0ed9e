// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/recommend.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/knobs.h"
#include "common/trace_contract.h"

namespace ingero::reports {
namespace {

bool is_successful(const RunRecord& run) {
  namespace record = contract::record_status;
  const std::string record_status = run.result.is_object() ? run.result.value("status", std::string(record::kOk)) : "";
  return run.status == contract::status::kOk && (record_status == record::kOk || record_status == record::kStopped) &&
         !measured_epochs(run).empty();
}

std::vector<ConfigFlag> flags_for(const ConfigResult& c) {
  std::vector<ConfigFlag> flags;
  if (c.config.num_workers > 0 && c.cores && c.config.num_workers >= *c.cores)
    flags.push_back({FlagKind::oversubscribed, c.config.num_workers, *c.cores, {}});
  if (c.runq_p99 && c.runq_p99->lower >= kHighRunQueueP99Us) flags.push_back({FlagKind::high_runq, 0, 0, *c.runq_p99});
  if (c.config.mode == "direct") flags.push_back({FlagKind::no_shuffle, 0, 0, {}});
  return flags;
}

ConfigResult& config_for(std::vector<ConfigResult>& configs, std::map<std::string, size_t>& by_key,
                         const std::string& key, const std::string& label, const nlohmann::json& config_json) {
  auto [it, fresh] = by_key.emplace(key, configs.size());
  if (fresh) {
    ConfigResult c;
    c.label = label;
    c.config_json = config_json;
    RunRecord shape;
    shape.config = config_json;
    c.config = summarize_config(shape);
    c.loader_family = contract::find_mode(c.config.mode) && contract::find_mode(c.config.mode)->is_dataloader;
    configs.push_back(std::move(c));
  }
  return configs[it->second];
}

void add_run(ConfigResult& c, const ConfigRun& entry) {
  const RunRecord& run = entry.run;
  c.run_ids.push_back(run.run_id);
  const auto epochs = whole_epoch_seconds(run);
  c.epoch_seconds.insert(c.epoch_seconds.end(), epochs.begin(), epochs.end());
  if (!c.cores) c.cores = usable_cores(run);
  if (run.result.is_object() && run.result.contains("wait_fraction") && run.result["wait_fraction"].is_number())
    c.wait_fraction = run.result["wait_fraction"].get<double>();
  if (entry.runq_p99 && (!c.runq_p99 || entry.runq_p99->lower > c.runq_p99->lower)) c.runq_p99 = entry.runq_p99;
}

// Sweep runs group by their point; other runs by their configuration.
std::string key_of(const RunRecord& run) { return run.sweep_id ? "point:" + run.sweep_point : config_key(run); }

std::vector<ConfigResult> group_configs(const RecommendInputs& in) {
  std::vector<ConfigResult> configs;
  std::map<std::string, size_t> by_key;
  for (const PointState& p : in.points) {
    ConfigResult& c = config_for(configs, by_key, "point:" + p.point, p.point, p.config);
    c.state = p.state;
    c.reason = p.reason;
    c.cause = p.cause;
  }
  for (const ConfigRun& entry : in.runs) {
    if (!is_successful(entry.run)) continue;
    const std::string label = entry.run.sweep_id ? entry.run.sweep_point : entry.run.label;
    add_run(config_for(configs, by_key, key_of(entry.run), label, entry.run.config), entry);
  }
  for (auto& c : configs) {
    if (in.points.empty() && !c.epoch_seconds.empty()) c.state = contract::point_state::kMeasured;
    if (c.epoch_seconds.empty()) {
      if (c.state == contract::point_state::kMeasured) c.state = contract::point_state::kFailed;
      continue;
    }
    c.median_s = median(c.epoch_seconds);
    c.interval = median_interval(c.epoch_seconds, kMedianConfidence);
    c.flags = flags_for(c);
  }
  // Measured first, fastest first; then the rest in plan order.
  std::stable_sort(configs.begin(), configs.end(), [](const ConfigResult& a, const ConfigResult& b) {
    if (a.measured() != b.measured()) return a.measured();
    return a.measured() && a.median_s < b.median_s;
  });
  return configs;
}

auto cost_of(const RunConfigSummary& k) {
  return std::make_tuple(k.num_workers, k.num_workers > 0 ? k.prefetch_factor : 0, k.mode == "resident" ? 1 : 0,
                         k.pin_memory ? 1 : 0, k.persistent_workers ? 1 : 0);
}

int find_baseline(const std::vector<ConfigResult>& configs, const RecommendInputs& in) {
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto& c = configs[i];
    if (in.baseline_point && c.label == *in.baseline_point) return static_cast<int>(i);
    if (in.baseline_run && std::count(c.run_ids.begin(), c.run_ids.end(), *in.baseline_run))
      return static_cast<int>(i);
  }
  if (in.baseline_point || in.baseline_run) return -1;
  // The first loader run recorded (lowest run id), preferring the plain loader mode.
  int best = -1;
  int64_t best_id = INT64_MAX;
  for (const char* wanted : {"loader", "", "*"}) {
    for (size_t i = 0; i < configs.size(); ++i) {
      const auto& c = configs[i];
      if (!c.measured()) continue;
      const bool match = std::string(wanted) == "*" || (*wanted ? c.config.mode == wanted : c.loader_family);
      const int64_t first = *std::min_element(c.run_ids.begin(), c.run_ids.end());
      if (match && first < best_id) {
        best = static_cast<int>(i);
        best_id = first;
      }
    }
    if (best >= 0) return best;
  }
  return best;
}

// Sequential slices change what the model sees when the user shuffles.
bool reads_in_order_for(const ConfigResult& c, const ConfigResult& baseline) {
  return c.config.mode == "direct" && (baseline.config.shuffle || baseline.config.mode != "direct");
}

bool eligible(const ConfigResult& c, const ConfigResult& baseline) {
  return c.measured() && !reads_in_order_for(c, baseline);
}

// The re-runs of baseline and recommendation, when the sweep made them.
std::optional<Verification> verification_of(const RecommendInputs& in, const ConfigResult& base,
                                            const ConfigResult& rec) {
  Verification v;
  for (const ConfigRun& entry : in.verify_runs) {
    if (!is_successful(entry.run)) continue;
    const auto epochs = whole_epoch_seconds(entry.run);
    if (entry.run.sweep_point == base.label) {
      v.baseline_runs.push_back(entry.run.run_id);
      v.baseline_epochs.insert(v.baseline_epochs.end(), epochs.begin(), epochs.end());
    } else if (entry.run.sweep_point == rec.label) {
      v.recommended_runs.push_back(entry.run.run_id);
      v.recommended_epochs.insert(v.recommended_epochs.end(), epochs.begin(), epochs.end());
    }
  }
  if (v.baseline_epochs.empty() || v.recommended_epochs.empty()) return std::nullopt;
  v.speedup = ratio_of_medians(v.recommended_epochs, v.baseline_epochs, kSpeedupConfidence);
  return v;
}

// The first measured configuration of the baseline's mode (configs are fastest first).
int fastest_of_mode(const RecommendReport& r, const std::string& mode) {
  for (size_t i = 0; i < r.configs.size(); ++i)
    if (r.configs[i].measured() && r.configs[i].config.mode == mode) return static_cast<int>(i);
  return -1;
}

// Cautions about the two configurations the advice compares; every point's flags are in the table.
void add_cautions(RecommendReport& r) {
  if (r.recommended == r.baseline) return;
  for (int index : {r.recommended, r.baseline})
    for (const ConfigFlag& flag : r.configs[static_cast<size_t>(index)].flags)
      if (flag.kind != FlagKind::no_shuffle) r.reasons.push_back({ReasonKind::caution, index, -1, 0, flag});
}

void add_reasons(RecommendReport& r) {
  const ConfigResult& rec = r.rec();
  const ConfigResult& base = r.base();
  if (r.not_a_loader_setting || rec.config.mode != base.config.mode)
    r.reasons.push_back({ReasonKind::other_mode, r.recommended, -1, 0, {}});
  if (r.fastest != r.recommended) {
    const double fastest_s = r.configs[static_cast<size_t>(r.fastest)].median_s;
    r.reasons.push_back({ReasonKind::cheaper_within_noise, r.recommended, r.fastest,
                         fastest_s > 0 ? rec.median_s / fastest_s : 0, {}});
  }
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const ConfigResult& c = r.configs[i];
    if (c.measured() && !eligible(c, base) && c.median_s < rec.median_s)
      r.reasons.push_back({ReasonKind::reads_in_order, static_cast<int>(i), -1, 0, {}});
  }
  if (rec.config.mode != base.config.mode) {
    const int same_mode = fastest_of_mode(r, base.config.mode);
    if (same_mode >= 0 && same_mode != r.baseline)
      r.reasons.push_back({ReasonKind::baseline_mode_best, same_mode, r.baseline,
                           base.median_s / r.configs[static_cast<size_t>(same_mode)].median_s, {}});
  }
  add_cautions(r);
}

// Points not measured to the end, each alone, except that points skipped for the same reason
// (the text before its first ':') are one group once there are more than a few: a coordinate
// search skips hundreds. The JSON contract still lists every point.
std::vector<NotMeasured> not_measured(const std::vector<ConfigResult>& configs) {
  std::vector<NotMeasured> alone, skipped;  // skipped: groups in first-seen order
  for (size_t i = 0; i < configs.size(); ++i) {
    const ConfigResult& c = configs[i];
    if (c.measured()) continue;
    if (c.state != contract::point_state::kSkipped) {
      alone.push_back({{static_cast<int>(i)}, "", {}});
      continue;
    }
    const std::string why = c.reason.substr(0, c.reason.find(':'));
    auto group = std::find_if(skipped.begin(), skipped.end(), [&](const NotMeasured& g) { return g.reason == why; });
    if (group == skipped.end()) group = skipped.insert(skipped.end(), {{}, why, {}});
    group->configs.push_back(static_cast<int>(i));
  }
  for (NotMeasured& group : skipped) {
    if (group.configs.size() <= kSkippedListedAlone) {
      for (int i : group.configs) alone.push_back({{i}, "", {}});
      continue;
    }
    for (int i : group.configs) {
      const std::string& mode = configs[static_cast<size_t>(i)].config.mode;
      ++group.per_mode[mode.empty() ? "other" : mode];
    }
    alone.push_back(std::move(group));
  }
  return alone;
}

// Nothing but the baseline was measured: the point whose reason says why, a budget stop first,
// else any but a duplicate's.
int unmeasured_example(const RecommendReport& r) {
  for (bool budget : {true, false})
    for (size_t i = 0; i < r.configs.size(); ++i) {
      const ConfigResult& c = r.configs[i];
      if (static_cast<int>(i) == r.baseline || c.measured() || c.reason.empty()) continue;
      if (budget ? c.cause == contract::point_cause::kBudget : c.cause != contract::point_cause::kDuplicate)
        return static_cast<int>(i);
    }
  return -1;
}

// Which measured configurations' epoch times are scaled from their first batches.
std::vector<BoundedEpochs> bounded_epochs(const std::vector<ConfigResult>& configs) {
  std::vector<BoundedEpochs> bounded;
  for (size_t i = 0; i < configs.size(); ++i)
    if (auto cut = configs[i].measured() ? epoch_cut(configs[i].config_json) : std::nullopt)
      bounded.push_back({static_cast<int>(i), *cut});
  return bounded;
}

// What a job point changes against the baseline, in its DataLoader's arguments.
LoaderChange loader_change(const ConfigResult& to, const ConfigResult& from) {
  const nlohmann::json empty = nlohmann::json::object();
  const auto& mine = to.config_json.is_object() ? to.config_json.value("knobs", empty) : empty;
  const auto& theirs = from.config_json.is_object() ? from.config_json.value("knobs", empty) : empty;
  LoaderChange change{to.label, {}, std::nullopt};
  for (const char* knob : knob::kLoaderKnobs) {
    const std::string value = mine.value(knob, "");
    if (!value.empty() && value != theirs.value(knob, "")) change.knobs.emplace_back(knob, value);
  }
  if (to.config_json.is_object() && to.config_json.contains("command") && to.config_json["command"].is_array()) {
    change.command.emplace();
    for (const auto& arg : to.config_json["command"]) change.command->push_back(arg.get<std::string>());
  }
  return change;
}

}  // namespace

std::string config_key(const RunRecord& run) {
  const RunConfigSummary c = summarize_config(run);
  const auto& config = run.config.is_object() ? run.config : nlohmann::json::object();
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", c.mode, c.num_workers, c.num_workers > 0 ? c.prefetch_factor : 0,
                     c.pin_memory, c.persistent_workers, c.shuffle, c.cpus, c.ranks,
                     config.value("batch_size", nlohmann::json(nullptr)).dump(),
                     config.value("samples", nlohmann::json(nullptr)).dump(),
                     config.value("max_batches", nlohmann::json(nullptr)).dump());
}

bool cheaper(const RunConfigSummary& a, const RunConfigSummary& b) { return cost_of(a) < cost_of(b); }

Result<RecommendReport> recommend_configuration(const RecommendInputs& in) {
  RecommendReport r;
  r.sweep_id = in.sweep_id;
  r.configs = group_configs(in);
  if (std::none_of(r.configs.begin(), r.configs.end(), [](const ConfigResult& c) { return c.measured(); }))
    return Error::bad_input("no completed run with epoch timings to compare",
                            "measure some configurations first: ingero-bench sweep --db FILE (or ingero-bench "
                            "--workload dataloader --mode loader --num-workers 0,2,4 --db FILE)");
  r.baseline = find_baseline(r.configs, in);
  if (r.baseline < 0)
    return Error::bad_input(in.baseline_run ? fmt::format("baseline run {} is not a completed run with epoch timings",
                                                          *in.baseline_run)
                                            : fmt::format("the baseline '{}' was not measured",
                                                          in.baseline_point.value_or("?")),
                            "pass --baseline with the id of a finished workload run");
  const ConfigResult& base = r.configs[r.baseline];
  if (!base.measured())
    return Error::bad_input(fmt::format("the baseline {} has no measured epochs ({})", base.label, base.state),
                            "re-run or resume the sweep so that its baseline is measured");
  for (size_t i = 0; i < r.configs.size() && r.fastest < 0; ++i)
    if (eligible(r.configs[i], base)) r.fastest = static_cast<int>(i);  // sorted fastest first
  if (r.fastest < 0) r.fastest = r.baseline;
  const ConfigResult& fastest = r.configs[r.fastest];
  // Candidates: eligible configurations the fastest cannot be told apart from.
  r.recommended = r.fastest;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const ConfigResult& c = r.configs[i];
    if (!eligible(c, base) || !c.interval.overlaps(fastest.interval)) continue;
    if (static_cast<int>(i) == r.baseline) {
      r.recommended = r.baseline;
      break;
    }
    if (cheaper(c.config, r.configs[r.recommended].config)) r.recommended = static_cast<int>(i);
  }
  const ConfigResult& rec = r.configs[r.recommended];
  const RatioEstimate search = ratio_of_medians(rec.epoch_seconds, base.epoch_seconds, kSpeedupConfidence);
  r.speedup = search.ratio;
  r.speedup_low = search.interval.low;
  r.speedup_high = search.interval.high;
  if (r.recommended != r.baseline) r.verification = verification_of(in, base, rec);
  if (r.verification) {
    r.verified = true;
    r.speedup = r.verification->speedup.ratio;
    r.speedup_low = r.verification->speedup.interval.low;
    r.speedup_high = r.verification->speedup.interval.high;
  }
  r.job = base.config.mode == contract::kJobMode;
  r.not_a_loader_setting =
      !r.job && (!contract::find_mode(rec.config.mode) || !contract::find_mode(rec.config.mode)->is_dataloader);
  for (size_t i = 0; i < r.configs.size(); ++i)
    // An alternative: measured (if only to be dropped), and one that could replace the baseline.
    if (static_cast<int>(i) != r.baseline && !r.configs[i].epoch_seconds.empty() &&
        !reads_in_order_for(r.configs[i], base))
      r.alternative_measured = true;
  r.not_measured = not_measured(r.configs);
  add_reasons(r);
  if (r.job && r.recommended != r.baseline) r.loader_change = loader_change(rec, base);
  if (r.recommended == r.baseline && !r.alternative_measured) r.unmeasured_example = unmeasured_example(r);
  r.bounded_epochs = bounded_epochs(r.configs);
  return r;
}

}  // namespace ingero::reports
