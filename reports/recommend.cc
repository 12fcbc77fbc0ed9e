#include "reports/recommend.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "reports/format.h"

namespace ingero::reports {
namespace {

const std::set<std::string> kLoaderModes = {"loader", "loader-batched", "torch-loader", "python"};
const std::set<std::string> kNotLoaderModes = {"direct", "direct-shuffled", "resident"};

std::vector<double> epochs_of(const RunRecord& run) {
  std::vector<double> epochs;
  if (run.result.is_object() && run.result.contains("epoch_seconds") && run.result["epoch_seconds"].is_array()) {
    for (const auto& v : run.result["epoch_seconds"]) {
      if (v.is_number()) epochs.push_back(v.get<double>());
    }
  }
  if (epochs.empty() && run.result.is_object() && run.result.contains("epoch_median_s") &&
      run.result["epoch_median_s"].is_number()) {
    epochs.push_back(run.result["epoch_median_s"].get<double>());
  }
  return epochs;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string config_key(const RunConfigSummary& c, const RunRecord& run) {
  const auto& config = run.config.is_object() ? run.config : nlohmann::json::object();
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", c.mode, c.num_workers, c.num_workers > 0 ? c.prefetch_factor : 0,
                     c.pin_memory, c.persistent_workers, c.shuffle, c.cpus,
                     config.value("batch_size", nlohmann::json(nullptr)).dump());
}

bool is_successful(const RunRecord& run) {
  return run.status == "ok" && run.result.is_object() && run.result.value("status", "ok") == "ok" &&
         !epochs_of(run).empty();
}

std::vector<std::string> flags_for(const ConfigResult& c) {
  std::vector<std::string> flags;
  if (c.config.num_workers > 0 && c.cores && c.config.num_workers >= *c.cores) {
    flags.push_back(fmt::format("oversubscribed: {} workers on {} cores", c.config.num_workers, *c.cores));
  }
  if (c.runq_p99 && c.runq_p99->lower_us >= kHighRunQueueP99Us) {
    flags.push_back(fmt::format("high run-queue latency: p99 in [{:g}, {:g}) µs", c.runq_p99->lower_us,
                                c.runq_p99->upper_us));
  }
  if (c.config.mode == "direct") flags.push_back("does not shuffle");
  return flags;
}

std::vector<ConfigResult> group_configs(const std::vector<ConfigRun>& runs) {
  std::vector<ConfigResult> configs;
  std::map<std::string, size_t> by_key;
  for (const auto& entry : runs) {
    const RunRecord& run = entry.run;
    if (!is_successful(run)) continue;
    const RunConfigSummary summary = summarize_config(run);
    const std::string key = config_key(summary, run);
    auto [it, fresh] = by_key.emplace(key, configs.size());
    if (fresh) {
      ConfigResult c;
      c.label = run.label;
      c.config = summary;
      c.cores = usable_cores(run);
      c.loader_family = kLoaderModes.count(summary.mode) > 0;
      if (run.result.contains("wait_fraction") && run.result["wait_fraction"].is_number()) {
        c.wait_fraction = run.result["wait_fraction"].get<double>();
      }
      configs.push_back(c);
    }
    ConfigResult& c = configs[it->second];
    c.run_ids.push_back(run.run_id);
    const auto epochs = epochs_of(run);
    c.epoch_seconds.insert(c.epoch_seconds.end(), epochs.begin(), epochs.end());
    if (entry.runq_p99 && (!c.runq_p99 || entry.runq_p99->lower_us > c.runq_p99->lower_us)) c.runq_p99 = entry.runq_p99;
  }
  for (auto& c : configs) {
    c.median_s = median(c.epoch_seconds);
    c.min_s = *std::min_element(c.epoch_seconds.begin(), c.epoch_seconds.end());
    c.max_s = *std::max_element(c.epoch_seconds.begin(), c.epoch_seconds.end());
    c.flags = flags_for(c);
  }
  std::stable_sort(configs.begin(), configs.end(),
                   [](const ConfigResult& a, const ConfigResult& b) { return a.median_s < b.median_s; });
  return configs;
}

// Cheaper first: fewer workers, smaller prefetch, no device-resident copy, no pinning.
auto cost_of(const ConfigResult& c) {
  const auto& k = c.config;
  return std::make_tuple(k.num_workers, k.num_workers > 0 ? k.prefetch_factor : 0, k.mode == "resident" ? 1 : 0,
                         k.pin_memory ? 1 : 0, k.persistent_workers ? 1 : 0, c.median_s);
}

int find_baseline(const std::vector<ConfigResult>& configs, std::optional<int64_t> baseline_run) {
  auto holds = [](const ConfigResult& c, int64_t id) {
    return std::find(c.run_ids.begin(), c.run_ids.end(), id) != c.run_ids.end();
  };
  if (baseline_run) {
    for (size_t i = 0; i < configs.size(); ++i) {
      if (holds(configs[i], *baseline_run)) return static_cast<int>(i);
    }
    return -1;
  }
  // The first loader run recorded (lowest run id), preferring the plain loader mode.
  int best = -1;
  int64_t best_id = INT64_MAX;
  for (const char* wanted : {"loader", ""}) {
    for (size_t i = 0; i < configs.size(); ++i) {
      const auto& c = configs[i];
      const bool match = *wanted ? c.config.mode == wanted : c.loader_family;
      const int64_t first = *std::min_element(c.run_ids.begin(), c.run_ids.end());
      if (match && first < best_id) {
        best = static_cast<int>(i);
        best_id = first;
      }
    }
    if (best >= 0) return best;
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    const int64_t first = *std::min_element(configs[i].run_ids.begin(), configs[i].run_ids.end());
    if (first < best_id) {
      best = static_cast<int>(i);
      best_id = first;
    }
  }
  return best;
}

bool eligible(const ConfigResult& c, const ConfigResult& baseline) {
  // Sequential slices change what the model sees when the user shuffles.
  return !(c.config.mode == "direct" && (baseline.config.shuffle || baseline.config.mode != "direct"));
}

std::string mode_reason(const ConfigResult& c) {
  if (c.config.mode == "direct-shuffled") {
    return "The data is already in memory and a sample needs no per-sample work: index the tensor with a "
           "pre-shuffled index (idx = torch.randperm(N); X[idx[i:i+B]]), one gather per batch instead of B "
           "per-sample calls, a collate and (with workers) inter-process transfers.";
  }
  if (c.config.mode == "resident") {
    return "The dataset fits in device memory (the resident run completed): copy it to the GPU once and "
           "index it there; nothing crosses PCIe per batch.";
  }
  if (c.config.mode == "direct") return "Slice the in-memory tensor directly (sequential batches, no shuffle).";
  return "";
}

void add_reasons(RecommendReport& r) {
  const ConfigResult& rec = r.configs[r.recommended];
  const ConfigResult& base = r.configs[r.baseline];
  const ConfigResult& fastest = r.configs[r.fastest];
  if (r.not_a_loader_setting) r.reasons.push_back(mode_reason(rec));
  if (r.fastest != r.recommended) {
    r.reasons.push_back(fmt::format(
        "{} was {} faster per epoch, within the run-to-run noise ({}), so the cheaper {} is recommended.",
        fastest.label, format_seconds(rec.median_s - fastest.median_s),
        format_seconds(std::max(rec.spread_s(), fastest.spread_s())), rec.label));
  }
  for (const auto& c : r.configs) {
    if (!eligible(c, base) && c.median_s < rec.median_s) {
      r.reasons.push_back(fmt::format("{} was faster ({} per epoch) but reads batches in order; it does not "
                                      "replace a shuffled loader.", c.label, format_seconds(c.median_s)));
    }
  }
  for (const auto& c : r.configs) {
    for (const auto& flag : c.flags) {
      if (flag != "does not shuffle") r.reasons.push_back(fmt::format("{}: {}", c.label, flag));
    }
  }
}

std::string headline(const RecommendReport& r) {
  const ConfigResult& rec = r.configs[r.recommended];
  const ConfigResult& base = r.configs[r.baseline];
  if (r.recommended == r.baseline) {
    return fmt::format("Keep {}: no measured configuration is faster by more than the run-to-run noise.", base.label);
  }
  std::string text = r.not_a_loader_setting
                         ? fmt::format("Not a DataLoader setting: use {} (mode {}).", rec.label, rec.config.mode)
                         : fmt::format("Use {}.", rec.label);
  text += fmt::format(" Measured {} faster than your configuration ({}: {} vs {} per epoch)",
                      format_ratio(r.speedup_vs_baseline), base.label, format_seconds(rec.median_s),
                      format_seconds(base.median_s));
  if (r.speedup_vs_best_loader && r.best_loader != r.recommended) {
    text += fmt::format(" and {} faster than the best loader configuration ({})",
                        format_ratio(*r.speedup_vs_best_loader), r.configs[r.best_loader].label);
  }
  return text + ".";
}

}  // namespace

Result<RecommendReport> recommend_configuration(const std::vector<ConfigRun>& runs,
                                                std::optional<int64_t> baseline_run) {
  RecommendReport r;
  r.configs = group_configs(runs);
  if (r.configs.empty()) {
    return Error::bad_input("no completed run with epoch timings to compare",
                            "record a sweep first ('ingero-bench sweep --db PATH'), then run recommend on it");
  }
  r.baseline = find_baseline(r.configs, baseline_run);
  if (r.baseline < 0) {
    return Error::bad_input(fmt::format("baseline run {} is not a completed run with epoch timings", *baseline_run),
                            "pass --baseline with the id of a finished workload run");
  }
  const ConfigResult& base = r.configs[r.baseline];
  for (size_t i = 0; i < r.configs.size(); ++i) {
    if (!eligible(r.configs[i], base)) continue;
    if (r.fastest < 0) r.fastest = static_cast<int>(i);  // configs are sorted fastest first
    if (r.best_loader < 0 && r.configs[i].loader_family) r.best_loader = static_cast<int>(i);
  }
  if (r.fastest < 0) r.fastest = r.baseline;
  const ConfigResult& fastest = r.configs[r.fastest];
  r.recommended = r.fastest;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const ConfigResult& c = r.configs[i];
    if (!eligible(c, base)) continue;
    const double noise = std::max(c.spread_s(), fastest.spread_s());
    if (c.median_s - fastest.median_s <= noise && cost_of(c) < cost_of(r.configs[r.recommended])) {
      r.recommended = static_cast<int>(i);
    }
  }
  // Stay with the user's configuration when nothing beats it beyond noise.
  const ConfigResult& chosen = r.configs[r.recommended];
  if (base.median_s - chosen.median_s <= std::max(base.spread_s(), chosen.spread_s()) &&
      cost_of(base) <= cost_of(chosen)) {
    r.recommended = r.baseline;
  }
  const ConfigResult& rec = r.configs[r.recommended];
  r.speedup_vs_baseline = base.median_s / rec.median_s;
  if (r.best_loader >= 0) r.speedup_vs_best_loader = r.configs[r.best_loader].median_s / rec.median_s;
  r.not_a_loader_setting = kNotLoaderModes.count(rec.config.mode) > 0;
  r.noise_rule = "noise = max − min of a configuration's epoch times; a faster configuration whose gain is within "
                 "the larger noise of the two loses to the cheaper one (fewer workers, smaller prefetch, no "
                 "device-resident copy, no pinning)";
  add_reasons(r);
  r.headline = headline(r);
  return r;
}

}  // namespace ingero::reports
