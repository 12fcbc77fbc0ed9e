// SPDX-License-Identifier: Apache-2.0
#include "harness/sweep_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/job_sweep.h"
#include "harness/progress.h"
#include "harness/sudo_user.h"
#include "harness/sweep_engine.h"
#include "reports/analysis/run_metrics.h"
#include "reports/text/format.h"

namespace ingero::harness {

namespace {

using reports::format_seconds;

// The knobs the coordinate search moves along ("" where one does not apply).
Knobs knobs_of(const workloads::WorkloadConfig& c) {
  const bool workers = c.num_workers > 0;
  return {{knob::kMode, workloads::mode_name(c.mode)},
          {knob::kNumWorkers, std::to_string(c.num_workers)},
          {knob::kPrefetchFactor, workers ? std::to_string(c.effective_prefetch_factor()) : ""},
          {knob::kPinMemory, workloads::mode_uses_workers(c.mode) ? (c.pin_memory ? "on" : "off") : ""},
          {knob::kPersistentWorkers, workers ? (c.persistent_workers ? "on" : "off") : ""}};
}

// Our workloads: a point's config is a WorkloadConfig.
class WorkloadRunner final : public PointRunner {
 public:
  WorkloadRunner(WorkloadSetup setup, const SweepFlags& flags, UserOutputs& outputs)
      : setup_(std::move(setup)), flags_(flags), outputs_(outputs) {}
  Result<PointRun> run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                       std::optional<double> deadline, int64_t sweep_id) override;
  Result<BudgetFit> fit_budget(tracer::TraceDb& db, std::vector<SweepPoint>& points, const std::string& baseline,
                               int runs, double seconds, int64_t sweep_id) override;

 private:
  WorkloadSetup setup_;
  const SweepFlags& flags_;
  UserOutputs& outputs_;
};

Result<PointRun> WorkloadRunner::run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                                     std::optional<double> deadline, int64_t sweep_id) {
  auto parsed = workloads::config_from_json(point.config);
  if (!parsed) return parsed.error();
  workloads::WorkloadConfig config = *parsed;
  config.device = setup_.cuda ? "cuda" : "cpu";
  // The sweep speaks of whole epochs; a bounded epoch is held to its share of the deadline.
  const double whole_epoch_scale = reports::whole_epoch_scale(point.config);
  config.epoch_deadline_s = deadline.value_or(0) / whole_epoch_scale;
  auto dir = PrivateDir::create("ingero-bench-run");
  if (!dir) return dir.error();
  auto request = workload_request(config, setup_, dir->path(), flags_.workload.out_dir);
  if (!request) return request.error();
  RunRequest req = std::move(*request);
  req.label = point.label;
  req.sweep_id = sweep_id;
  req.sweep_point = point.label;
  req.sweep_phase = std::string(phase);
  auto outcome = execute_workload_run(config, req, setup_, dir->path(), db);
  if (!outcome) return outcome.error();
  if (outcome->record_kept_at == dir->path() + "/result.json") dir->keep();
  else if (outcome->record_kept_at) outputs_.add_file(*outcome->record_kept_at);
  outputs_.give();
  report_outcome(*outcome, setup_.cuda);
  PointRun run{*outcome, std::nullopt, {}, false, "", std::nullopt};
  const auto& record = outcome->result;
  const std::string record_status = record ? record->value("status", "") : "";
  if (outcome->status != contract::status::kOk ||
      (record_status != contract::record_status::kOk && record_status != contract::record_status::kStopped)) {
    run.failure = record && record->contains("error") ? record->value("error", "") : outcome->child_exit;
    return run;
  }
  run.samples = reports::whole_epoch_seconds(point.config, *record);
  if (record_status == contract::record_status::kStopped) {
    run.stopped_early = true;
    run.stop_reason = "stopped early: " + record->value("error", "");
  }
  return run;
}

// The fewest batches an epoch of this point that still measure its throughput: a loader pipelines
// only over enough batches, and an epoch cut shorter than two per worker would measure the
// workers' start-up instead.
int64_t fewest_batches(const SweepPoint& point) {
  return std::max<int64_t>(2, 2 * static_cast<int64_t>(point.config.value("num_workers", 0)));
}

// Under a budget with whole epochs: one run of the baseline on its fewest batches an epoch
// (phase "probe") gives a run's fixed cost and a batch's. When whole-epoch runs of `runs` points
// do not fit the rest of the budget, each point's epochs become their first N batches, the most
// that fit (assuming the others cost what the baseline does), never fewer than that point's
// fewest; the baseline keeps the probe's cut and the probe becomes its first measurement. The
// sweep compares whole-epoch times estimated from the batches measured (reports::whole_epoch_seconds).
Result<BudgetFit> WorkloadRunner::fit_budget(tracer::TraceDb& db, std::vector<SweepPoint>& points,
                                             const std::string& baseline, int runs, double seconds,
                                             int64_t sweep_id) {
  auto base = std::find_if(points.begin(), points.end(), [&](const SweepPoint& p) { return p.label == baseline; });
  if (base == points.end() || base->config.value("max_batches", int64_t{0}) > 0 ||
      base->config.value("ranks", 1) != 1)
    return BudgetFit{};
  auto full = workloads::config_from_json(base->config);
  if (!full) return full.error();
  const int64_t batches = full->batches_per_epoch();
  const int64_t base_cut = fewest_batches(*base);
  if (batches <= base_cut) return BudgetFit{};
  SweepPoint probe = *base;
  probe.config["max_batches"] = base_cut;
  const auto started = std::chrono::steady_clock::now();
  auto measured = run(db, probe, contract::sweep_phase::kProbe, std::nullopt, sweep_id);
  if (!measured) return measured.error();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (measured->failure || measured->samples.empty()) return BudgetFit{};
  // run() extended the probe's epochs to whole ones.
  const double per_batch = reports::median(measured->samples) / static_cast<double>(batches);
  const int epochs = full->warmup_epochs + full->epochs;
  workloads::WorkloadConfig probed = *full;
  probed.max_batches = base_cut;
  const double probe_batches =
      static_cast<double>(full->warmup_epochs * probed.batches_in_epoch(0) + full->epochs * base_cut);
  const double fixed = std::max(0.0, wall - probe_batches * per_batch);
  const double whole = fixed + epochs * static_cast<double>(batches) * per_batch;
  const double left = seconds - wall;
  if (whole * runs <= left) return BudgetFit{};
  const double per_run = left / std::max(1, runs - 1);
  const auto fit = static_cast<int64_t>((per_run - fixed) / (epochs * per_batch));
  std::string cuts;
  for (auto& p : points) {
    const int64_t cap = &p == &*base ? base_cut : std::max(fit, fewest_batches(p));
    if (cap >= batches) continue;
    p.config["max_batches"] = cap;
    cuts += fmt::format("{}{} {}", cuts.empty() ? "" : ", ", p.label, cap);
  }
  // Kept as the baseline's first measurement: the cut the search will measure it at.
  Status kept = db.set_sweep_phase(measured->outcome.run_id, std::string(contract::sweep_phase::kMeasure));
  if (!kept) return kept.error();
  BudgetFit result;
  result.note = fmt::format(
      "epochs are measured on their first batches and extended to whole ones at their steady pace "
      "(--max-batches: {} of {}): a run of whole epochs takes ~{} (the baseline's fixed cost {} and {} a batch, "
      "from its first run), and {} of them with one verification round would not fit the budget; a point keeps "
      "at least two batches per worker, so that its workers' throughput is measured, not their start-up",
      cuts, batches, format_clock(whole), format_clock(fixed), format_seconds(per_batch), runs);
  result.baseline_run = std::move(*measured);
  result.baseline_run_s = wall;
  return result;
}

nlohmann::json request_json(const WorkloadFlags& f, const std::string& baseline) {
  return {{"modes", f.modes},
          {"num_workers", f.num_workers},
          {"prefetch_factor", f.prefetch_factors},
          {"pin_memory", f.pin_memory},
          {"persistent_workers", f.persistent_workers},
          {"base", workloads::to_json(f.base)},
          {"baseline", baseline}};
}

// A new sweep of our workloads: every planned configuration a point.
Result<SweepSpec> plan_workload_sweep(const SweepFlags& flags, const WorkloadSetup& setup) {
  SweepSpec spec;
  spec.rules = rules_from(flags);
  int position = 0;
  for (const auto& config : setup.plan.runs) {
    SweepPoint point;
    point.label = config.label();
    point.config = workloads::to_json(config);
    point.knobs = knobs_of(config);
    point.position = position++;
    spec.points.push_back(std::move(point));
  }
  if (Status s = choose_baseline(spec, flags.baseline); !s) return s.error();
  spec.request = request_json(flags.workload, spec.baseline);
  return spec;
}

}  // namespace

Result<int> run_sweep_command(const SweepFlags& flags) {
  auto sudo = sudo_user();
  if (!sudo) return sudo.error();
  // Under sudo the DB, --out and what is kept there are the user's: a root-owned results/ would make
  // their next run fail. Given after each point and at the end.
  UserOutputs outputs(*sudo);
  outputs.add_db(flags.workload.trace.db);
  outputs.add_folder(flags.workload.out_dir);
  if (!flags.command.empty()) return run_job_sweep(flags, outputs);
  SweepSpec spec;
  WorkloadSetup setup;
  if (flags.resume) {
    auto resumed = load_sweep(flags.workload.trace.db, flags.sweep_id);
    if (!resumed) return resumed.error();
    spec = std::move(*resumed);
    if (is_job_sweep(spec.request)) return resume_job_sweep(std::move(spec), flags, outputs);
    RunPlan plan;
    for (auto& p : spec.points) {
      auto config = workloads::config_from_json(p.config);
      if (!config) return config.error();
      p.knobs = knobs_of(*config);
      plan.runs.push_back(*config);
    }
    auto cuda = resolve_cuda(plan.runs.empty() ? "auto" : plan.runs.front().device);
    if (!cuda) return cuda.error();
    auto env = prepare_environment(flags.workload, std::move(plan), *cuda);
    if (!env) return env.error();
    setup = std::move(*env);
  } else {
    auto prepared = prepare_workloads(flags.workload);
    if (!prepared) return prepared.error();
    setup = std::move(*prepared);
    auto planned = plan_workload_sweep(flags, setup);
    if (!planned) return planned.error();
    spec = std::move(*planned);
  }
  if (!setup.plan.scaling_note.empty()) std::printf("note: %s\n", setup.plan.scaling_note.c_str());
  for (const auto& warning : setup.plan.warnings) std::printf("warning: %s\n", warning.c_str());
  WorkloadRunner runner(std::move(setup), flags, outputs);
  return run_sweep(std::move(spec), runner, flags);
}

}  // namespace ingero::harness
