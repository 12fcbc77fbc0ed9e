// SPDX-License-Identifier: Apache-2.0
// recommend: from the measured configurations in a DB (a sweep's, or every run's), the one
// to use and its measured speed-up over the baseline. A configuration's speed is the median
// of its measured epochs with a distribution-free interval; configurations whose intervals
// overlap the fastest one's are indistinguishable from it, and the cheapest of those wins.
// A sweep proves its recommendation with interleaved re-runs of baseline and recommendation:
// the speed-up comes from those re-runs, with a bootstrap interval.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/trace_contract.h"
#include "reports/run_analysis.h"
#include "reports/significance.h"

namespace ingero::reports {

inline constexpr double kHighRunQueueP99Us = 1000.0;  // run-queue p99 bucket at or above 1 ms
inline constexpr double kMedianConfidence = 0.90;      // of a configuration's median interval
inline constexpr double kSpeedupConfidence = 0.95;     // of the verified speed-up

struct ConfigResult {
  std::string label;                 // the sweep point, or the run label
  std::vector<int64_t> run_ids;      // the runs that measured it (a sweep's 'measure' runs)
  RunConfigSummary config;
  nlohmann::json config_json;
  std::vector<double> epoch_seconds;
  double median_s = 0;
  Interval interval;                 // of the median
  std::string state{contract::point_state::kMeasured};  // contract::point_state (sweeps: any)
  std::string reason;                // why pruned, skipped or failed
  std::optional<int> cores;
  std::optional<double> wait_fraction;
  std::optional<BucketBounds> runq_p99;
  std::vector<std::string> flags;    // oversubscribed, high run-queue latency, no shuffle
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
  std::string headline;
  std::vector<std::string> reasons;
  std::vector<std::string> evidence;  // the baseline's causal chains
  std::vector<std::string> skipped;   // points not measured, and why (many skipped alike: one line)
  std::string noise_rule;
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

// "DataLoader(..., num_workers=12, persistent_workers=True)": what a job point changes against the
// baseline, in the user's code.
std::string dataloader_change(const ConfigResult& to, const ConfigResult& from);

// Cheaper first: fewer workers, smaller prefetch, no device-resident copy, no pinning, no
// persistent workers (the order used to break ties within noise).
bool cheaper(const RunConfigSummary& a, const RunConfigSummary& b);

// Grouping key: two runs measured the same configuration when their keys are equal.
std::string config_key(const RunRecord& run);

}  // namespace ingero::reports
