// SPDX-License-Identifier: Apache-2.0
// recommend: from the measured configurations in a DB (a sweep's, or every run's), the one
// to use and its measured speed-up over the baseline. A configuration's speed is the median
// of its measured epochs with a distribution-free interval; configurations whose intervals
// overlap the fastest one's are indistinguishable from it, and the cheapest of those wins.
// A sweep proves its recommendation with interleaved re-runs of baseline and recommendation:
// the speed-up comes from those re-runs, with a bootstrap interval.
// Numbers and kinds only: the words (headline, reasons, flags, the noise rule) come from
// reports/text/recommend_text.h, which every renderer calls.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/trace_contract.h"
#include "reports/analysis/causal_chains.h"
#include "reports/analysis/run_analysis.h"
#include "reports/analysis/significance.h"

namespace ingero::reports {

inline constexpr double kHighRunQueueP99Us = 1000.0;  // run-queue p99 bucket at or above 1 ms
inline constexpr double kMedianConfidence = 0.90;      // of a configuration's median interval
inline constexpr double kSpeedupConfidence = 0.95;     // of the verified speed-up
inline constexpr size_t kSkippedListedAlone = 3;       // more points skipped for one reason are one group

// A caution about one configuration.
enum class FlagKind {
  oversubscribed,  // as many loader workers as usable cores, or more
  high_runq,       // its run-queue p99 bucket starts at kHighRunQueueP99Us or later
  no_shuffle,      // the direct mode: batches in order
};

struct ConfigFlag {
  FlagKind kind = FlagKind::no_shuffle;
  int workers = 0;         // oversubscribed: the loader workers
  int cores = 0;           //   and the cores they could use
  BucketBounds runq_p99;   // high_runq: the bucket holding the p99, µs
};

struct ConfigResult {
  std::string label;                 // the sweep point, or the run label
  std::vector<int64_t> run_ids;      // the runs that measured it (a sweep's 'measure' runs)
  RunConfigSummary config;
  nlohmann::json config_json;
  std::vector<double> epoch_seconds;
  double median_s = 0;
  Interval interval;                 // of the median
  std::string state{contract::point_state::kMeasured};  // contract::point_state (sweeps: any)
  std::string reason;                // why pruned, skipped or failed, as the sweep stored it
  std::string cause;                 // contract::point_cause, "" for none
  std::optional<int> cores;
  std::optional<double> wait_fraction;
  std::optional<BucketBounds> runq_p99;
  std::vector<ConfigFlag> flags;
  bool loader_family = false;
  bool measured() const { return state == contract::point_state::kMeasured && !epoch_seconds.empty(); }
};

// The re-runs that prove a recommendation: baseline and recommendation, interleaved.
struct Verification {
  std::vector<int64_t> baseline_runs;
  std::vector<int64_t> recommended_runs;
  std::vector<double> baseline_epochs;
  std::vector<double> recommended_epochs;
  RatioEstimate speedup;  // median(baseline) / median(recommended)
};

// Why the recommendation is what it is; `config` and `other` index RecommendReport::configs.
enum class ReasonKind {
  other_mode,            // the recommendation (`config`) changes the mode: what its mode does
  cheaper_within_noise,  // the fastest (`other`) cannot be told apart from `config`, which is cheaper
  reads_in_order,        // `config` was faster but reads its batches in order: no shuffled loader's replacement
  baseline_mode_best,    // keeping the baseline's (`other`) mode, `config` was its fastest point, `ratio` faster
  caution,               // `flag` of `config`, the recommendation or the baseline
};

struct Reason {
  ReasonKind kind = ReasonKind::other_mode;
  int config = -1;
  int other = -1;
  // baseline_mode_best: median(baseline) / median(config), from the search's runs;
  // cheaper_within_noise: median(config) / median(other), how much faster the fastest measured
  double ratio = 0;
  ConfigFlag flag;   // caution
};

// Points not measured to the end: one point, or the points skipped for one reason once they
// are more than kSkippedListedAlone (a coordinate search skips hundreds).
struct NotMeasured {
  std::vector<int> configs;              // indexes into RecommendReport::configs
  std::string reason;                    // a group's: its points' stored reason up to the first ':'
  std::map<std::string, int> per_mode;   // a group's points per mode ("other": no mode)
  bool group() const { return configs.size() > 1; }
};

// The rule that tells configurations apart, as its numbers.
struct NoiseRule {
  double median_confidence = kMedianConfidence;
  double speedup_confidence = kSpeedupConfidence;
};

// A measured configuration whose epochs were bounded (--max-batches) and extended to a whole epoch.
struct BoundedEpochs {
  int config = -1;
  EpochCut cut;
};

// A job's change: the DataLoader arguments that differ from the baseline's, and the command run.
struct LoaderChange {
  std::string label;                                        // the recommended point
  std::vector<std::pair<std::string, std::string>> knobs;   // knob::kLoaderKnobs order: name, value as stored
  std::optional<std::vector<std::string>> command;          // the command the point ran, when it stored one
};

// A sweep stopped by its budget before any alternative: the budget that would measure one and
// verify it once (an alternative's run assumed to cost no more than the baseline's).
struct BudgetHint {
  double needed_s = 0;
  double baseline_run_s = 0;  // the baseline's mean run time
  int64_t sweep_id = 0;
  bool traced = true;
  std::string db;
};

// The first change the baseline's causal chains suggest that no run of the DB measured.
struct UntriedChange {
  std::string cause;  // the chain's summary (reports/text/chain_text.h)
  Change change;
  std::string command;  // what measures it
};

// The baseline's causal chains, as evidence.
struct BaselineEvidence {
  struct Chain {
    Severity severity = Severity::low;
    std::string summary;     // the chain's words (reports/text/chain_text.h)
    std::string root_cause;
  };
  int64_t run_id = 0;
  std::optional<double> wait_fraction;
  InputBound verdict = InputBound::unknown;
  std::vector<Chain> chains;  // its highest ranked, as many as fit in four lines with the wait fraction's
};

struct RecommendReport {
  std::optional<int64_t> sweep_id;
  std::vector<ConfigResult> configs;  // measured ones fastest first, then the others
  int baseline = -1;                  // indexes into configs
  int recommended = -1;
  int fastest = -1;
  std::optional<Verification> verification;
  double speedup = 1;                 // from the verification when there is one, else the search
  double speedup_low = 1;
  double speedup_high = 1;
  bool verified = false;
  bool not_a_loader_setting = false;
  bool job = false;                   // a sweep of the user's own command: samples are seconds per step
  bool alternative_measured = false;  // some configuration besides the baseline was measured
  std::optional<LoaderChange> loader_change;  // a job's recommendation, in its DataLoader's terms
  int unmeasured_example = -1;        // nothing measured but the baseline: the point whose reason says why
  std::vector<BoundedEpochs> bounded_epochs;
  std::vector<Reason> reasons;
  std::vector<NotMeasured> not_measured;
  NoiseRule noise_rule;
  // Filled from the DB by make_recommend_report (reports/documents/trace_reports.h):
  std::optional<BudgetHint> budget_hint;        // nothing but the baseline measured, a budget stopped the sweep
  std::optional<UntriedChange> untried_change;  //   and what the baseline's chains suggest trying
  std::optional<BaselineEvidence> evidence;
  const ConfigResult& base() const { return configs[static_cast<size_t>(baseline)]; }
  const ConfigResult& rec() const { return configs[static_cast<size_t>(recommended)]; }
};

struct ConfigRun {
  RunRecord run;
  std::optional<BucketBounds> runq_p99;
};

// A sweep point's state as the sweep stored it (sweep_points).
struct PointState {
  std::string point;
  nlohmann::json config;
  std::string state;
  std::string reason;
  std::string cause;  // contract::point_cause, "" for none
};

struct RecommendInputs {
  std::vector<ConfigRun> runs;              // 'measure' runs (sweeps) or every run
  std::vector<ConfigRun> verify_runs;       // a sweep's 'verify' runs
  std::vector<PointState> points;           // a sweep's plan (empty outside sweeps)
  std::optional<std::string> baseline_point;
  std::optional<int64_t> baseline_run;      // --baseline RUN
  std::optional<int64_t> sweep_id;
};

// Pure decision over measured runs.
Result<RecommendReport> recommend_configuration(const RecommendInputs& inputs);

// Cheaper first: fewer workers, smaller prefetch, no device-resident copy, no pinning, no
// persistent workers (the order used to break ties within noise).
bool cheaper(const RunConfigSummary& a, const RunConfigSummary& b);

// Grouping key: two runs measured the same configuration when their keys are equal.
std::string config_key(const RunRecord& run);

}  // namespace ingero::reports
