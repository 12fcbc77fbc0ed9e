// SPDX-License-Identifier: Apache-2.0
#include "reports/recommend.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/knobs.h"
#include "common/trace_contract.h"
#include "reports/format.h"

namespace ingero::reports {
namespace {

bool is_successful(const RunRecord& run) {
  const std::string record_status = run.result.is_object() ? run.result.value("status", "ok") : "";
  return run.status == contract::status::kOk && (record_status == "ok" || record_status == "stopped") &&
         !measured_epochs(run).empty();
}

std::vector<std::string> flags_for(const ConfigResult& c) {
  std::vector<std::string> flags;
  if (c.config.num_workers > 0 && c.cores && c.config.num_workers >= *c.cores)
    flags.push_back(fmt::format("oversubscribed: {} workers on {} cores", c.config.num_workers, *c.cores));
  if (c.runq_p99 && c.runq_p99->lower >= kHighRunQueueP99Us)
    flags.push_back(fmt::format("high run-queue latency: p99 in [{:g}, {:g}) µs", c.runq_p99->lower, c.runq_p99->upper));
  if (c.config.mode == "direct") flags.push_back("does not shuffle");
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

std::string mode_reason(const ConfigResult& c) {
  if (c.config.mode == "direct-shuffled")
    return "The data is already in memory and a sample needs no per-sample work: index the tensor with a "
           "pre-shuffled index (idx = torch.randperm(N); X[idx[i:i+B]]), one gather per batch instead of B "
           "per-sample calls, a collate and (with workers) inter-process transfers.";
  if (c.config.mode == "resident")
    return "The dataset fits in device memory (the resident run completed): copy it to the GPU once and index it "
           "there; nothing crosses PCIe per batch.";
  if (c.config.mode == "direct") return "Slice the in-memory tensor directly (sequential batches, no shuffle).";
  if (c.config.mode == "loader")
    return "The C++ loader has the DataLoader's design (worker processes fetch samples one by one and collate them, "
           "batches cross shared memory) without Python's per-sample cost: it bounds what the same knobs can reach "
           "once the per-sample work is cheap (move it to C++, or fetch whole batches).";
  if (c.config.mode == "loader-batched")
    return "Fetch whole batches: sampler=BatchSampler(RandomSampler(X), B, drop_last), batch_size=None (or "
           "__getitems__): one gather per batch instead of B per-sample calls and a collate.";
  return "";
}

std::string interval_text(const ConfigResult& c) {
  return fmt::format("{} [{}, {}]", format_seconds(c.median_s), format_seconds(c.interval.low),
                     format_seconds(c.interval.high));
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

void add_reasons(RecommendReport& r) {
  const ConfigResult& rec = r.configs[r.recommended];
  const ConfigResult& base = r.configs[r.baseline];
  const ConfigResult& fastest = r.configs[r.fastest];
  if (r.not_a_loader_setting || rec.config.mode != base.config.mode) {
    if (auto why = mode_reason(rec); !why.empty()) r.reasons.push_back(why);
  }
  if (r.fastest != r.recommended)
    r.reasons.push_back(fmt::format("{} had the lowest median ({}), but {} ({}) is indistinguishable from it "
                                    "(their intervals overlap) and cheaper, so it is recommended.",
                                    fastest.label, interval_text(fastest), rec.label, interval_text(rec)));
  for (const auto& c : r.configs)
    if (c.measured() && !eligible(c, base) && c.median_s < rec.median_s)
      r.reasons.push_back(fmt::format("{} was faster ({} per epoch) but reads batches in order; it does not replace a "
                                      "shuffled loader.",
                                      c.label, format_seconds(c.median_s)));
  if (rec.config.mode != base.config.mode) {
    const ConfigResult* same_mode = nullptr;  // configs are fastest first
    for (const auto& c : r.configs)
      if (c.measured() && c.config.mode == base.config.mode && !same_mode) same_mode = &c;
    if (same_mode != nullptr && same_mode != &base)
      r.reasons.push_back(fmt::format(
          "Keeping the baseline's mode ({}), the fastest point measured was {}: {} per epoch, {} faster than the "
          "baseline's {} (the search's runs, not re-run against the baseline).",
          base.config.mode, same_mode->label, interval_text(*same_mode),
          format_ratio(base.median_s / same_mode->median_s), interval_text(base)));
  }
  // Cautions about the two configurations the advice compares; every point's flags are in the table.
  for (const ConfigResult* c : {&rec, &base})
    for (const auto& flag : (c == &base && &base == &rec) ? std::vector<std::string>{} : c->flags)
      if (flag != "does not shuffle") r.reasons.push_back(fmt::format("{}: {}", c->label, flag));
}

// Points not measured to the end, one line each, except that points skipped for the same
// reason (the text before its first ':') are one line once there are more than a few: a
// coordinate search skips hundreds. The JSON contract still lists every point.
std::vector<std::string> not_measured_lines(const std::vector<ConfigResult>& configs) {
  constexpr size_t kListedAlone = 3;
  std::vector<std::pair<std::string, std::vector<const ConfigResult*>>> skipped;  // first-seen order
  for (const auto& c : configs) {
    if (c.measured() || c.state != contract::point_state::kSkipped) continue;
    const std::string why = c.reason.substr(0, c.reason.find(':'));
    auto group = std::find_if(skipped.begin(), skipped.end(), [&](const auto& g) { return g.first == why; });
    if (group == skipped.end()) group = skipped.insert(skipped.end(), {why, {}});
    group->second.push_back(&c);
  }
  std::vector<std::string> lines;
  auto line_of = [](const ConfigResult& c) {
    return fmt::format("{}: {}{}", c.label, c.state, c.reason.empty() ? "" : " — " + c.reason);
  };
  for (const auto& c : configs)
    if (!c.measured() && c.state != contract::point_state::kSkipped) lines.push_back(line_of(c));
  for (const auto& [why, points] : skipped) {
    if (points.size() <= kListedAlone) {
      for (const ConfigResult* c : points) lines.push_back(line_of(*c));
      continue;
    }
    std::map<std::string, int> per_mode;
    for (const ConfigResult* c : points) ++per_mode[c->config.mode.empty() ? "other" : c->config.mode];
    std::string modes;
    for (const auto& [mode, n] : per_mode) modes += fmt::format("{}{} {}", modes.empty() ? "" : ", ", mode, n);
    lines.push_back(fmt::format("{} points skipped — {} ({}); e.g. {}. `recommend --json` lists each with its reason",
                                points.size(), why.empty() ? "no reason given" : why, modes, line_of(*points.front())));
  }
  return lines;
}

// A job's samples are seconds per step; our workloads' seconds per epoch.
std::string per_unit(const RecommendReport& r, double seconds) {
  if (!r.job) return format_seconds(seconds) + " per epoch";
  return fmt::format("{} a step, {:.3g} steps/s", format_seconds(seconds), seconds > 0 ? 1 / seconds : 0);
}

std::string not_measured_headline(const RecommendReport& r) {
  const ConfigResult& base = r.configs[r.baseline];
  // The reason an alternative was not measured: a budget stop first, else any but a duplicate's.
  std::string why;
  for (bool budget : {true, false})
    for (const auto& c : r.configs) {
      if (!why.empty() || &c == &base || c.measured() || c.reason.empty()) continue;
      if (budget ? c.reason.find("budget") == std::string::npos : c.reason.rfind("the same knobs as", 0) == 0) continue;
      why = fmt::format(" ({}: {})", c.label, c.reason);
    }
  return fmt::format("No alternative to {} was measured{}, so none can be recommended yet.", base.label, why);
}

std::string headline(const RecommendReport& r) {
  const ConfigResult& rec = r.configs[r.recommended];
  const ConfigResult& base = r.configs[r.baseline];
  if (r.recommended == r.baseline)
    return r.alternative_measured
               ? fmt::format("Keep {}: no measured configuration is faster beyond run-to-run noise.", base.label)
               : not_measured_headline(r);
  std::string text = r.job                    ? fmt::format("Change the DataLoader: {}.", dataloader_change(rec, base))
                     : r.not_a_loader_setting ? fmt::format("Not a DataLoader setting: use {} (mode {}).", rec.label,
                                                            rec.config.mode)
                                              : fmt::format("Use {}.", rec.label);
  if (r.verified) {
    text += fmt::format(" Verified by {} interleaved re-runs: {} faster than {} (95 % interval {}–{}; {} vs {}).",
                        r.verification->baseline_runs.size() + r.verification->recommended_runs.size(),
                        format_ratio(r.speedup), base.label, format_ratio(r.speedup_low),
                        format_ratio(r.speedup_high), per_unit(r, median(r.verification->recommended_epochs)),
                        per_unit(r, median(r.verification->baseline_epochs)));
  } else {
    text += fmt::format(" Measured {} faster than {} (interval {}–{}; {} vs {}); not verified by "
                        "re-runs: ingero-bench sweep verifies it.",
                        format_ratio(r.speedup), base.label, format_ratio(r.speedup_low),
                        format_ratio(r.speedup_high), per_unit(r, rec.median_s), per_unit(r, base.median_s));
  }
  return text;
}

// Which measured configurations' epoch times are scaled from their first batches.
std::string bounded_epochs_note(const std::vector<ConfigResult>& configs) {
  std::string cuts;
  for (const ConfigResult& c : configs)
    if (auto cut = c.measured() ? epoch_cut(c.config_json) : std::nullopt)
      cuts += fmt::format("{}{} on {} of {} batches", cuts.empty() ? "" : ", ", c.label, cut->measured, cut->whole);
  if (cuts.empty()) return "";
  return fmt::format(" Epoch times estimated from each epoch's first batches, extended to a whole epoch at its "
                     "steady pace: {} (--max-batches).", cuts);
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

std::string dataloader_change(const ConfigResult& to, const ConfigResult& from) {
  const nlohmann::json empty = nlohmann::json::object();
  const auto& mine = to.config_json.is_object() ? to.config_json.value("knobs", empty) : empty;
  const auto& theirs = from.config_json.is_object() ? from.config_json.value("knobs", empty) : empty;
  std::string args;
  for (const char* knob : knob::kLoaderKnobs) {
    const std::string value = mine.value(knob, "");
    if (value.empty() || value == theirs.value(knob, "")) continue;
    const std::string python = value == "on" ? "True" : value == "off" ? "False" : value;
    args += fmt::format(", {}={}", knob, python);
  }
  std::string text = args.empty() ? "DataLoader(...) as in " + to.label : "DataLoader(..." + args + ")";
  if (to.config_json.is_object() && to.config_json.contains("command") && to.config_json["command"].is_array()) {
    std::string command;
    for (const auto& arg : to.config_json["command"]) command += (command.empty() ? "" : " ") + arg.get<std::string>();
    text += ", as your command sets it: " + command;
  }
  return text;
}

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
  r.skipped = not_measured_lines(r.configs);
  r.noise_rule = fmt::format(
      "a configuration's epoch time is the median of its measured epochs, with the order-statistic interval that "
      "covers the median at >= {:g} % (min..max, with its lower coverage, below 5 epochs); configurations whose "
      "intervals overlap the fastest one's are not told apart, and the cheapest of them is recommended (fewer "
      "workers, smaller prefetch, no device-resident copy, no pinning, no persistent workers); a speed-up's "
      "interval is a {:g} % bootstrap interval of the ratio of medians",
      kMedianConfidence * 100, kSpeedupConfidence * 100);
  add_reasons(r);
  r.headline = headline(r);
  r.headline += bounded_epochs_note(r.configs);
  return r;
}

}  // namespace ingero::reports
