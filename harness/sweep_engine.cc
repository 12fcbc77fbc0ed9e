// SPDX-License-Identifier: Apache-2.0
#include "harness/sweep_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/progress.h"
#include "harness/signals.h"
#include "harness/sweep_rules.h"
#include "reports/analysis/change_checks.h"
#include "reports/documents/trace_reports.h"
#include "reports/render/report_text.h"
#include "reports/text/format.h"

namespace ingero::harness {

namespace {

using reports::format_seconds;

class Sweep {
 public:
  Sweep(tracer::TraceDb& db, int64_t id, std::vector<SweepPoint> points, SweepRules rules, std::string baseline,
        nlohmann::json request, PointRunner& runner, const SweepFlags& flags)
      : db_(db), id_(id), points_(std::move(points)), rules_(std::move(rules)), baseline_(std::move(baseline)),
        request_(std::move(request)), runner_(runner), flags_(flags), progress_(stdout) {}

  // The search; an Error only for what stops the whole sweep (the DB, the tracer, a job whose
  // loader cannot be changed).
  Result<int> search();
  // Before verifying: repeats the fastest points until their intervals lie apart, so that a point
  // is not recommended over a faster one only because it was measured too little to tell.
  Result<int> separate();
  // Re-runs baseline and recommendation, interleaved; returns the recommended point.
  Result<int> verify(std::optional<std::string>* recommended);
  void set_verify_runs_done(int baseline_runs, int recommended_runs) {
    verified_baseline_ = baseline_runs;
    verified_recommended_ = recommended_runs;
  }
  bool interrupted() const { return interrupted_; }
  int failures() const { return failures_; }

 private:
  // Runs every point on the path until each is decided; under a budget, breadth first: each
  // point's first measurement now, its repeats after the search (repeat_undecided).
  Result<int> measure_path();
  Result<int> repeat_undecided();
  Result<bool> measure(SweepPoint& point, int index, int total, const std::string& what);
  Status absorb(SweepPoint& point, const PointRun& outcome);
  Result<PointRun> run(SweepPoint& point, std::string_view phase, std::optional<double> deadline);
  void count_run_time(SweepPoint& point, double seconds);
  void settle(SweepPoint& point);
  Status learn_knobs(SweepPoint& point, const Knobs& knobs);
  std::optional<Best> best_except(const std::string& label) const;
  // A run's expected wall time: its own runs', else the other measured points' (the median), else
  // the baseline's.
  double cost_s(const SweepPoint& point) const;
  double verification_round_s() const;
  bool over_budget(const SweepPoint& next) const;
  Status stop_for_budget();
  Status store(const SweepPoint& point) {
    return db_.put_sweep_point(id_, {point.label, point.position, point.config.dump(), point.state, point.reason, point.cause});
  }
  SweepPoint* find(const std::string& label) {
    for (auto& p : points_)
      if (p.label == label) return &p;
    return nullptr;
  }
  const SweepPoint* find(const std::string& label) const { return const_cast<Sweep*>(this)->find(label); }
  bool breadth_first() const { return flags_.budget_s > 0 && !rules_.exhaustive; }
  // The recommendation the report would make now, and the points it chooses among.
  struct Choice {
    std::string recommended;
    std::vector<std::pair<std::string, const PointProgress*>> measured;
  };
  Result<Choice> current_choice();
  void say_not_apart(const Separation& s, const std::string& recommended, const std::string& why);
  std::string settle_command(const std::vector<std::string>& contenders) const;
  Status fit_budget();

  tracer::TraceDb& db_;
  const int64_t id_;
  std::vector<SweepPoint> points_;
  const SweepRules rules_;
  const std::string baseline_;
  const nlohmann::json request_;  // as stored with the sweep
  PointRunner& runner_;
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
    if (p.state != contract::point_state::kPruned && p.state != contract::point_state::kFailed)
      measured.emplace_back(p.label, &p.progress);
  return best_point(measured, label, rules_);
}

double Sweep::cost_s(const SweepPoint& point) const {
  if (point.timed_runs > 0) return point.run_seconds / point.timed_runs;
  std::vector<double> others;
  for (const auto& p : points_)
    if (p.timed_runs > 0 && p.label != baseline_) others.push_back(p.run_seconds / p.timed_runs);
  if (!others.empty()) return reports::median(others);
  const SweepPoint* base = nullptr;
  for (const auto& p : points_)
    if (p.label == baseline_) base = &p;
  return base && base->timed_runs > 0 ? base->run_seconds / base->timed_runs : 0;
}

// One interleaved round: the baseline and the best other point so far.
double Sweep::verification_round_s() const {
  double base = 0, best = 0;
  const auto b = best_except(baseline_);
  for (const auto& p : points_) {
    if (p.label == baseline_) base = cost_s(p);
    if (b && p.label == b->point) best = cost_s(p);
  }
  return base + (b ? best : base);
}

// Over budget when the next run would end after it, keeping one verification round.
bool Sweep::over_budget(const SweepPoint& next) const {
  if (flags_.budget_s <= 0 || runs_done_ == 0) return false;
  const bool is_baseline = next.label == baseline_;
  const double keep = is_baseline ? 0 : verification_round_s();
  return progress_.elapsed_s() + cost_s(next) + keep > flags_.budget_s;
}

Status Sweep::stop_for_budget() {
  for (auto& p : points_)
    if (p.state == contract::point_state::kPending) {
      p.state = p.progress.epochs.empty() ? contract::point_state::kSkipped : contract::point_state::kMeasured;
      p.cause = contract::point_cause::kBudget;
      p.reason = !p.progress.epochs.empty()
                     ? fmt::format("the budget of {} was reached after {} run{}", format_clock(flags_.budget_s),
                                   p.progress.runs, p.progress.runs == 1 ? "" : "s")
                 : p.on_path ? fmt::format("the budget of {} was reached (a run of it: ~{} estimated)",
                                           format_clock(flags_.budget_s), format_clock(cost_s(p)))
                             : fmt::format("the budget of {} was reached before the search came to it",
                                           format_clock(flags_.budget_s));
      if (Status s = store(p); !s) return s;
    }
  budget_reached_ = true;
  progress_.note(fmt::format("budget of {} reached: the remaining points are skipped", format_clock(flags_.budget_s)));
  return {};
}

// A run's wall time, in the sweep's and its point's: what the budget estimates the next runs from.
void Sweep::count_run_time(SweepPoint& point, double seconds) {
  run_seconds_ += seconds;
  ++runs_done_;
  point.run_seconds += seconds;
  ++point.timed_runs;
}

Result<PointRun> Sweep::run(SweepPoint& point, std::string_view phase, std::optional<double> deadline) {
  const auto started = std::chrono::steady_clock::now();
  auto result = runner_.run(db_, point, phase, deadline, id_);
  if (!result) return result.error();
  count_run_time(point, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  progress_.done();
  if (result->outcome.status == contract::status::kInterrupted) interrupted_ = true;
  return result;
}

// Decides a point from its progress and the best of the others.
void Sweep::settle(SweepPoint& point) {
  Decision d = decide(point.progress, best_except(point.label), rules_);
  if (d.what == PointDecision::measure_again) return;
  // The baseline is what the advice is measured against: it is never dropped, only
  // measured until the rules are met or it has had its runs.
  if (d.what == PointDecision::prune && point.label == baseline_) {
    if (point.progress.runs < rules_.max_repeats && !point.progress.epochs.empty()) return;
    d = {PointDecision::done, "the baseline: kept although " + d.reason};
  }
  point.state = d.what == PointDecision::prune ? contract::point_state::kPruned : contract::point_state::kMeasured;
  point.reason = d.reason;
  point.cause.clear();
  const bool dropped = point.state == contract::point_state::kPruned;
  progress_.note(fmt::format("  {} {}: {}", point.label, dropped ? "dropped" : "measured", d.reason));
}

// A fresh budgeted sweep first makes its runs short enough for the budget (the runner decides).
Status Sweep::fit_budget() {
  if (!breadth_first() || std::any_of(points_.begin(), points_.end(), [](const SweepPoint& p) { return p.timed_runs > 0; }))
    return {};
  std::vector<Knobs> knobs;
  for (const auto& p : points_) knobs.push_back(p.knobs);
  const int runs = static_cast<int>(rules_.coordinate ? first_search_stage(knobs).size() : points_.size()) + 2;
  auto fit = runner_.fit_budget(db_, points_, baseline_, runs, flags_.budget_s - progress_.elapsed_s(), id_);
  if (!fit) return fit.error();
  if (!fit->note) return {};
  progress_.note("budget: " + *fit->note);
  for (const auto& p : points_)
    if (Status s = store(p); !s) return s;
  SweepPoint* base = find(baseline_);
  if (!fit->baseline_run || !base) return {};
  count_run_time(*base, fit->baseline_run_s);
  return absorb(*base, *fit->baseline_run);
}

Result<int> Sweep::search() {
  if (Status s = fit_budget(); !s) return s.error();
  if (!rules_.coordinate || rules_.exhaustive) {
    auto measured = measure_path();
    if (!measured || interrupted_ || budget_reached_) return measured;
    return repeat_undecided();
  }
  // A point's knobs can be learned from its first run (a job measured as written): read afresh.
  auto knobs = [&] {
    std::vector<Knobs> all;
    for (const auto& p : points_) all.push_back(p.knobs);
    return all;
  };
  for (auto& p : points_) p.on_path = false;
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
  std::vector<size_t> first = first_search_stage(knobs());
  for (size_t i = 0; i < points_.size(); ++i)
    if (points_[i].label == baseline_) first.insert(first.begin(), i);  // the advice is measured against it
  auto started = walk(first, "every mode x num_workers at the first value of the other knobs");
  if (!started || !*started) return started ? Result<int>(0) : Result<int>(started.error());
  // Round after round, each knob around the best point so far, until a whole round (every
  // knob once) leaves the best point where it was.
  for (int quiet = 0, k = 0; quiet < kCoordinateKnobCount; k = (k + 1) % kCoordinateKnobCount) {
    const size_t before = best_index();
    if (before >= points_.size()) break;
    const std::string knob = kCoordinateKnobs[k];
    auto stepped = walk(knob_neighbours(knobs(), before, knob), knob + " around " + points_[before].label);
    if (!stepped) return stepped.error();
    if (!*stepped) return 0;
    quiet = best_index() == before ? quiet + 1 : 0;
  }
  const size_t best = best_index();
  for (size_t i = 0; i < points_.size(); ++i) {
    SweepPoint& p = points_[i];
    if (p.on_path || p.state != contract::point_state::kPending) continue;
    std::string differs;
    if (best < points_.size())
      for (const auto& [knob, v] : p.knobs) {
        const Knobs& theirs = points_[best].knobs;
        if (!theirs.has(knob) || theirs.get(knob) != v) differs += (differs.empty() ? "" : ", ") + knob;
      }
    p.state = contract::point_state::kSkipped;
    p.cause = contract::point_cause::kOffPath;
    p.reason = best < points_.size()
                   ? fmt::format("off the coordinate search's path: it differs from the best point ({}) in {}; "
                                 "no knob changed alone from a best point led to it",
                                 points_[best].label, differs)
                   : "off the coordinate search's path: no point was measured";
    if (Status s = store(p); !s) return s.error();
  }
  return repeat_undecided();
}

// A point whose knobs its first run told (the job as written). Points that would run the same
// knobs are that point: they are not run again.
Status Sweep::learn_knobs(SweepPoint& point, const Knobs& knobs) {
  point.knobs = knobs;
  point.config["knobs"] = nlohmann::json(knobs);
  for (auto& other : points_) {
    if (&other == &point || other.state != contract::point_state::kPending || other.progress.runs > 0 ||
        other.knobs.empty())
      continue;
    bool same = true;
    for (const auto& [knob, value] : other.knobs) same &= value.empty() || knobs.get(knob) == value;
    if (!same) continue;
    other.state = contract::point_state::kSkipped;
    other.cause = contract::point_cause::kDuplicate;
    other.reason = fmt::format("the same knobs as {}, measured as that point", point.label);
    // Unstored, the DB would keep the point pending, and a resumed sweep would run it again.
    if (Status s = store(other); !s) return s;
  }
  return {};
}

// One measurement of a point; false when the sweep must stop (interrupted, budget).
Result<bool> Sweep::measure(SweepPoint& point, int index, int total, const std::string& what) {
  if (over_budget(point)) {
    if (Status s = stop_for_budget(); !s) return s.error();
    return false;
  }
  const auto best = best_except(point.label);
  const double eta = runs_done_ > 0 ? run_seconds_ / runs_done_ * (total - index + 1) : 0;
  progress_.step(index, total, what, eta, best ? fmt::format("{} ({})", best->point, format_seconds(best->median_s)) : "");
  auto outcome = run(point, contract::sweep_phase::kMeasure,
                     point.label == baseline_ ? std::nullopt : epoch_deadline(best, rules_));
  if (!outcome) return outcome.error();
  if (interrupted_) return false;
  if (Status s = absorb(point, *outcome); !s) return s.error();
  return true;
}

// A point's measurement, taken into its progress and decided.
Status Sweep::absorb(SweepPoint& point, const PointRun& outcome) {
  for (const auto& [key, value] : outcome.config_update.items()) point.config[key] = value;
  if (outcome.knobs && point.knobs.empty())
    if (Status s = learn_knobs(point, *outcome.knobs); !s) return s;
  if (outcome.failure) {
    point.state = contract::point_state::kFailed;
    point.reason = *outcome.failure;
    point.cause.clear();
    ++failures_;
    progress_.note(fmt::format("  {} failed: {}", point.label, point.reason));
  } else {
    ++point.progress.runs;
    point.progress.epochs.insert(point.progress.epochs.end(), outcome.samples.begin(), outcome.samples.end());
    if (outcome.stopped_early) {
      point.progress.stopped_early = true;
      point.progress.stop_reason = outcome.stop_reason;
    }
    settle(point);
  }
  if (!outcome.outcome.stored || outcome.outcome.record_error) ++failures_;
  return store(point);
}

Result<int> Sweep::measure_path() {
  for (int pass = 1;; ++pass) {
    std::vector<SweepPoint*> todo;
    for (auto& p : points_)
      if (p.needs_run() && (!breadth_first() || p.progress.runs == 0)) todo.push_back(&p);
    if (todo.empty()) return 0;
    // The baseline first: the advice is measured against it, so a budget stop must not leave it out.
    std::stable_partition(todo.begin(), todo.end(), [&](const SweepPoint* p) { return p->label == baseline_; });
    for (size_t i = 0; i < todo.size(); ++i) {
      SweepPoint& point = *todo[i];
      if (!point.needs_run()) continue;  // decided since the pass began
      auto go = measure(point, static_cast<int>(i + 1), static_cast<int>(todo.size()),
                        fmt::format("pass {}: {}", pass, point.label));
      if (!go) return go.error();
      if (!*go) return 0;
    }
  }
}

// Breadth first under a budget: the points the search measured once, repeated while the budget
// lasts, the least measured first (the baseline first among equals).
Result<int> Sweep::repeat_undecided() {
  if (!breadth_first() || interrupted_ || budget_reached_) return 0;
  for (int round = 1;; ++round) {
    std::vector<SweepPoint*> todo;
    for (auto& p : points_)
      if (p.needs_run()) todo.push_back(&p);
    if (todo.empty()) return 0;
    std::stable_sort(todo.begin(), todo.end(), [&](const SweepPoint* a, const SweepPoint* b) {
      if (a->progress.runs != b->progress.runs) return a->progress.runs < b->progress.runs;
      return a->label == baseline_ && b->label != baseline_;
    });
    for (size_t i = 0; i < todo.size(); ++i) {
      SweepPoint& point = *todo[i];
      if (!point.needs_run()) continue;
      auto go = measure(point, static_cast<int>(i + 1), static_cast<int>(todo.size()),
                        fmt::format("repeat {}: {}", round, point.label));
      if (!go) return go.error();
      if (!*go) return 0;
    }
  }
}

Result<Sweep::Choice> Sweep::current_choice() {
  auto trace = reports::TraceFile::open(db_.path());
  if (!trace) return trace.error();
  auto report = reports::make_recommend_report(**trace, {db_.path(), id_, std::nullopt, false});
  if (!report) return report.error();
  Choice choice{report->configs[report->recommended].label, {}};
  // The points the recommendation chooses among: measured, and from the fastest it may recommend on.
  for (size_t i = static_cast<size_t>(std::max(report->fastest, 0)); i < report->configs.size(); ++i)
    if (const SweepPoint* p = report->configs[i].measured() ? find(report->configs[i].label) : nullptr)
      choice.measured.emplace_back(p->label, &p->progress);
  return choice;
}

Result<int> Sweep::separate() {
  for (int round = 1;; ++round) {
    auto choice = current_choice();
    if (!choice) return choice.error();
    const Separation s = harness::separate(choice->measured, choice->recommended, rules_);
    if (s.apart) {
      if (round > 1)
        progress_.note(fmt::format("told apart: {} is now recommended, its interval apart from the others'",
                                   choice->recommended));
      return 0;
    }
    if (s.repeat.empty()) {
      say_not_apart(s, choice->recommended,
                    s.most_runs ? fmt::format("after {} runs each at most", rules_.separate_repeats)
                                : fmt::format("though each interval is within {:g} % of its median",
                                              rules_.tight_width * 100));
      return 0;
    }
    if (round == 1) {
      std::string names;
      for (const auto& c : s.contenders) names += (names.empty() ? "" : ", ") + c;
      progress_.note(fmt::format("separating the fastest points before verifying: {} are not told apart yet, and "
                                 "{} would be recommended as the cheaper",
                                 names, choice->recommended));
    }
    for (size_t i = 0; i < s.repeat.size(); ++i) {
      SweepPoint* point = find(s.repeat[i]);
      if (!point) return Error::failure(fmt::format("sweep {} lost its point '{}'", id_, s.repeat[i]));
      if (over_budget(*point)) {
        say_not_apart(s, choice->recommended, fmt::format("when the budget of {} ended", format_clock(flags_.budget_s)));
        return 0;
      }
      progress_.step(static_cast<int>(i + 1), static_cast<int>(s.repeat.size()),
                     fmt::format("separate {}: {}", round, point->label), 0, "");
      auto outcome = run(*point, contract::sweep_phase::kMeasure, std::nullopt);
      if (!outcome) return outcome.error();
      if (interrupted_) return 0;
      if (Status st = absorb(*point, *outcome); !st) return st.error();
    }
  }
}

// The recommendation stays the cheaper point while a faster one could not be told apart from it:
// how much faster that one measured, and what would settle it.
void Sweep::say_not_apart(const Separation& s, const std::string& recommended, const std::string& why) {
  const SweepPoint* fastest = find(s.contenders.front());
  const SweepPoint* rec = find(recommended);
  if (!fastest || !rec || fastest == rec) return;
  const double fast_s = reports::median(fastest->progress.epochs);
  const double rec_s = reports::median(rec->progress.epochs);
  progress_.note(fmt::format(
      "not told apart {}: {} measured {} faster than {} ({} against {}, {} and {} runs), but their intervals "
      "overlap, so the cheaper {} stays recommended; to settle it, measure them alone with more runs: {}",
      why, fastest->label, reports::format_ratio(fast_s > 0 ? rec_s / fast_s : 1), rec->label,
      format_seconds(fast_s), format_seconds(rec_s), fastest->progress.runs, rec->progress.runs, rec->label,
      settle_command(s.contenders)));
}

// A sweep of the contenders alone, each searched as far as this one could separate them (and so
// separated twice as far), with the budget that takes if this one had one.
std::string Sweep::settle_command(const std::vector<std::string>& contenders) const {
  const int repeats = rules_.separate_repeats;
  std::string flags;
  for (const char* name : {knob::kMode, knob::kNumWorkers, knob::kPrefetchFactor, knob::kPinMemory,
                           knob::kPersistentWorkers}) {
    std::vector<std::string> values;
    for (const auto& label : contenders)
      if (const SweepPoint* p = find(label)) {
        const std::string& v = p->knobs.get(name);
        if (!v.empty() && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
    if (values.empty() || (name == std::string(knob::kMode) && values.front() == contract::kJobMode)) continue;
    std::string flag = name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    flags += fmt::format(" --{} {}", flag, joined);
  }
  double needed_s = 0;
  for (const auto& label : contenders)
    if (const SweepPoint* p = find(label)) needed_s += cost_s(*p) * (repeats + rules_.verify_rounds);
  if (flags_.budget_s > 0) flags += fmt::format(" --budget {:.0f}", std::ceil(needed_s / 10) * 10);
  flags += fmt::format(" --max-repeats {} --db {}", repeats, reports::shell_quoted(db_.path()));
  if (flags_.workload.trace.no_trace) flags += " --no-trace";
  const nlohmann::json command = request_.is_object() ? request_.value("command", nlohmann::json::array())
                                                      : nlohmann::json::array();
  if (!command.is_array() || command.empty())
    return "ingero-bench sweep" + flags + " (with this sweep's other workload flags)";
  // A job's timing as this sweep's (its steps, or seconds, after the same warm-up).
  for (const char* key : {"warmup_steps", "steps", "seconds", "loader"})
    if (request_.contains(key) && request_[key].is_number() &&
        (request_[key].get<double>() > 0 || key == std::string("warmup_steps"))) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      flags += fmt::format(" --{} {:g}", flag, request_[key].get<double>());
    }
  std::string argv;
  for (const auto& arg : command) argv += " " + reports::shell_quoted(arg.get<std::string>());
  return "ingero-bench sweep" + flags + " --" + argv;
}

Result<int> Sweep::verify(std::optional<std::string>* recommended) {
  auto trace = reports::TraceFile::open(db_.path());
  if (!trace) return trace.error();
  auto report = reports::make_recommend_report(**trace, {db_.path(), id_, std::nullopt, false});
  if (!report) return report.error();
  const std::string rec = report->configs[report->recommended].label;
  *recommended = rec;
  if (rec == baseline_) {
    progress_.note(report->alternative_measured
                       ? fmt::format("the baseline {} stays: nothing measured faster beyond noise; no re-runs needed", rec)
                       : fmt::format("no alternative to the baseline {} was measured: nothing to verify", rec));
    return 0;
  }
  SweepPoint* base = find(baseline_);
  SweepPoint* best = find(rec);
  if (!base || !best) return Error::failure(fmt::format("sweep {} lost its point '{}'", id_, base ? rec : baseline_));
  // Under a budget, as many rounds as it still covers (at least one: the search kept room for it).
  int rounds = rules_.verify_rounds;
  if (flags_.budget_s > 0) {
    const double round_s = cost_s(*base) + cost_s(*best);
    const double left = flags_.budget_s - progress_.elapsed_s();
    const int fits = round_s > 0 ? static_cast<int>(left / round_s) : rounds;
    if (fits < rounds) {
      rounds = std::max(1, fits);
      progress_.note(fmt::format("the budget leaves room for {} of the {} verification rounds", rounds,
                                 rules_.verify_rounds));
    }
  }
  progress_.note(fmt::format("verifying: {} against the baseline {}, {} interleaved round{}", rec, baseline_, rounds,
                             rounds == 1 ? "" : "s"));
  for (int round = 0; round < rounds; ++round) {
    // ABBA: the second round reverses the order, so that drift hits both alike.
    SweepPoint* order[2] = {base, best};
    if (round % 2 == 1) std::swap(order[0], order[1]);
    for (SweepPoint* p : order) {
      int& done = p == base ? verified_baseline_ : verified_recommended_;
      if (done > round) continue;  // made before a resume
      progress_.step(round + 1, rounds, "verify: " + p->label, 0, "");
      auto outcome = run(*p, contract::sweep_phase::kVerify, std::nullopt);
      if (!outcome) return outcome.error();
      if (interrupted_) return 0;
      if (outcome->outcome.status == contract::status::kOk && !outcome->failure) ++done;
      else ++failures_;
    }
  }
  return 0;
}

// ---- resuming a sweep, running it ---------------------------------------------------

// The stored rules' fields have the types rules_from_json reads (else it would throw).
Status check_rules_json(const nlohmann::json& j, const std::string& db_path, int64_t sweep_id) {
  std::string bad = j.is_object() ? "" : fmt::format("it is {}, not an object", j.type_name());
  for (const char* key : {"confidence", "tight_width", "prune_factor", "abort_factor", "max_repeats", "verify_rounds",
                          "separate_repeats", "exhaustive", "coordinate"}) {
    const auto value = j.is_object() ? j.find(key) : j.end();
    const bool flag = std::string_view(key) == "exhaustive" || std::string_view(key) == "coordinate";
    if (bad.empty() && j.is_object() && value != j.end() && !(flag ? value->is_boolean() : value->is_number()))
      bad = fmt::format("'{}' is {}, not {}", key, value->type_name(), flag ? "true or false" : "a number");
  }
  if (bad.empty()) return {};
  return Error::bad_input(fmt::format("'{}': sweep {}'s rules_json is damaged: {}", db_path, sweep_id, bad),
                          "the file was changed outside ingero-bench; start the sweep again into a new --db");
}

SweepRules rules_from_json(const nlohmann::json& j) {
  SweepRules r;
  r.confidence = j.value("confidence", r.confidence);
  r.tight_width = j.value("tight_width", r.tight_width);
  r.prune_factor = j.value("prune_factor", r.prune_factor);
  r.abort_factor = j.value("abort_factor", r.abort_factor);
  r.max_repeats = j.value("max_repeats", r.max_repeats);
  r.verify_rounds = j.value("verify_rounds", r.verify_rounds);
  r.separate_repeats = j.value("separate_repeats", 2 * r.max_repeats);
  r.exhaustive = j.value("exhaustive", r.exhaustive);
  r.coordinate = j.value("coordinate", false);  // sweeps before the coordinate search ran the grid
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

SweepRules rules_from(const SweepFlags& flags) {
  SweepRules rules;
  rules.max_repeats = flags.max_repeats;
  rules.verify_rounds = flags.verify_rounds;
  rules.separate_repeats = 2 * flags.max_repeats;
  rules.exhaustive = flags.exhaustive;
  rules.coordinate = flags.search == "coordinate";
  return rules;
}

Status choose_baseline(SweepSpec& spec, const std::string& wanted) {
  spec.baseline = wanted.empty() ? spec.points.front().label : wanted;
  if (std::any_of(spec.points.begin(), spec.points.end(), [&](const SweepPoint& p) { return p.label == spec.baseline; }))
    return {};
  std::string labels;
  for (const auto& p : spec.points) labels += (labels.empty() ? "" : ", ") + p.label;
  return Error::bad_input(fmt::format("--baseline '{}' is not a point of this sweep", spec.baseline),
                          "use one of: " + labels);
}

Result<SweepSpec> load_sweep(const std::string& db_path, std::optional<int64_t> id) {
  auto trace = reports::TraceFile::open(db_path);
  if (!trace) return trace.error();
  auto sweep = (*trace)->sweep(id);
  if (!sweep) return sweep.error();
  if (!*sweep)
    return Error::bad_input(id ? fmt::format("--resume {}: no such sweep in {}", *id, db_path)
                               : fmt::format("--resume: {} holds no sweep", db_path),
                            "pass the --db of the interrupted sweep (ingero-bench runs --db FILE shows sweeps)");
  auto stored_points = (*trace)->sweep_points((*sweep)->sweep_id);
  if (!stored_points) return stored_points.error();
  // A sweep its budget stopped is done, yet can be extended: its skipped points are measured then.
  const bool budget_skipped = std::any_of(stored_points->begin(), stored_points->end(), [](const auto& p) {
    return p.state == contract::point_state::kSkipped && p.cause == contract::point_cause::kBudget;
  });
  if ((*sweep)->status == contract::sweep_status::kDone && !budget_skipped)
    return Error::bad_input(fmt::format("sweep {} in {} is complete; nothing to resume", (*sweep)->sweep_id, db_path),
                            fmt::format("ingero-bench recommend --db {} --sweep {} shows its result", db_path,
                                        (*sweep)->sweep_id));
  if ((*sweep)->status == contract::sweep_status::kRunning)
    return Error::bad_input(fmt::format("sweep {} is still running in another ingero-bench process", (*sweep)->sweep_id),
                            "wait for it, or stop it first");
  SweepSpec spec;
  spec.resume_id = (*sweep)->sweep_id;
  spec.resume_status = (*sweep)->status;
  if (Status s = check_rules_json((*sweep)->rules, db_path, (*sweep)->sweep_id); !s) return s.error();
  spec.rules = rules_from_json((*sweep)->rules);
  spec.baseline = (*sweep)->baseline_point;
  spec.request = (*sweep)->request;
  for (const auto& p : *stored_points) {
    SweepPoint point;
    point.label = p.point;
    point.config = p.config;
    point.position = static_cast<int>(p.position);
    const bool resumable = p.state == contract::point_state::kSkipped &&
                           (!budget_skipped || p.cause == contract::point_cause::kBudget);
    point.state = resumable ? std::string(contract::point_state::kPending) : p.state;  // a stop: measure it now
    point.reason = resumable ? "" : p.reason;
    point.cause = resumable ? "" : p.cause;
    // A job point's knobs are stored with it; a workload point's are read from its config by the
    // command that resumes it.
    point.knobs = p.config.value("knobs", Knobs{});
    spec.points.push_back(std::move(point));
  }
  auto runs = (*trace)->runs();
  if (!runs) return runs.error();
  for (const auto& run : *runs) {
    if (run.sweep_id != spec.resume_id || run.status != contract::status::kOk ||
        run.sweep_phase == contract::sweep_phase::kProbe)
      continue;
    if (run.sweep_phase == contract::sweep_phase::kVerify) {
      (run.sweep_point == spec.baseline ? spec.verify_baseline : spec.verify_recommended)++;
      continue;
    }
    for (auto& p : spec.points) {
      if (p.label != run.sweep_point) continue;
      ++p.progress.runs;
      for (double e : reports::whole_epoch_seconds(run)) p.progress.epochs.push_back(e);
      if (run.end_ns && *run.end_ns > run.start_ns) {
        p.run_seconds += static_cast<double>(*run.end_ns - run.start_ns) / 1e9;
        ++p.timed_runs;
      }
      if (run.result.is_object() && run.result.value("status", "") == contract::record_status::kStopped) {
        p.progress.stopped_early = true;
        p.progress.stop_reason = "stopped early: " + run.result.value("error", "");
      }
    }
  }
  return spec;
}

Result<int> run_sweep(SweepSpec spec, PointRunner& runner, const SweepFlags& flags) {
  auto db = tracer::TraceDb::open(flags.workload.trace.db);
  if (!db) return db.error();
  int64_t id;
  if (spec.resume_id) {
    id = *spec.resume_id;
    if (Status s = db->resume_sweep(id, spec.resume_status); !s) return s.error();
    const auto done = std::count_if(spec.points.begin(), spec.points.end(),
                                    [](const SweepPoint& p) { return !p.needs_run(); });
    std::printf("resuming sweep %lld: %zu of %zu points already decided\n", static_cast<long long>(id),
                static_cast<size_t>(done), spec.points.size());
  } else {
    auto created = db->begin_sweep({spec.request.dump(), spec.rules.to_json().dump()});
    if (!created) return created.error();
    id = *created;
    for (const auto& p : spec.points)
      if (Status s = db->put_sweep_point(id, {p.label, p.position, p.config.dump(), p.state, "", ""}); !s)
        return s.error();
    if (Status s = db->finish_sweep(id, std::string(contract::sweep_status::kRunning), spec.baseline, std::nullopt); !s) return s.error();
    std::printf("sweep %lld: %zu points, baseline %s\nrules: %s\n", static_cast<long long>(id), spec.points.size(),
                spec.baseline.c_str(), spec.rules.describe().c_str());
  }
  Sweep sweep(*db, id, std::move(spec.points), spec.rules, spec.baseline, spec.request, runner, flags);
  sweep.set_verify_runs_done(spec.verify_baseline, spec.verify_recommended);
  auto searched = sweep.search();
  if (searched && !sweep.interrupted()) searched = sweep.separate();
  std::optional<std::string> recommended;
  if (searched && !sweep.interrupted()) searched = sweep.verify(&recommended);
  const std::string status(!searched              ? contract::sweep_status::kFailed
                           : sweep.interrupted() ? contract::sweep_status::kInterrupted
                                                 : contract::sweep_status::kDone);
  Status finished = db->finish_sweep(id, status, spec.baseline, recommended);
  // The search's own error says more; a sweep whose end is not stored stays 'running' in the DB,
  // which --resume takes for one whose harness died.
  if (!searched) return searched.error();
  if (!finished) return finished.error();
  if (sweep.interrupted()) {
    std::fprintf(stderr, "sweep %lld interrupted; resume it with: ingero-bench sweep --resume %lld --db %s\n",
                 static_cast<long long>(id), static_cast<long long>(id), flags.workload.trace.db.c_str());
    return interrupt_exit_code();
  }
  if (auto printed = print_report(flags.workload.trace.db, id); !printed) return printed.error();
  return sweep.failures() > 0 ? kExitFailure : kExitOk;
}

}  // namespace ingero::harness
