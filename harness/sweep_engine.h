// SPDX-License-Identifier: Apache-2.0
// The sweep engine: the search for the best loader configuration over num_workers x
// prefetch_factor x pin_memory x persistent_workers (and modes), measured under the rules
// of harness/sweep_rules.h, every point in one DB as one sweep; then the fastest points told
// apart, and the recommendation and the baseline re-run, interleaved, so that the advice rests
// on a measured speed-up; a stored sweep loaded to be resumed. A point is run by a PointRunner:
// our workloads (harness/sweep_command), or the user's own command with its DataLoader
// overridden (harness/job_sweep).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/trace_contract.h"
#include "harness/cli.h"
#include "harness/run_executor.h"
#include "harness/sweep_rules.h"

namespace ingero::harness {

// One configuration of a sweep. config: what the runner needs to run it (stored with the
// point); knobs: its loader knobs for the coordinate search ("" where one does not apply).
struct SweepPoint {
  std::string label;
  nlohmann::json config;
  Knobs knobs;
  int position = 0;
  std::string state{contract::point_state::kPending};  // contract::point_state
  std::string reason;
  std::string cause;  // contract::point_cause, "" for none
  PointProgress progress;
  double run_seconds = 0;  // the runs' wall time so far (the budget's estimate of the next run)
  int timed_runs = 0;
  bool on_path = true;  // the coordinate search has reached it
  bool needs_run() const { return state == contract::point_state::kPending && on_path; }
};

// What one run of a point measured.
struct PointRun {
  RunOutcome outcome;
  std::optional<std::string> failure;  // why the point failed (its samples are not used then)
  std::vector<double> samples;         // seconds per epoch (workloads) or per step (jobs)
  bool stopped_early = false;
  std::string stop_reason;
  std::optional<Knobs> knobs;          // the knobs the run had, where the point did not fix them
  nlohmann::json config_update = nlohmann::json::object();  // learned by the run, kept in the point's config
};

// What fitting a budget did: a note for the user, and the run that sized the cut when it
// measured the baseline as the search would (then it is the baseline's first measurement).
struct BudgetFit {
  std::optional<std::string> note;
  std::optional<PointRun> baseline_run;
  double baseline_run_s = 0;  // its wall time
};

class PointRunner {
 public:
  virtual ~PointRunner() = default;
  // deadline: stop a measurement this slow (seconds per sample); an Error stops the sweep.
  virtual Result<PointRun> run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                               std::optional<double> deadline, int64_t sweep_id) = 0;
  // Before a budgeted search: make the points' runs short enough that `runs` of them fit in
  // `seconds` (changing their configs), and say what was done; nothing by default.
  virtual Result<BudgetFit> fit_budget(tracer::TraceDb& db, std::vector<SweepPoint>& points,
                                       const std::string& baseline, int runs, double seconds, int64_t sweep_id) {
    return BudgetFit{};
  }
};

// A new sweep's points and how to run them, or what a resumed one still has to do.
struct SweepSpec {
  std::vector<SweepPoint> points;
  SweepRules rules;
  std::string baseline;
  nlohmann::json request;             // stored with a new sweep
  std::optional<int64_t> resume_id;
  std::string resume_status;          // the stored sweep's status when it was loaded, claimed from
  int verify_baseline = 0;            // verification runs a resumed sweep already made
  int verify_recommended = 0;
};

// The rules the flags ask for.
SweepRules rules_from(const SweepFlags& flags);
// Sets spec.baseline to `wanted` (default: the first point), or bad input naming the points.
Status choose_baseline(SweepSpec& spec, const std::string& wanted);

// Runs the search, the verification and the report of a sweep in the DB.
Result<int> run_sweep(SweepSpec spec, PointRunner& runner, const SweepFlags& flags);

// A sweep's plan as stored: its points (configs as JSON, budget-skipped ones pending again; the
// knobs a job point stored, a workload point's left to its command), rules, baseline, request,
// and its runs so far.
Result<SweepSpec> load_sweep(const std::string& db_path, std::optional<int64_t> id);

}  // namespace ingero::harness
