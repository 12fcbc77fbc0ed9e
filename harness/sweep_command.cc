// SPDX-License-Identifier: Apache-2.0
#include "harness/sweep_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/progress.h"
#include "harness/signals.h"
#include "harness/sweep_rules.h"
#include "reports/commands.h"
#include "reports/format.h"
#include "reports/report_text.h"

namespace ingero::harness {

namespace {

using reports::format_seconds;

struct Point {
  std::string label;
  workloads::WorkloadConfig config;
  int position = 0;
  std::string state = "pending";  // pending | measured | pruned | failed | skipped
  std::string reason;
  PointProgress progress;
  bool on_path = true;  // the coordinate search has reached it
  bool needs_run() const { return state == "pending" && on_path; }
};

// The knobs the coordinate search moves along ("" where one does not apply).
Knobs knobs_of(const workloads::WorkloadConfig& c) {
  const bool workers = c.num_workers > 0;
  return {{"mode", workloads::mode_name(c.mode)},
          {"num_workers", std::to_string(c.num_workers)},
          {"prefetch_factor", workers ? std::to_string(c.effective_prefetch_factor()) : ""},
          {"pin_memory", workloads::mode_uses_workers(c.mode) ? (c.pin_memory ? "on" : "off") : ""},
          {"persistent_workers", workers ? (c.persistent_workers ? "on" : "off") : ""}};
}

class Sweep {
 public:
  Sweep(tracer::TraceDb& db, int64_t id, std::vector<Point> points, SweepRules rules, std::string baseline,
        WorkloadSetup setup, const SweepFlags& flags)
      : db_(db), id_(id), points_(std::move(points)), rules_(std::move(rules)), baseline_(std::move(baseline)),
        setup_(std::move(setup)), flags_(flags), progress_(stdout) {}

  // The search; an Error only for what stops the whole sweep (the DB, the tracer).
  Result<int> search();
  // Re-runs baseline and recommendation, interleaved; returns the recommended point.
  Result<int> verify(std::optional<std::string>* recommended);
  void set_verify_runs_done(int baseline_runs, int recommended_runs) {
    verified_baseline_ = baseline_runs;
    verified_recommended_ = recommended_runs;
  }
  bool interrupted() const { return interrupted_; }
  int failures() const { return failures_; }

 private:
  // Runs every point on the path until each is decided.
  Result<int> measure_path();
  Result<RunOutcome> run(Point& point, const std::string& phase, std::optional<double> deadline);
  void settle(Point& point);
  std::optional<Best> best_except(const std::string& label) const;
  double eta_s(int runs_left) const;
  bool over_budget(int runs_left) const;
  Status store(const Point& point) {
    return db_.put_sweep_point(id_, {point.label, point.position, workloads::to_json(point.config).dump(),
                                     point.state, point.reason});
  }
  Point* find(const std::string& label) {
    for (auto& p : points_)
      if (p.label == label) return &p;
    return nullptr;
  }

  tracer::TraceDb& db_;
  const int64_t id_;
  std::vector<Point> points_;
  const SweepRules rules_;
  const std::string baseline_;
  WorkloadSetup setup_;
  const SweepFlags& flags_;
  Progress progress_;
  double run_seconds_ = 0;
  int runs_done_ = 0;
  int failures_ = 0;
  int verified_baseline_ = 0;
  int verified_recommended_ = 0;
  bool interrupted_ = false;
  bool budget_reached_ = false;
};

std::optional<Best> Sweep::best_except(const std::string& label) const {
  std::vector<std::pair<std::string, const PointProgress*>> measured;
  for (const auto& p : points_)
    if (p.state != "pruned" && p.state != "failed") measured.emplace_back(p.label, &p.progress);
  return best_point(measured, label, rules_);
}

double Sweep::eta_s(int runs_left) const {
  return runs_done_ > 0 ? run_seconds_ / runs_done_ * runs_left : 0;
}

// Over budget when the next run would end after it, keeping room for the verification.
bool Sweep::over_budget(int runs_left) const {
  if (flags_.budget_s <= 0 || runs_done_ == 0) return false;
  const double per_run = run_seconds_ / runs_done_;
  const double verify = 2.0 * rules_.verify_rounds * per_run;
  (void)runs_left;
  return progress_.elapsed_s() + per_run + verify > flags_.budget_s;
}

Result<RunOutcome> Sweep::run(Point& point, const std::string& phase, std::optional<double> deadline) {
  workloads::WorkloadConfig config = point.config;
  config.device = setup_.cuda ? "cuda" : "cpu";
  config.epoch_deadline_s = deadline.value_or(0);
  auto dir = PrivateDir::create("ingero-bench-run");
  if (!dir) return dir.error();
  auto request = workload_request(config, setup_, dir->path(), flags_.workload.out_dir);
  if (!request) return request.error();
  RunRequest req = std::move(*request);
  req.label = point.label;
  req.sweep_id = id_;
  req.sweep_point = point.label;
  req.sweep_phase = phase;
  const auto started = std::chrono::steady_clock::now();
  auto outcome = execute_run(req, db_, setup_.trace, setup_.machine_json);
  if (!outcome) return outcome.error();
  if (outcome->record_kept_at == dir->path() + "/result.json") dir->keep();
  run_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ++runs_done_;
  progress_.done();
  report_outcome(*outcome, setup_.cuda);
  if (outcome->status == contract::status::kInterrupted) interrupted_ = true;
  return outcome;
}

// Decides a point from its progress and the best of the others.
void Sweep::settle(Point& point) {
  Decision d = decide(point.progress, best_except(point.label), rules_);
  if (d.what == PointDecision::measure_again) return;
  // The baseline is what the advice is measured against: it is never dropped, only
  // measured until the rules are met or it has had its runs.
  if (d.what == PointDecision::prune && point.label == baseline_) {
    if (point.progress.runs < rules_.max_repeats && !point.progress.epochs.empty()) return;
    d = {PointDecision::done, "the baseline: kept although " + d.reason};
  }
  point.state = d.what == PointDecision::prune ? "pruned" : "measured";
  point.reason = d.reason;
  progress_.note(fmt::format("  {} {}: {}", point.label, point.state == "pruned" ? "dropped" : "measured", d.reason));
}

Result<int> Sweep::search() {
  if (!rules_.coordinate || rules_.exhaustive) return measure_path();
  std::vector<Knobs> knobs;
  for (auto& p : points_) {
    knobs.push_back(knobs_of(p.config));
    p.on_path = false;
  }
  auto best_index = [&]() -> size_t {
    if (auto b = best_except(""))
      for (size_t i = 0; i < points_.size(); ++i)
        if (points_[i].label == b->point) return i;
    return points_.size();
  };
  // Puts points on the path and measures them; false when the search must stop.
  auto walk = [&](std::vector<size_t> step, const std::string& what) -> Result<bool> {
    std::string labels;
    for (size_t i : step) {
      if (points_[i].on_path) continue;
      points_[i].on_path = true;
      labels += (labels.empty() ? "" : ", ") + points_[i].label;
    }
    if (labels.empty()) return true;
    progress_.note(fmt::format("search: {}: {}", what, labels));
    auto measured = measure_path();
    if (!measured) return measured.error();
    return !interrupted_ && !budget_reached_;
  };
  std::vector<size_t> first = first_search_stage(knobs);
  for (size_t i = 0; i < points_.size(); ++i)
    if (points_[i].label == baseline_) first.push_back(i);  // the advice is measured against it
  auto started = walk(first, "every mode x num_workers at the first value of the other knobs");
  if (!started || !*started) return started ? Result<int>(0) : Result<int>(started.error());
  // Round after round, each knob around the best point so far, until a whole round (every
  // knob once) leaves the best point where it was.
  for (int quiet = 0, k = 0; quiet < kCoordinateKnobCount; k = (k + 1) % kCoordinateKnobCount) {
    const size_t before = best_index();
    if (before >= points_.size()) break;
    const std::string knob = kCoordinateKnobs[k];
    auto stepped = walk(knob_neighbours(knobs, before, knob), knob + " around " + points_[before].label);
    if (!stepped) return stepped.error();
    if (!*stepped) return 0;
    quiet = best_index() == before ? quiet + 1 : 0;
  }
  const size_t best = best_index();
  for (size_t i = 0; i < points_.size(); ++i) {
    Point& p = points_[i];
    if (p.on_path || p.state != "pending") continue;
    std::string differs;
    if (best < points_.size())
      for (const auto& [knob, v] : knobs[i])
        if (knobs[best].at(knob) != v) differs += (differs.empty() ? "" : ", ") + knob;
    p.state = "skipped";
    p.reason = best < points_.size()
                   ? fmt::format("off the coordinate search's path: it differs from the best point ({}) in {}; "
                                 "no knob changed alone from a best point led to it",
                                 points_[best].label, differs)
                   : "off the coordinate search's path: no point was measured";
    if (Status s = store(p); !s) return s.error();
  }
  return 0;
}

Result<int> Sweep::measure_path() {
  for (int pass = 1;; ++pass) {
    std::vector<Point*> todo;
    for (auto& p : points_)
      if (p.needs_run()) todo.push_back(&p);
    if (todo.empty()) return 0;
    // The baseline first: the advice is measured against it, so a budget stop must not leave it out.
    std::stable_partition(todo.begin(), todo.end(), [&](const Point* p) { return p->label == baseline_; });
    for (size_t i = 0; i < todo.size(); ++i) {
      Point& point = *todo[i];
      if (!point.needs_run()) continue;  // decided since the pass began
      if (over_budget(static_cast<int>(todo.size() - i))) {
        for (auto& p : points_)
          if (p.needs_run()) {
            p.state = p.progress.epochs.empty() ? "skipped" : "measured";
            p.reason = fmt::format("the budget of {} was reached", format_clock(flags_.budget_s));
            if (Status s = store(p); !s) return s.error();
          }
        budget_reached_ = true;
        progress_.note(fmt::format("budget of {} reached: the remaining points are skipped",
                                   format_clock(flags_.budget_s)));
        return 0;
      }
      const auto best = best_except(point.label);
      progress_.step(static_cast<int>(i + 1), static_cast<int>(todo.size()),
                     fmt::format("pass {}: {}", pass, point.label), eta_s(static_cast<int>(todo.size() - i)),
                     best ? fmt::format("{} ({})", best->point, format_seconds(best->median_s)) : "");
      auto outcome =
          run(point, "measure", point.label == baseline_ ? std::nullopt : epoch_deadline(best, rules_));
      if (!outcome) return outcome.error();
      if (interrupted_) return 0;
      const auto& record = outcome->result;
      const std::string record_status = record ? record->value("status", "") : "";
      if (outcome->status != contract::status::kOk || (record_status != "ok" && record_status != "stopped")) {
        point.state = "failed";
        point.reason = record && record->contains("error") ? record->value("error", "") : outcome->child_exit;
        ++failures_;
      } else {
        ++point.progress.runs;
        for (const auto& e : (*record)["epoch_seconds"]) point.progress.epochs.push_back(e.get<double>());
        if (record_status == "stopped") {
          point.progress.stopped_early = true;
          point.progress.stop_reason = "stopped early: " + record->value("error", "");
        }
        settle(point);
      }
      if (!outcome->stored) ++failures_;
      if (Status s = store(point); !s) return s.error();
    }
  }
}

Result<int> Sweep::verify(std::optional<std::string>* recommended) {
  auto trace = reports::TraceFile::open(db_.path());
  if (!trace) return trace.error();
  auto report = reports::make_recommend_report(**trace, {db_.path(), id_, std::nullopt, false});
  if (!report) return report.error();
  const std::string rec = report->configs[report->recommended].label;
  *recommended = rec;
  if (rec == baseline_) {
    progress_.note(fmt::format("the baseline {} stays: nothing measured faster beyond noise; no re-runs needed", rec));
    return 0;
  }
  Point* base = find(baseline_);
  Point* best = find(rec);
  if (!base || !best) return Error::failure(fmt::format("sweep {} lost its point '{}'", id_, base ? rec : baseline_));
  progress_.note(fmt::format("verifying: {} against the baseline {}, {} interleaved rounds", rec, baseline_,
                             rules_.verify_rounds));
  for (int round = 0; round < rules_.verify_rounds; ++round) {
    // ABBA: the second round reverses the order, so that drift hits both alike.
    Point* order[2] = {base, best};
    if (round % 2 == 1) std::swap(order[0], order[1]);
    for (Point* p : order) {
      int& done = p == base ? verified_baseline_ : verified_recommended_;
      if (done > round) continue;  // made before a resume
      progress_.step(round + 1, rules_.verify_rounds, "verify: " + p->label, 0, "");
      auto outcome = run(*p, "verify", std::nullopt);
      if (!outcome) return outcome.error();
      if (interrupted_) return 0;
      if (outcome->status == contract::status::kOk) ++done;
      else ++failures_;
    }
  }
  return 0;
}

// ---- building or resuming a sweep -----------------------------------------------------

nlohmann::json request_json(const WorkloadFlags& f, const std::string& baseline) {
  return {{"modes", f.modes},
          {"num_workers", f.num_workers},
          {"prefetch_factor", f.prefetch_factors},
          {"pin_memory", f.pin_memory},
          {"persistent_workers", f.persistent_workers},
          {"base", workloads::to_json(f.base)},
          {"baseline", baseline}};
}

SweepRules rules_from(const SweepFlags& flags) {
  SweepRules rules;
  rules.max_repeats = flags.max_repeats;
  rules.verify_rounds = flags.verify_rounds;
  rules.exhaustive = flags.exhaustive;
  rules.coordinate = flags.search == "coordinate";
  return rules;
}

SweepRules rules_from_json(const nlohmann::json& j) {
  SweepRules r;
  r.confidence = j.value("confidence", r.confidence);
  r.tight_width = j.value("tight_width", r.tight_width);
  r.prune_factor = j.value("prune_factor", r.prune_factor);
  r.abort_factor = j.value("abort_factor", r.abort_factor);
  r.max_repeats = j.value("max_repeats", r.max_repeats);
  r.verify_rounds = j.value("verify_rounds", r.verify_rounds);
  r.exhaustive = j.value("exhaustive", r.exhaustive);
  r.coordinate = j.value("coordinate", false);  // sweeps before the coordinate search ran the grid
  return r;
}

struct Resumed {
  int64_t id;
  std::vector<Point> points;
  SweepRules rules;
  std::string baseline;
  int verify_baseline = 0;
  int verify_recommended = 0;
};

// What an interrupted sweep already measured: its points' states and their runs' epochs.
Result<Resumed> load_sweep(const std::string& db_path, std::optional<int64_t> id) {
  auto trace = reports::TraceFile::open(db_path);
  if (!trace) return trace.error();
  auto sweep = (*trace)->sweep(id);
  if (!sweep) return sweep.error();
  if (!*sweep)
    return Error::bad_input(id ? fmt::format("--resume {}: no such sweep in {}", *id, db_path)
                               : fmt::format("--resume: {} holds no sweep", db_path),
                            "pass the --db of the interrupted sweep (ingero-bench runs --db FILE shows sweeps)");
  if ((*sweep)->status == "done")
    return Error::bad_input(fmt::format("sweep {} in {} is complete; nothing to resume", (*sweep)->sweep_id, db_path),
                            fmt::format("ingero-bench recommend --db {} --sweep {} shows its result", db_path,
                                        (*sweep)->sweep_id));
  if ((*sweep)->status == contract::status::kRunning)
    return Error::bad_input(fmt::format("sweep {} is still running in another ingero-bench process", (*sweep)->sweep_id),
                            "wait for it, or stop it first");
  Resumed r{(*sweep)->sweep_id, {}, rules_from_json((*sweep)->rules), (*sweep)->baseline_point};
  auto points = (*trace)->sweep_points(r.id);
  if (!points) return points.error();
  for (const auto& p : *points) {
    auto config = workloads::config_from_json(p.config);
    if (!config) return config.error();
    Point point{p.point, *config, static_cast<int>(p.position), p.state, p.reason, {}};
    if (point.state == "skipped") point.state = "pending";  // a budget stop: measure it now
    r.points.push_back(std::move(point));
  }
  auto runs = (*trace)->runs();
  if (!runs) return runs.error();
  for (const auto& run : *runs) {
    if (run.sweep_id != r.id || run.status != contract::status::kOk) continue;
    if (run.sweep_phase == "verify") {
      (run.sweep_point == r.baseline ? r.verify_baseline : r.verify_recommended)++;
      continue;
    }
    for (auto& p : r.points) {
      if (p.label != run.sweep_point) continue;
      ++p.progress.runs;
      for (double e : reports::measured_epochs(run)) p.progress.epochs.push_back(e);
      if (run.result.is_object() && run.result.value("status", "") == "stopped") {
        p.progress.stopped_early = true;
        p.progress.stop_reason = "stopped early: " + run.result.value("error", "");
      }
    }
  }
  return r;
}

Result<int> print_report(const std::string& db_path, int64_t id) {
  auto trace = reports::TraceFile::open(db_path);
  if (!trace) return trace.error();
  auto report = reports::make_recommend_report(**trace, {db_path, id, std::nullopt, false});
  if (!report) return report.error();
  std::printf("\n");
  reports::render_text(*report, std::cout);
  return 0;
}

}  // namespace

Result<int> run_sweep_command(const SweepFlags& flags) {
  std::vector<Point> points;
  SweepRules rules = rules_from(flags);
  std::string baseline = flags.baseline;
  std::optional<int64_t> resume_id;
  int verify_baseline = 0, verify_recommended = 0;
  WorkloadSetup setup;
  if (flags.resume) {
    auto resumed = load_sweep(flags.workload.trace.db, flags.sweep_id);
    if (!resumed) return resumed.error();
    resume_id = resumed->id;
    points = std::move(resumed->points);
    rules = resumed->rules;
    baseline = resumed->baseline;
    verify_baseline = resumed->verify_baseline;
    verify_recommended = resumed->verify_recommended;
    RunPlan plan;
    for (const auto& p : points) plan.runs.push_back(p.config);
    auto cuda = resolve_cuda(points.empty() ? "auto" : points.front().config.device);
    if (!cuda) return cuda.error();
    auto env = prepare_environment(flags.workload, std::move(plan), *cuda);
    if (!env) return env.error();
    setup = std::move(*env);
  } else {
    auto prepared = prepare_workloads(flags.workload);
    if (!prepared) return prepared.error();
    setup = std::move(*prepared);
    int position = 0;
    for (const auto& config : setup.plan.runs) {
      Point point;
      point.label = config.label();
      point.config = config;
      point.position = position++;
      points.push_back(std::move(point));
    }
    if (baseline.empty()) baseline = points.front().label;
    if (std::none_of(points.begin(), points.end(), [&](const Point& p) { return p.label == baseline; })) {
      std::string labels;
      for (const auto& p : points) labels += (labels.empty() ? "" : ", ") + p.label;
      return Error::bad_input(fmt::format("--baseline '{}' is not a point of this sweep", baseline),
                              "use one of: " + labels);
    }
  }
  if (!setup.plan.scaling_note.empty()) std::printf("note: %s\n", setup.plan.scaling_note.c_str());
  for (const auto& warning : setup.plan.warnings) std::printf("warning: %s\n", warning.c_str());

  auto db = tracer::TraceDb::open(flags.workload.trace.db);
  if (!db) return db.error();
  int64_t id;
  if (resume_id) {
    id = *resume_id;
    if (Status s = db->resume_sweep(id); !s) return s.error();
    const auto done = std::count_if(points.begin(), points.end(), [](const Point& p) { return !p.needs_run(); });
    std::printf("resuming sweep %lld: %zu of %zu points already decided\n", static_cast<long long>(id),
                static_cast<size_t>(done), points.size());
  } else {
    auto created = db->begin_sweep({request_json(flags.workload, baseline).dump(), rules.to_json().dump()});
    if (!created) return created.error();
    id = *created;
    for (const auto& p : points)
      if (Status s = db->put_sweep_point(id, {p.label, p.position, workloads::to_json(p.config).dump(), p.state, ""}); !s)
        return s.error();
    if (Status s = db->finish_sweep(id, "running", baseline, std::nullopt); !s) return s.error();
    std::printf("sweep %lld: %zu points, baseline %s\nrules: %s\n", static_cast<long long>(id), points.size(),
                baseline.c_str(), rules.describe().c_str());
  }
  Sweep sweep(*db, id, std::move(points), rules, baseline, std::move(setup), flags);
  sweep.set_verify_runs_done(verify_baseline, verify_recommended);
  auto searched = sweep.search();
  std::optional<std::string> recommended;
  if (searched && !sweep.interrupted()) searched = sweep.verify(&recommended);
  const std::string status = !searched ? "failed" : sweep.interrupted() ? "interrupted" : "done";
  (void)db->finish_sweep(id, status, baseline, recommended);
  if (!searched) return searched.error();
  if (sweep.interrupted()) {
    std::fprintf(stderr, "sweep %lld interrupted; resume it with: ingero-bench sweep --resume %lld --db %s\n",
                 static_cast<long long>(id), static_cast<long long>(id), flags.workload.trace.db.c_str());
    return interrupt_exit_code();
  }
  if (auto printed = print_report(flags.workload.trace.db, id); !printed) return printed.error();
  return sweep.failures() > 0 ? kExitFailure : kExitOk;
}

}  // namespace ingero::harness
