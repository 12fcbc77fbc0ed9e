// SPDX-License-Identifier: Apache-2.0
#include "reports/text/recommend_text.h"

#include <fmt/format.h>

#include "reports/text/format.h"

namespace ingero::reports {
namespace {

const ConfigResult& config_at(const RecommendReport& r, int index) { return r.configs[static_cast<size_t>(index)]; }

std::string interval_text(const ConfigResult& c) {
  return fmt::format("{} [{}, {}]", format_seconds(c.median_s), format_seconds(c.interval.low),
                     format_seconds(c.interval.high));
}

// What a recommended mode changes in the user's program; empty for a mode without advice.
std::string mode_text(const std::string& mode) {
  if (mode == "direct-shuffled")
    return "The data is already in memory and a sample needs no per-sample work: index the tensor with a "
           "pre-shuffled index (idx = torch.randperm(N); X[idx[i:i+B]]), one gather per batch instead of B "
           "per-sample calls, a collate and (with workers) inter-process transfers.";
  if (mode == "resident")
    return "The dataset fits in device memory (the resident run completed): copy it to the GPU once and index it "
           "there; nothing crosses PCIe per batch.";
  if (mode == "direct") return "Slice the in-memory tensor directly (sequential batches, no shuffle).";
  if (mode == "loader")
    return "The C++ loader has the DataLoader's design (worker processes fetch samples one by one and collate them, "
           "batches cross shared memory) without Python's per-sample cost: it bounds what the same knobs can reach "
           "once the per-sample work is cheap (move it to C++, or fetch whole batches).";
  if (mode == "loader-batched")
    return "Fetch whole batches: sampler=BatchSampler(RandomSampler(X), B, drop_last), batch_size=None (or "
           "__getitems__): one gather per batch instead of B per-sample calls and a collate.";
  return "";
}

std::string reason_text(const RecommendReport& r, const Reason& reason) {
  const ConfigResult& c = config_at(r, reason.config);
  switch (reason.kind) {
    case ReasonKind::other_mode: return mode_text(c.config.mode);
    case ReasonKind::cheaper_within_noise: {
      const ConfigResult& fastest = config_at(r, reason.other);
      return fmt::format("{} had the lowest median ({}), but {} ({}) is indistinguishable from it (their intervals "
                         "overlap) and cheaper, so it is recommended. {} measured {} faster over {} and {} runs; "
                         "more runs of the two alone would tell them apart (ingero-bench sweep with only those "
                         "points and a larger --max-repeats).",
                         fastest.label, interval_text(fastest), c.label, interval_text(c), fastest.label,
                         format_ratio(reason.ratio), fastest.run_ids.size(), c.run_ids.size());
    }
    case ReasonKind::reads_in_order:
      return fmt::format("{} was faster ({} per epoch) but reads batches in order; it does not replace a shuffled "
                         "loader.",
                         c.label, format_seconds(c.median_s));
    case ReasonKind::baseline_mode_best: {
      const ConfigResult& base = config_at(r, reason.other);
      return fmt::format("Keeping the baseline's mode ({}), the fastest point measured was {}: {} per epoch, {} faster "
                         "than the baseline's {} (the search's runs, not re-run against the baseline).",
                         base.config.mode, c.label, interval_text(c), format_ratio(reason.ratio), interval_text(base));
    }
    case ReasonKind::caution: return fmt::format("{}: {}", c.label, flag_text(reason.flag));
  }
  return "";
}

// A job's samples are seconds per step; our workloads' seconds per epoch.
std::string per_unit(const RecommendReport& r, double seconds) {
  if (!r.job) return format_seconds(seconds) + " per epoch";
  return fmt::format("{} a step, {:.3g} steps/s", format_seconds(seconds), seconds > 0 ? 1 / seconds : 0);
}

std::string not_measured_headline(const RecommendReport& r) {
  std::string why;
  if (r.unmeasured_example >= 0) {
    const ConfigResult& c = config_at(r, r.unmeasured_example);
    why = fmt::format(" ({}: {})", c.label, c.reason);
  }
  return fmt::format("No alternative to {} was measured{}, so none can be recommended yet.", r.base().label, why);
}

std::string speedup_text(const RecommendReport& r) {
  const ConfigResult& base = r.base();
  if (r.verified)
    return fmt::format(" Verified by {} interleaved re-runs: {} faster than {} (95 % interval {}–{}; {} vs {}).",
                       r.verification->baseline_runs.size() + r.verification->recommended_runs.size(),
                       format_ratio(r.speedup), base.label, format_ratio(r.speedup_low), format_ratio(r.speedup_high),
                       per_unit(r, median(r.verification->recommended_epochs)),
                       per_unit(r, median(r.verification->baseline_epochs)));
  return fmt::format(" Measured {} faster than {} (interval {}–{}; {} vs {}); not verified by re-runs: ingero-bench "
                     "sweep verifies it.",
                     format_ratio(r.speedup), base.label, format_ratio(r.speedup_low), format_ratio(r.speedup_high),
                     per_unit(r, r.rec().median_s), per_unit(r, base.median_s));
}

std::string decision_text(const RecommendReport& r) {
  if (r.recommended == r.baseline)
    return r.alternative_measured
               ? fmt::format("Keep {}: no measured configuration is faster beyond run-to-run noise.", r.base().label)
               : not_measured_headline(r);
  const ConfigResult& rec = r.rec();
  const std::string use =
      r.loader_change          ? fmt::format("Change the DataLoader: {}.", dataloader_change_text(*r.loader_change))
      : r.not_a_loader_setting ? fmt::format("Not a DataLoader setting: use {} (mode {}).", rec.label, rec.config.mode)
                               : fmt::format("Use {}.", rec.label);
  return use + speedup_text(r);
}

// Which measured configurations' epoch times are scaled from their first batches.
std::string bounded_epochs_note(const RecommendReport& r) {
  std::string cuts;
  for (const BoundedEpochs& b : r.bounded_epochs)
    cuts += fmt::format("{}{} on {} of {} batches", cuts.empty() ? "" : ", ", config_at(r, b.config).label,
                        b.cut.measured, b.cut.whole);
  if (cuts.empty()) return "";
  return fmt::format(" Epoch times estimated from each epoch's first batches, extended to a whole epoch at its "
                     "steady pace: {} (--max-batches).",
                     cuts);
}

std::string budget_hint_text(const BudgetHint& h) {
  return fmt::format(" A budget of about {:.0f} s more would measure one alternative and verify it once (the "
                     "baseline's run took {:.0f} s; an alternative is assumed to cost no more): ingero-bench sweep "
                     "--resume {} --budget {:.0f}{} --db {}",
                     h.needed_s, h.baseline_run_s, h.sweep_id, h.needed_s, h.traced ? "" : " --no-trace", h.db);
}

std::string untried_change_text(const UntriedChange& u) {
  return fmt::format(" The diagnosed cause, {}, suggests {}={}, unmeasured: measure it with {}.", u.cause,
                     u.change.knob, u.change.value, u.command);
}

std::string not_measured_line(const ConfigResult& c) {
  return fmt::format("{}: {}{}", c.label, c.state, c.reason.empty() ? "" : " — " + c.reason);
}

std::string group_line(const RecommendReport& r, const NotMeasured& group) {
  std::string modes;
  for (const auto& [mode, n] : group.per_mode) modes += fmt::format("{}{} {}", modes.empty() ? "" : ", ", mode, n);
  return fmt::format("{} points skipped — {} ({}); e.g. {}. `recommend --json` lists each with its reason",
                     group.configs.size(), group.reason.empty() ? "no reason given" : group.reason, modes,
                     not_measured_line(config_at(r, group.configs.front())));
}

}  // namespace

std::string flag_text(const ConfigFlag& flag) {
  switch (flag.kind) {
    case FlagKind::oversubscribed:
      return fmt::format("oversubscribed: {} workers on {} cores", flag.workers, flag.cores);
    case FlagKind::high_runq:
      return fmt::format("high run-queue latency: p99 in [{:g}, {:g}) µs", flag.runq_p99.lower, flag.runq_p99.upper);
    case FlagKind::no_shuffle: return "does not shuffle";
  }
  return "";
}

std::vector<std::string> flag_texts(const std::vector<ConfigFlag>& flags) {
  std::vector<std::string> texts;
  for (const ConfigFlag& flag : flags) texts.push_back(flag_text(flag));
  return texts;
}

std::string headline_text(const RecommendReport& r) {
  std::string text = decision_text(r) + bounded_epochs_note(r);
  if (r.budget_hint) text += budget_hint_text(*r.budget_hint);
  if (r.untried_change) text += untried_change_text(*r.untried_change);
  return text;
}

std::vector<std::string> reason_lines(const RecommendReport& r) {
  std::vector<std::string> lines;
  for (const Reason& reason : r.reasons)
    if (std::string line = reason_text(r, reason); !line.empty()) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> not_measured_lines(const RecommendReport& r) {
  std::vector<std::string> lines;
  for (const NotMeasured& entry : r.not_measured)
    lines.push_back(entry.group() ? group_line(r, entry) : not_measured_line(config_at(r, entry.configs.front())));
  return lines;
}

std::string noise_rule_text(const NoiseRule& rule) {
  return fmt::format(
      "a configuration's epoch time is the median of its measured epochs, with the order-statistic interval that "
      "covers the median at >= {:g} % (min..max, with its lower coverage, below 5 epochs); configurations whose "
      "intervals overlap the fastest one's are not told apart, and the cheapest of them is recommended (fewer "
      "workers, smaller prefetch, no device-resident copy, no pinning, no persistent workers); a speed-up's "
      "interval is a {:g} % bootstrap interval of the ratio of medians",
      rule.median_confidence * 100, rule.speedup_confidence * 100);
}

std::vector<std::string> baseline_evidence_lines(const RecommendReport& r) {
  if (!r.evidence) return {};
  const BaselineEvidence& e = *r.evidence;
  std::vector<std::string> lines;
  if (e.wait_fraction)
    lines.push_back(fmt::format("run {} waited for data {} of the time: {}", e.run_id, format_percent(*e.wait_fraction),
                                input_bound_name(e.verdict)));
  for (const auto& chain : e.chains)
    lines.push_back(fmt::format("[{}] {} — {}", severity_name(chain.severity), chain.summary, chain.root_cause));
  return lines;
}

std::string dataloader_change_text(const LoaderChange& change) {
  std::string args;
  for (const auto& [knob, value] : change.knobs)
    args += fmt::format(", {}={}", knob, value == "on" ? "True" : value == "off" ? "False" : value);
  std::string text = args.empty() ? "DataLoader(...) as in " + change.label : "DataLoader(..." + args + ")";
  if (change.command) {
    std::string command;
    for (const auto& arg : *change.command) command += (command.empty() ? "" : " ") + arg;
    text += ", as your command sets it: " + command;
  }
  return text;
}

}  // namespace ingero::reports
