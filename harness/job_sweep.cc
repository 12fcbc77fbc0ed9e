// SPDX-License-Identifier: Apache-2.0
#include "harness/job_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/machine_info.h"
#include "harness/observer_setup.h"
#include "harness/point_processes.h"
#include "harness/run_plan.h"
#include "harness/steady_state.h"
#include "tracer/observer_records.h"

namespace ingero::harness {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kAsWritten = "as written";
// A job that asks for no batch for this long is not making progress (or built no DataLoader).
constexpr double kStallSeconds = 120;
constexpr int kOutputLinesShown = 12;

std::string placeholder(const std::string& knob) { return "{" + knob + "}"; }

bool is_switch(const std::string& name) { return name == knob::kPinMemory || name == knob::kPersistentWorkers; }

// "w4 pf8 pin persistent", as our workload points are labelled.
std::string label_of(const Knobs& k) {
  std::string label = "w" + k.get(knob::kNumWorkers);
  if (!k.get(knob::kPrefetchFactor).empty()) label += " pf" + k.get(knob::kPrefetchFactor);
  if (k.get(knob::kPinMemory) == "on") label += " pin";
  if (k.get(knob::kPinMemory) == "off") label += " no-pin";
  if (k.get(knob::kPersistentWorkers) == "on") label += " persistent";
  return label;
}

// What the observer takes as an override: the point's knobs that no template carries.
json overrides_of(const Knobs& knobs, const std::vector<std::string>& templated) {
  json out = json::object();
  for (const auto& [name, value] : knobs) {
    if (value.empty() || name == knob::kMode || std::find(templated.begin(), templated.end(), name) != templated.end())
      continue;
    if (is_switch(name)) out[name] = value == "on";
    else out[name] = std::stoi(value);
  }
  return out;
}

// The observed loader's knob in our spelling ("on"/"off" for switches, "" when unreadable).
std::string observed_knob(const json& knobs, const std::string& knob) {
  if (!knobs.is_object() || !knobs.contains(knob) || knobs[knob].is_null()) return "";
  const json& v = knobs[knob];
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

Knobs knobs_seen(const json& observed) {
  Knobs k{{knob::kMode, std::string(contract::kJobMode)}};
  const std::string workers = observed_knob(observed, knob::kNumWorkers);
  k.set(knob::kNumWorkers, workers);
  const bool has_workers = !workers.empty() && workers != "0";
  k.set(knob::kPrefetchFactor, has_workers ? observed_knob(observed, knob::kPrefetchFactor) : "");
  k.set(knob::kPinMemory, observed_knob(observed, knob::kPinMemory));
  k.set(knob::kPersistentWorkers, has_workers ? observed_knob(observed, knob::kPersistentWorkers) : "");
  return k;
}

// The fields summarize_config reads, so that recommend and the tables see a job point's knobs.
void add_config_fields(json& config, const Knobs& knobs) {
  config[knob::kMode] = std::string(contract::kJobMode);
  for (const char* name : knob::kLoaderKnobs) {
    const std::string& value = knobs.get(name);
    if (value.empty()) continue;
    if (is_switch(name)) config[name] = value == "on";
    else config[name] = std::stoi(value);
  }
  config["knobs"] = json(knobs);
}

std::string last_lines(const std::string& path) {
  auto text = proc::read_file(path);
  if (!text || text->empty()) return "(it printed nothing)";
  std::vector<std::string> lines;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const size_t from = lines.size() > kOutputLinesShown ? lines.size() - kOutputLinesShown : 0;
  std::string out = "its last lines:";
  for (size_t i = from; i < lines.size(); ++i) out += "\n    " + lines[i];
  return out;
}

// The job's processes that outlived it (escaped its process group): ended, and named.
void end_leftovers(PointProcesses& processes) {
  const auto ended = processes.end_leftovers();
  if (ended.empty()) return;
  std::string names;
  for (const auto& name : ended) names += (names.empty() ? "" : ", ") + name;
  std::printf("  ended %zu process%s the job left running: %s\n", ended.size(), ended.size() == 1 ? "" : "es",
              names.c_str());
}

struct JobPlan {
  std::vector<std::string> command;
  std::vector<std::string> templated;
  SteadyPlan steady;
  std::optional<int> loader;  // the DataLoader to change and time (its construction index)
};

json request_of(const JobPlan& plan, const std::string& baseline) {
  json r = {{"command", plan.command},
            {"templated", plan.templated},
            {"warmup_steps", plan.steady.warmup_steps},
            {"steps", plan.steady.steps},
            {"seconds", plan.steady.seconds},
            {"windows", plan.steady.windows},
            {"baseline", baseline}};
  if (plan.loader) r["loader"] = *plan.loader;
  return r;
}

JobPlan plan_from_request(const json& r) {
  JobPlan plan;
  plan.command = r.value("command", std::vector<std::string>{});
  plan.templated = r.value("templated", std::vector<std::string>{});
  plan.steady.warmup_steps = r.value("warmup_steps", plan.steady.warmup_steps);
  plan.steady.steps = r.value("steps", plan.steady.steps);
  plan.steady.seconds = r.value("seconds", plan.steady.seconds);
  plan.steady.windows = r.value("windows", plan.steady.windows);
  if (r.contains("loader") && r["loader"].is_number_integer()) plan.loader = r["loader"].get<int>();
  return plan;
}

// Runs one point of the user's command and times it from the observer's records.
class JobRunner final : public PointRunner {
 public:
  JobRunner(JobPlan plan, TraceSettings trace, std::string machine_json, std::string out_dir,
            UserOutputs& outputs, bool as_root)
      : plan_(std::move(plan)), trace_(std::move(trace)), machine_json_(std::move(machine_json)),
        out_dir_(std::move(out_dir)), outputs_(outputs), run_as_(as_root ? std::nullopt : outputs.user()) {}
  void set_loader(std::optional<int> loader) { plan_.loader = loader; }

  Result<PointRun> run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                       std::optional<double> deadline, int64_t sweep_id) override;

 private:
  // Which of the job's loaders is timed: the chosen index in the process iterating it most.
  const tracer::LiveLoader* timed_loader(const tracer::ObserverTail& tail) const {
    return tail.busiest(plan_.loader);
  }
  std::optional<std::string> check_overrides(const tracer::LiveLoader& loader, const SweepPoint& point) const;
  // The job's own output, kept in --out (checked before the first run) as run-ID-LABEL.log: its
  // meters are the user's check of ours.
  void keep_output(const std::string& path, int64_t run_id, const std::string& label) const {
    const std::string kept = run_file_path(out_dir_, run_id, label, "log");
    if (auto text = proc::read_file(path))
      if (Status s = write_file_atomically(kept, kept_log(*text)); !s)  // the run is stored whole all the same
        std::printf("  warning: the job's output could not be kept in --out: %s\n", s.error().message.c_str());
    outputs_.add_file(kept);
    outputs_.give();
  }

  JobPlan plan_;
  TraceSettings trace_;
  std::string machine_json_;
  std::string out_dir_;
  UserOutputs& outputs_;
  std::optional<Credentials> run_as_;  // the user the command runs as (sudo's); nullopt: as this process
  int runs_ = 0;
};

// A point is reported only when the job ran with its knobs: each one applied by the observer
// (or, from a template, seen on the loader), else the point failed and says why. (An override the
// observer refused as a whole stops the sweep before this.)
std::optional<std::string> JobRunner::check_overrides(const tracer::LiveLoader& loader, const SweepPoint& point) const {
  for (const auto& [knob, wanted] : point.knobs) {
    if (knob == knob::kMode || wanted.empty()) continue;
    const bool templated = std::find(plan_.templated.begin(), plan_.templated.end(), knob) != plan_.templated.end();
    const std::string seen = observed_knob(loader.knobs, knob);
    if (!templated && !loader.overrides_applied.contains(knob) && !loader.overrides_not_applicable.contains(knob))
      return fmt::format("the override {}={} did not reach DataLoader {} (the job ran with {})", knob, wanted,
                         loader.loader, seen.empty() ? "its own value" : knob + "=" + seen);
    if (!seen.empty() && seen != wanted && !loader.overrides_not_applicable.contains(knob))
      return fmt::format("DataLoader {} ran with {}={}, not {}{}", loader.loader, knob, seen, wanted,
                         templated ? fmt::format(" (the template {} did not reach it)", placeholder(knob)) : "");
  }
  return std::nullopt;
}

Result<PointRun> JobRunner::run(tracer::TraceDb& db, const SweepPoint& point, std::string_view phase,
                                std::optional<double> deadline, int64_t sweep_id) {
  auto dir = PrivateDir::create("ingero-bench-job");
  if (!dir) return dir.error();
  // The job as written runs unchanged, also once its knobs are known.
  const bool as_written = point.config.value("as_written", false);
  json overrides = as_written ? json::object() : overrides_of(point.knobs, plan_.templated);
  if (!overrides.empty() && plan_.loader) overrides["loader"] = *plan_.loader;
  auto observer = install_observer(dir->path(), overrides);
  if (!observer) return observer.error();
  RunRequest req;
  req.kind = std::string(contract::kind::kCommand);
  req.argv = fill_templates(plan_.command, point.knobs);
  if (run_as_) {
    req.run_as = run_as_;
    req.env = user_environment(*run_as_);
    // The job's observer reads its code and writes its records there, as the job's user.
    give_tree_to_user(*run_as_, dir->path());
  }
  req.env.insert(req.env.end(), observer->env.begin(), observer->env.end());
  req.observer_dir = observer->records_dir;
  req.signal_group = true;
  req.label = "job " + point.label;
  json config = point.config;
  config["command"] = req.argv;
  config["overrides"] = overrides;
  req.config_json = config.dump();
  req.result_path = dir->file("result.json");
  req.output_path = dir->file("output.log");
  req.sweep_id = sweep_id;
  req.sweep_point = point.label;
  req.sweep_phase = std::string(phase);

  // Held from before the launch: what the job starts and leaves running is ended after it.
  PointProcesses processes = PointProcesses::begin();
  tracer::ObserverTail tail(observer->records_dir);
  auto last_progress = Clock::now();
  size_t last_count = 0;
  std::optional<std::string> stalled;
  bool stopped_early = false;
  auto write_result = [&](const SteadyMeasure& m, const tracer::LiveLoader& loader, bool early) {
    json record = {{"status", early ? contract::record_status::kStopped : contract::record_status::kOk},
                   {"epoch_seconds", m.seconds_per_step},
                   {"unit", "seconds per step"},
                   {"warmup_steps", plan_.steady.warmup_steps},
                   {"measured_steps", m.measured_steps},
                   {"measured_seconds", m.measured_s},
                   {"steps_per_s", m.steps_per_s()},
                   {"loader", {{"pid", loader.pid}, {"index", loader.loader}, {"knobs", loader.knobs},
                               {"overrides_applied", loader.overrides_applied}}}};
    if (early) record["error"] = fmt::format("slower than {:.4g} s a step, the deadline", deadline.value_or(0));
    // Into the point's private folder (made for it); should it fail, the run has no record and counts as failed.
    (void)write_file_atomically(*req.result_path, record.dump());
  };
  req.end_when = [&]() -> bool {
    processes.poll();
    tail.poll();
    const tracer::LiveLoader* loader = timed_loader(tail);
    const size_t count = loader ? loader->batch_starts.size() : 0;
    const auto now = Clock::now();
    if (count > last_count) {
      last_count = count;
      last_progress = now;
    }
    if (std::chrono::duration<double>(now - last_progress).count() > kStallSeconds) {
      stalled = count == 0 ? fmt::format("no DataLoader batch in {:.0f} s", kStallSeconds)
                           : fmt::format("no batch for {:.0f} s after {} batches", kStallSeconds, count);
      return true;
    }
    if (!loader) return false;
    const SteadyMeasure m = measure_steady(loader->batch_starts, plan_.steady);
    if (m.complete) {
      write_result(m, *loader, false);
      return true;
    }
    // Far slower than the best point so far: stop with what was timed (the rules' deadline).
    if (deadline && plan_.steady.steps > 0) {
      auto timed = timed_for_s(loader->batch_starts, plan_.steady, monotonic_ns());
      if (timed && *timed > *deadline * plan_.steady.steps) {
        SteadyMeasure partial = m;
        if (partial.seconds_per_step.empty()) {
          const auto steps = static_cast<int64_t>(count) - plan_.steady.warmup_steps;
          partial.seconds_per_step.push_back(*timed / static_cast<double>(std::max<int64_t>(steps, 1)));
          partial.measured_steps = std::max<int64_t>(steps, 0);
          partial.measured_s = *timed;
        }
        stopped_early = true;
        write_result(partial, *loader, true);
        return true;
      }
    }
    return false;
  };
  auto outcome = execute_run(req, db, trace_, machine_json_);
  end_leftovers(processes);
  if (!outcome) return outcome.error();
  report_outcome(*outcome, false);
  keep_output(*req.output_path, outcome->run_id, point.label);
  tail.poll();
  PointRun run{*outcome, std::nullopt, {}, stopped_early, "", std::nullopt};
  const tracer::LiveLoader* loader = timed_loader(tail);
  if (loader) {
    run.knobs = knobs_seen(loader->knobs);
    run.config_update["loader"] = loader->loader;
    // The knobs the job ran with, as tables show them (a point leaves the ones it does not sweep as
    // the job has them); the search's own knobs stay as the point set them.
    json fields;
    add_config_fields(fields, *run.knobs);
    for (const auto& [key, value] : fields.items())
      if (key != "knobs" || point.knobs.empty()) run.config_update[key] = value;
  }
  if (outcome->status == contract::status::kInterrupted) return run;
  ++runs_;
  if (loader && !loader->override_error.empty())
    return Error::bad_input("the observer could not apply the sweep's override to the job's DataLoader: " +
                                loader->override_error,
                            "this is a bug of ingero-bench if the knobs were given on its command line; report it");
  if (!loader && runs_ == 1 && outcome->observer_unreached)
    return Error::bad_input("the DataLoader observer did not reach the job, so no loader can be changed or timed: " +
                                *outcome->observer_unreached,
                            "the sweep changes and times the job's DataLoader through the observer, which the "
                            "job's Python loads from the PYTHONPATH it is started with");
  if (!loader && runs_ == 1)
    return Error::bad_input(
        fmt::format("the job built no torch.utils.data.DataLoader{}: there is no loader to change or to time; it {}; {}",
                    stalled ? " (" + *stalled + ")" : "", outcome->child_exit, last_lines(*req.output_path)),
        "a sweep of your command changes a torch DataLoader; for another loader, put a template in the command "
        "(e.g. -j {num_workers}) and make sure the job iterates a torch DataLoader, which the sweep times");
  if (loader && !plan_.loader) plan_.loader = loader->loader;
  if (!loader) {
    run.failure = tail.loaders().empty()
                      ? fmt::format("the job built no torch.utils.data.DataLoader{}; it {}; {}",
                                    stalled ? " (" + *stalled + ")" : "", outcome->child_exit,
                                    last_lines(*req.output_path))
                      : fmt::format("the job built no DataLoader number {}; it {}", plan_.loader.value_or(0),
                                    outcome->child_exit);
    return run;
  }
  if (auto wrong = as_written ? std::nullopt : check_overrides(*loader, point)) {
    run.failure = *wrong;
    return run;
  }
  if (!outcome->result || !outcome->ended_by_harness) {
    run.failure = fmt::format("the job {} after {} batches, before {} were timed{}; {}", outcome->child_exit,
                              loader->batch_starts.size(),
                              plan_.steady.steps > 0 ? fmt::format("{} steps", plan_.steady.steps)
                                                     : fmt::format("{:g} s", plan_.steady.seconds),
                              stalled ? " (" + *stalled + ")" : "", last_lines(*req.output_path));
    return run;
  }
  run.samples = outcome->result->value("epoch_seconds", std::vector<double>{});
  if (stopped_early) run.stop_reason = "stopped early: " + outcome->result->value("error", "");
  return run;
}

Result<JobPlan> plan_job(const SweepFlags& flags) {
  JobPlan plan;
  plan.command = flags.command;
  plan.templated = templated_knobs(flags.command);
  plan.steady.warmup_steps = flags.warmup_steps;
  plan.steady.seconds = flags.seconds;
  plan.steady.steps = flags.seconds > 0 ? 0 : (flags.steps > 0 ? flags.steps : 50);
  plan.loader = flags.loader;
  if (Status s = check_program(plan.command.front()); !s) return s.error();
  return plan;
}

// The grid: every num_workers x prefetch_factor x pin_memory x persistent_workers asked for;
// knobs that do not apply without workers are left out (and the points they would repeat).
Result<std::vector<Knobs>> job_grid(const SweepFlags& flags, const std::vector<std::string>& templated) {
  const WorkloadFlags& w = flags.workload;
  const int cores = read_machine_limits().usable_cores;
  auto workers = parse_count_list("--num-workers", flags.num_workers_given ? w.num_workers : "auto", true, cores, 0);
  if (!workers) return workers.error();
  std::vector<int> prefetch;
  if (!w.prefetch_factors.empty()) {
    auto p = parse_count_list("--prefetch-factor", w.prefetch_factors, false, cores, 1);
    if (!p) return p.error();
    prefetch = *p;
  }
  auto switches = [](const char* flag, const std::string& text) -> Result<std::vector<std::string>> {
    if (text.empty()) return std::vector<std::string>{""};
    auto values = parse_switch_list(flag, text);
    if (!values) return values.error();
    std::vector<std::string> out;
    for (bool v : *values) out.push_back(v ? "on" : "off");
    return out;
  };
  auto pin = switches("--pin-memory", w.pin_memory);
  if (!pin) return pin.error();
  auto persistent = switches("--persistent-workers", w.persistent_workers);
  if (!persistent) return persistent.error();
  const std::map<std::string, bool> swept = {{knob::kNumWorkers, true},
                                             {knob::kPrefetchFactor, !prefetch.empty()},
                                             {knob::kPinMemory, !w.pin_memory.empty()},
                                             {knob::kPersistentWorkers, !w.persistent_workers.empty()}};
  for (std::string knob : templated)
    if (!swept.at(knob)) {
      const std::string tag = placeholder(knob);
      std::replace(knob.begin(), knob.end(), '_', '-');  // the flag that gives its values
      return Error::bad_input(fmt::format("the command's template {} is never used: the sweep has no --{} values",
                                          tag, knob),
                              "give the values it should take, or take the template out of the command");
    }
  if (prefetch.empty()) prefetch.push_back(0);
  std::vector<Knobs> grid;
  for (int nw : *workers)
    for (int pf : prefetch)
      for (const std::string& pm : *pin)
        for (const std::string& pw : *persistent) {
          Knobs k{{knob::kMode, std::string(contract::kJobMode)}, {knob::kNumWorkers, std::to_string(nw)}};
          k.set(knob::kPrefetchFactor, nw > 0 && pf > 0 ? std::to_string(pf) : "");
          k.set(knob::kPinMemory, pm);
          k.set(knob::kPersistentWorkers, nw > 0 ? pw : "");
          if (std::find(grid.begin(), grid.end(), k) == grid.end()) grid.push_back(k);
        }
  return grid;
}

}  // namespace

bool is_job_sweep(const nlohmann::json& request) { return request.is_object() && request.contains("command"); }

std::vector<std::string> templated_knobs(const std::vector<std::string>& command) {
  std::vector<std::string> out;
  for (const char* name : kTemplateKnobs)
    for (const std::string& arg : command)
      if (arg.find(placeholder(name)) != std::string::npos) {
        out.emplace_back(name);
        break;
      }
  return out;
}

std::string kept_log(std::string_view text, size_t head, size_t tail) {
  if (text.size() <= head + tail) return std::string(text);
  // Cut at line ends, so that neither part starts or ends inside a line.
  size_t head_end = text.rfind('\n', head);
  head_end = head_end == std::string_view::npos ? head : head_end + 1;
  size_t tail_start = text.find('\n', text.size() - tail);
  tail_start = tail_start == std::string_view::npos ? text.size() - tail : tail_start + 1;
  if (tail_start <= head_end) return std::string(text);
  return fmt::format("{}[... {} bytes of the job's output left out ...]\n{}", text.substr(0, head_end),
                     tail_start - head_end, text.substr(tail_start));
}

std::vector<std::string> fill_templates(const std::vector<std::string>& command, const Knobs& knobs) {
  std::vector<std::string> out;
  for (std::string arg : command) {
    for (const char* name : kTemplateKnobs) {
      std::string value = knobs.get(name);
      if (is_switch(name)) value = value == "on" ? "1" : "0";
      for (size_t at; (at = arg.find(placeholder(name))) != std::string::npos;)
        arg.replace(at, placeholder(name).size(), value);
    }
    out.push_back(std::move(arg));
  }
  return out;
}

Result<int> run_job_sweep(const SweepFlags& flags, UserOutputs& outputs) {
  if (flags.resume)
    return Error::bad_input("--resume continues the sweep stored in --db; it takes no command",
                            "ingero-bench sweep --resume --db FILE");
  auto plan = plan_job(flags);
  if (!plan) return plan.error();
  auto grid = job_grid(flags, plan->templated);
  if (!grid) return grid.error();
  auto trace = trace_settings(flags.workload.trace);
  if (!trace) return trace.error();
  if (Status s = check_writable_dir("--out", flags.workload.out_dir); !s) return s.error();
  if (auto tmp = temp_folder(); !tmp) return tmp.error();  // each point's private folder goes there
  SweepSpec spec;
  spec.rules = rules_from(flags);
  int position = 0;
  // Without templates the job as written is the baseline: the speed-up is against what the user has.
  if (plan->templated.empty()) {
    SweepPoint p;
    p.label = kAsWritten;
    p.config = {{knob::kMode, std::string(contract::kJobMode)}, {"as_written", true}};
    p.position = position++;
    spec.points.push_back(std::move(p));
  }
  for (const Knobs& k : *grid) {
    SweepPoint p;
    p.label = label_of(k);
    p.knobs = k;
    add_config_fields(p.config, k);
    if (!plan->templated.empty()) p.config["command"] = fill_templates(plan->command, k);
    p.position = position++;
    spec.points.push_back(std::move(p));
  }
  if (Status s = choose_baseline(spec, flags.baseline); !s) return s.error();
  spec.request = request_of(*plan, spec.baseline);
  std::string shown;
  for (const std::string& arg : plan->command) shown += (shown.empty() ? "" : " ") + arg;
  std::printf("sweeping your command: %s\n", shown.c_str());
  std::printf("each run: %d warm-up steps skipped, then %s timed in %d windows; then the job is stopped (SIGINT)\n",
              plan->steady.warmup_steps,
              plan->steady.steps > 0 ? fmt::format("{} steps", plan->steady.steps).c_str()
                                     : fmt::format("{:g} s", plan->steady.seconds).c_str(),
              plan->steady.windows);
  std::printf("(the rules' epochs are those windows: seconds per step, lower is faster)\n");
  JobRunner runner(*plan, *trace, machine_info(std::nullopt).dump(), flags.workload.out_dir, outputs, flags.as_root);
  return run_sweep(std::move(spec), runner, flags);
}

// The stored request's fields that plan_from_request reads have their types (its typed reads would
// throw on another), and each point's numeric knobs are digits (overrides_of reads them as numbers).
Status check_stored_job_sweep(const SweepSpec& spec, const std::string& db_path) {
  const json& r = spec.request;
  std::string bad;
  for (const char* key : {"command", "templated"})
    if (auto it = r.find(key); bad.empty() && it != r.end() &&
                               !(it->is_array() && std::all_of(it->begin(), it->end(), [](const json& a) { return a.is_string(); })))
      bad = fmt::format("request_json's '{}' is {}, not an array of strings", key, it->type_name());
  for (const char* key : {"warmup_steps", "steps", "seconds", "windows"})
    if (auto it = r.find(key); bad.empty() && it != r.end() && !it->is_number())
      bad = fmt::format("request_json's '{}' is {}, not a number", key, it->type_name());
  for (const auto& p : spec.points)
    for (const auto& [name, value] : p.knobs)
      if (bad.empty() && !value.empty() && !is_switch(name) && name != knob::kMode &&
          value.find_first_not_of("0123456789") != std::string::npos)
        bad = fmt::format("point '{}''s knob {} is '{}', not a number", p.label, name, value);
  if (bad.empty()) return {};
  return Error::bad_input(fmt::format("'{}': sweep {} is damaged: {}", db_path, spec.resume_id.value_or(0), bad),
                          "the file was changed outside ingero-bench; start the sweep again into a new --db");
}

Result<int> resume_job_sweep(SweepSpec spec, const SweepFlags& flags, UserOutputs& outputs) {
  if (!spec.request.is_object())
    return Error::bad_input("the stored sweep has no command to resume", "start a new sweep");
  if (Status s = check_stored_job_sweep(spec, flags.workload.trace.db); !s) return s.error();
  JobPlan plan = plan_from_request(spec.request);
  if (plan.command.empty()) return Error::bad_input("the stored sweep has no command to resume", "start a new sweep");
  if (Status s = check_program(plan.command.front()); !s) return s.error();
  for (const auto& p : spec.points)
    if (!plan.loader && p.config.contains("loader") && p.config["loader"].is_number_integer())
      plan.loader = p.config["loader"].get<int>();
  auto trace = trace_settings(flags.workload.trace);
  if (!trace) return trace.error();
  if (Status s = check_writable_dir("--out", flags.workload.out_dir); !s) return s.error();
  if (auto tmp = temp_folder(); !tmp) return tmp.error();  // each point's private folder goes there
  JobRunner runner(plan, *trace, machine_info(std::nullopt).dump(), flags.workload.out_dir, outputs, flags.as_root);
  return run_sweep(std::move(spec), runner, flags);
}

}  // namespace ingero::harness
