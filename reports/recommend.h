// recommend: from the measured configurations in a DB, the one to use, its
// measured speed-up, and the evidence; cheaper settings win ties within noise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/run_analysis.h"

namespace ingero::reports {

inline constexpr double kHighRunQueueP99Us = 1000.0;  // run-queue p99 bucket at or above 1 ms

struct ConfigResult {
  std::vector<int64_t> run_ids;
  std::string label;
  RunConfigSummary config;
  std::vector<double> epoch_seconds;
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double spread_s() const { return max_s - min_s; }  // run-to-run noise
  std::optional<int> cores;
  std::optional<double> wait_fraction;
  std::optional<BucketBounds> runq_p99;
  std::vector<std::string> flags;  // oversubscribed, high run-queue latency, no shuffle
  bool loader_family = false;
};

struct RecommendReport {
  std::vector<ConfigResult> configs;  // fastest first
  int baseline = -1;                  // indexes into configs
  int recommended = -1;
  int fastest = -1;
  int best_loader = -1;
  double speedup_vs_baseline = 1;
  std::optional<double> speedup_vs_best_loader;
  bool not_a_loader_setting = false;
  std::string headline;
  std::vector<std::string> reasons;
  std::vector<std::string> evidence;  // the baseline's causal chains
  std::string noise_rule;
};

struct ConfigRun {
  RunRecord run;
  std::optional<BucketBounds> runq_p99;
};

// Pure decision over measured runs; baseline_run picks the user's configuration.
Result<RecommendReport> recommend_configuration(const std::vector<ConfigRun>& runs,
                                                std::optional<int64_t> baseline_run);

}  // namespace ingero::reports
