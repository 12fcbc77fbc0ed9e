// SPDX-License-Identifier: Apache-2.0
#include "harness/run_executor.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/wait_status.h"
#include "harness/child_process.h"
#include "harness/signals.h"
#include "harness/terminal.h"
#include "tracer/observer_records.h"
#include "workloads/result.h"

namespace ingero::harness {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kGraceAfterSignal = std::chrono::seconds(10);

// How a launched child ended: its wait status, whether end_when ended it, and the CPU time of
// it and of every descendant it waited for.
struct ChildEnd {
  int status = 0;
  bool ended_by_harness = false;
  rusage usage{};
};

// Waits for the launched child while the tracer follows it; forwards an interrupt once (or
// sends one when end_when asks), then SIGKILLs what has not exited 10 s later.
// With the terminal lent to the job, a stop of the job (Ctrl-Z) is relayed to the shell above,
// and a Ctrl-C that ended the job interrupts the run.
Result<ChildEnd> supervise_child(pid_t pid, tracer::Tracer* tracer, bool signal_group,
                                 const std::function<bool()>& end_when, TerminalLoan* terminal) {
  const pid_t target = signal_group ? -pid : pid;
  bool forwarded = false, ended = false;
  Clock::time_point kill_at{};
  for (;;) {
    ChildEnd end;
    const pid_t r = wait4(pid, &end.status, WNOHANG | (terminal ? WUNTRACED : 0), &end.usage);
    // Not a busy loop where our own stop is discarded (an orphaned group): the poll's sleep
    // still comes between one stop of the job and the next.
    const bool stopped = r == pid && WIFSTOPPED(end.status);
    if (stopped && is_terminal_stop(WSTOPSIG(end.status))) terminal->relay_stop(pid, WSTOPSIG(end.status));
    if (r == pid && !stopped) {
      end.ended_by_harness = ended;
      if (terminal && WIFSIGNALED(end.status) && WTERMSIG(end.status) == SIGINT) record_interrupt(SIGINT);
      return end;
    }
    if (r < 0 && errno != EINTR)
      return Error::failure(fmt::format("waiting for process {} failed: {}", pid, strerror(errno)));
    if (tracer != nullptr) tracer->poll();
    if (!forwarded && !interrupt_requested() && end_when && end_when()) {
      kill(target, SIGINT);
      forwarded = ended = true;
      kill_at = Clock::now() + kGraceAfterSignal;
    }
    if (interrupt_requested() && !forwarded) {
      kill(target, interrupt_forward_signal());
      forwarded = true;
      kill_at = Clock::now() + kGraceAfterSignal;
    }
    if (forwarded && Clock::now() >= kill_at) kill(target, SIGKILL);
    std::this_thread::sleep_for(kPollInterval);
  }
}

// What is left of a process group once its leader exited (workers a killed job left, a
// daemon it started): killed, and waited for until none is left (at most 10 s).
void end_process_group(pid_t group) {
  if (kill(-group, SIGKILL) != 0) return;  // ESRCH: nothing left
  const auto until = Clock::now() + kGraceAfterSignal;
  while (Clock::now() < until && kill(-group, 0) == 0) std::this_thread::sleep_for(kPollInterval);
}

struct Target {
  pid_t pid;
  uint64_t start_time;
};

// Follows attached processes (or, with none, the whole machine) until the duration ends,
// an interrupt arrives, or every target has exited. The targets are only watched.
void supervise_attached(const std::vector<Target>& targets, tracer::Tracer* tracer, std::optional<double> duration_s) {
  const auto start = Clock::now();
  for (;;) {
    if (tracer != nullptr) tracer->poll();
    if (interrupt_requested()) return;
    if (duration_s && std::chrono::duration<double>(Clock::now() - start).count() >= *duration_s) return;
    if (!targets.empty() &&
        std::none_of(targets.begin(), targets.end(), [](const Target& t) { return proc::is_alive(t.pid, t.start_time); }))
      return;
    std::this_thread::sleep_for(kPollInterval);
  }
}

// Batch timings and worker start-ups. A worker's fork time comes from the loader when it
// measured it (the C++ loader does), else from the trace's fork event (the python mode
// reports only when each worker became ready); without either there is no start-up.
std::vector<tracer::WorkloadEvent> workload_events(const workloads::ResultSummary& s,
                                                   const tracer::TraceTotals* totals) {
  std::vector<tracer::WorkloadEvent> events;
  for (const workloads::MainLoopTimings& loop : s.loops) {
    for (const auto& b : loop.batches) {
      events.push_back({std::string(contract::op::kBatchWait), b.wait_start_ns, b.wait_ns, loop.pid, loop.main_tid, b.index, std::nullopt, std::nullopt});
      events.push_back({std::string(contract::op::kBatchCompute), b.wait_start_ns + b.wait_ns, b.compute_ns, loop.pid, loop.main_tid, b.index,
                        std::nullopt, std::nullopt});
    }
    for (const auto& w : loop.workers) {
      uint64_t fork_ns = w.fork_ns;
      if (fork_ns == 0 && totals)
        for (const auto& t : totals->threads)
          if (t.tid == w.pid && t.start_ns) fork_ns = *t.start_ns;
      if (fork_ns == 0 || w.ready_ns < fork_ns) continue;
      events.push_back({std::string(contract::op::kWorkerStart), fork_ns, w.ready_ns - fork_ns, w.pid, w.pid, w.id, std::nullopt, std::nullopt});
    }
  }
  return events;
}

// An attached job's trainer command line (the first main thread's process found running).
void add_trainer_command(tracer::TraceTotals& totals) {
  for (const auto& t : totals.threads)
    if (t.role == contract::kRoleMain && !t.cmdline.empty()) {
      totals.settings.emplace_back(std::string(contract::kTrainerCommandSetting), nlohmann::json(t.cmdline).dump());
      return;
    }
}

// "num_workers=2, loader=99": an --override object as it was typed.
std::string overrides_text(const nlohmann::json& overrides) {
  std::string text;
  for (const auto& [knob, value] : overrides.items()) {
    const std::string shown = value.is_boolean() ? (value.get<bool>() ? "on" : "off") : value.dump();
    text += (text.empty() ? "" : ", ") + knob + "=" + shown;
  }
  return text;
}

// An --override that no DataLoader took (loader=99 of a job that builds one) changes nothing;
// the run says so instead of looking like a measured change.
std::optional<std::string> override_reached_nothing(const nlohmann::json& asked, const tracer::ObservedJob& job) {
  if (asked.empty()) return std::nullopt;
  for (const auto& loader : job.loaders)
    if (loader.overrides_json) return std::nullopt;
  int built = 0;
  for (const auto& loader : job.loaders) built = std::max(built, loader.loader + 1);
  return fmt::format("--override {} reached no DataLoader: {}", overrides_text(asked),
                     built == 0 ? "the job built none the observer saw"
                                : fmt::format("the job built {} (loader=0 to {}), with their own settings", built,
                                              built - 1));
}

// The observer's folder on a launched job's PYTHONPATH (its first entry, as install_observer puts it).
std::string observer_path_entry(const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [name, value] : env)
    if (name == "PYTHONPATH") return value.substr(0, value.find(':'));
  return "";
}

bool on_path(const std::string& path_list, const std::string& entry) {
  for (size_t at = 0; at <= path_list.size();) {
    size_t end = path_list.find(':', at);
    if (end == std::string::npos) end = path_list.size();
    if (path_list.compare(at, end - at, entry) == 0) return true;
    at = end + 1;
  }
  return false;
}

// Why the observer reached none of the job's Python processes, when the run shows why: a
// process of another user (setpriv, su, runuser: the job switched user, or the tracer saw its
// uid) cannot read the observer's private folder, and a command line that sets PYTHONPATH or
// starts python with -E, -I or -S leaves the observer off the path, as does a PYTHONPATH replaced
// inside a script (os.environ, or a re-exec with an environment of its own): the tracer saw a
// Python start without the observer's folder on its PYTHONPATH.
std::optional<std::string> observer_unreached(const tracer::ObservedJob& job, const tracer::TraceTotals& totals,
                                              const std::vector<std::string>& argv, uid_t folder_owner,
                                              const std::string& observer_entry) {
  if (job.processes > 0) return std::nullopt;
  constexpr std::string_view kUserSwitches[] = {"setpriv", "su", "sudo", "runuser", "gosu", "su-exec", "setuidgid"};
  for (const auto& t : totals.threads) {
    if (t.tid != t.pid) continue;
    if (t.uid && *t.uid != folder_owner && *t.uid != 0)
      return fmt::format("{} (pid {}) ran as uid {}, who cannot read the observer's private folder (uid {}'s); "
                         "trace the job as that user (sudo -u), or attach with --pid",
                         t.comm, t.pid, *t.uid, folder_owner);
    for (std::string_view name : kUserSwitches)
      if (t.comm == name)
        return fmt::format("{} (pid {}) switched the job to another user, who cannot read the observer's private "
                           "folder; trace the job as that user (sudo -u), or attach with --pid",
                           t.comm, t.pid);
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string program = argv[i].substr(argv[i].rfind('/') + 1);
    for (std::string_view name : kUserSwitches)
      if (program == name)
        return fmt::format("{} in the command switches the job to another user, who cannot read the observer's "
                           "private folder; trace the job as that user (sudo -u), or attach with --pid",
                           program);
    if (argv[i].rfind("PYTHONPATH=", 0) == 0)
      return std::string("the command sets PYTHONPATH, which replaces the observer's entry; add to it instead "
                         "(PYTHONPATH=...:$PYTHONPATH), or attach with --pid");
    const bool python = argv[i].find("python") != std::string::npos;
    if (python && i + 1 < argv.size() && (argv[i + 1] == "-E" || argv[i + 1] == "-I" || argv[i + 1] == "-S"))
      return fmt::format("python {} does not read PYTHONPATH's sitecustomize; drop {} or attach with --pid",
                         argv[i + 1], argv[i + 1]);
  }
  for (const auto& t : totals.threads)
    if (t.tid == t.pid && t.python_path && !observer_entry.empty() && !on_path(*t.python_path, observer_entry))
      return fmt::format("{} (pid {}) started with {}, without the observer's folder: the job replaced PYTHONPATH "
                         "(os.environ['PYTHONPATH'] = ..., or a re-exec with an environment of its own); add to it "
                         "instead (keep the entries it had), or attach with --pid",
                         t.comm, t.pid, t.python_path->empty() ? "no PYTHONPATH" : "PYTHONPATH=" + *t.python_path);
  return std::nullopt;
}

// --db-max-mb: the observer's batch events before the tracer's cut go as its events did, and are
// counted with them.
void drop_before_cut(tracer::TraceTotals& totals, std::vector<tracer::WorkloadEvent>& events) {
  auto setting = [&](std::string_view key) {
    return std::find_if(totals.settings.begin(), totals.settings.end(), [&](const auto& kv) { return kv.first == key; });
  };
  auto cut = setting(contract::kEventsDroppedBeforeSetting), count = setting(contract::kEventsDroppedSetting);
  if (cut == totals.settings.end() || count == totals.settings.end()) return;
  const uint64_t cut_ns = std::stoull(cut->second);
  const auto kept =
      std::remove_if(events.begin(), events.end(), [&](const tracer::WorkloadEvent& e) { return e.ts_ns < cut_ns; });
  const auto dropped = static_cast<size_t>(events.end() - kept);
  events.erase(kept, events.end());
  count->second = std::to_string(std::stoull(count->second) + dropped);
}

// What the Python observer saw of a launched job: its roles go into the totals before they are
// written, its batches and DataLoaders into the DB.
void add_observed_job(const RunRequest& request, tracer::TraceDb& db, int64_t run_id, tracer::TraceTotals& totals,
                      RunOutcome& outcome) {
  tracer::ObservedJob job = tracer::read_observed_job(*request.observer_dir, totals.threads);
  if (!request.overrides.empty())
    totals.settings.emplace_back(std::string(contract::kOverridesAskedSetting), request.overrides.dump());
  if (auto note = override_reached_nothing(request.overrides, job)) job.notes.push_back(*note);
  outcome.observer_unreached = observer_unreached(job, totals, request.argv,
                                                  request.run_as ? request.run_as->uid : geteuid(),
                                                  observer_path_entry(request.env));
  tracer::assign_roles(totals, job.roles);
  tracer::add_event_stacks(totals.profile, job.stacks);  // the batch waits' Python stacks
  const bool used = job.processes > 0;
  totals.settings.emplace_back(std::string(contract::kObserverSetting),
                               std::string(used                          ? contract::kObserverOn
                                           : outcome.observer_unreached ? contract::kObserverUnreached
                                                                        : contract::kObserverUnused));
  if (outcome.observer_unreached)
    totals.settings.emplace_back(std::string(contract::kObserverUnreachedSetting), *outcome.observer_unreached);
  if (job.batches > 0)
    totals.settings.emplace_back(std::string(contract::kBatchSourceSetting), std::string(contract::kBatchSourceObserver));
  outcome.observed_batches = job.batches;
  outcome.observer_notes = job.notes;
  drop_before_cut(totals, job.events);
  Status s = db.add_workload_events(run_id, job.events);
  if (s) s = db.add_loaders(run_id, job.loaders);
  if (!s) {
    outcome.stored = false;
    outcome.store_error = s.error().message;
  }
}

// The record the workload child wrote into its private directory; absent when it died first.
std::optional<nlohmann::json> read_record(const std::string& path) {
  auto text = proc::read_file(path);
  if (!text) return std::nullopt;
  auto j = parse_json_or_discarded(*text);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// A DDP job's ranks each wrote PATH.rank<R>: one record for the run, written to PATH so that
// it is kept like any other. Absent when no rank wrote one.
std::optional<nlohmann::json> read_result(const RunRequest& request) {
  if (!request.result_path) return std::nullopt;
  if (request.ranks <= 1) return read_record(*request.result_path);
  std::vector<std::optional<nlohmann::json>> ranks;
  for (int r = 0; r < request.ranks; ++r) ranks.push_back(read_record(fmt::format("{}.rank{}", *request.result_path, r)));
  if (std::none_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.has_value(); })) return std::nullopt;
  nlohmann::json merged = workloads::merge_rank_records(ranks);
  // The merged record goes into the DB from here; the file is only the user's copy of it, so a failed
  // write is said, not fatal.
  if (Status s = write_file_atomically(*request.result_path, merged.dump()); !s)
    fmt::print(stderr, "warning: the merged result record was not written: {}\n", s.error().message);
  return merged;
}

// What became of each attached process, from the thread table the tracer handed back.
nlohmann::json target_outcomes(const std::vector<Target>& targets, const tracer::TraceTotals* totals) {
  nlohmann::json out = nlohmann::json::array();
  for (const Target& t : targets) {
    nlohmann::json entry = {{"pid", t.pid}, {"outcome", "running when the trace ended"}};
    if (totals)
      for (const auto& thread : totals->threads)
        if (thread.tid == t.pid) {
          entry["comm"] = thread.comm;
          if (thread.exit_code)
            entry["outcome"] = *thread.exit_code < 128 ? fmt::format("exited with status {}", *thread.exit_code)
                                                        : "killed by " + signal_text(*thread.exit_code - 128);
        }
    out.push_back(entry);
  }
  return out;
}

std::string summarize_targets(const nlohmann::json& outcomes) {
  std::string text;
  for (const auto& t : outcomes)
    text += fmt::format("{}pid {} ({}) {}", text.empty() ? "" : "; ", t["pid"].get<int>(), t.value("comm", "?"),
                        t["outcome"].get<std::string>());
  return text;
}

}  // namespace

std::string run_file_path(const std::string& dir, int64_t run_id, const std::string& label, const std::string& ext) {
  std::string slug;
  for (char ch : label) slug += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return fmt::format("{}/run-{}-{}.{}", dir, run_id, slug, ext);
}

// ---- RunGuard ---------------------------------------------------------------------------

Result<RunGuard> RunGuard::begin(tracer::TraceDb& db, const tracer::RunStart& start) {
  auto id = db.begin_run(start);
  if (!id) return id.error();
  return RunGuard(&db, *id);
}

RunGuard::RunGuard(RunGuard&& other) noexcept
    : db_(other.db_), id_(other.id_), done_(other.done_), error_(std::move(other.error_)) {
  other.done_ = true;
}

RunGuard::~RunGuard() {
  if (done_) return;
  const int exit_code = interrupt_requested() ? interrupt_exit_code() : kExitFailure;
  const std::string status(interrupt_requested() ? contract::status::kInterrupted : contract::status::kFailed);
  // A run left 'running' reads as abandoned once this process is gone: the DB stays truthful, but the reason
  // is lost, so it is said here.
  if (Status s = db_->finish_run(id_, tracer::RunEnd{exit_code, status, std::nullopt, error_, std::nullopt, {}}); !s)
    fmt::print(stderr, "warning: run {} could not be marked {} in the trace DB: {}\n", id_, status, s.error().message);
}

Status RunGuard::commit(const tracer::RunEnd& end) {
  Status s = db_->finish_run(id_, end);
  if (s) done_ = true;
  return s;
}

// ---- execute_run ------------------------------------------------------------------------

namespace {

// The processes to attach to, each with its start time (a reused pid is not the target).
Result<std::vector<Target>> find_targets(const std::vector<pid_t>& pids) {
  std::vector<Target> targets;
  for (pid_t pid : pids) {
    auto stat = proc::read_stat(pid);
    if (!stat) return Error::bad_input(fmt::format("no running process has pid {}", pid), "check the pid with ps");
    targets.push_back({pid, stat->start_time});
  }
  return targets;
}

uint64_t cpu_ns(const timeval& t) { return uint64_t(t.tv_sec) * 1'000'000'000 + uint64_t(t.tv_usec) * 1'000; }

// Launches the command paused, enrolls it in the tracer, releases it and supervises it to its
// end (--duration and end_when end it). Returns its wait status; its CPU time goes to the run's
// end settings.
Result<int> run_launched(const RunRequest& request, tracer::Tracer* tracer, tracer::TraceDb& db, RunGuard& guard,
                         RunOutcome& outcome) {
  SpawnOptions options;
  options.own_group = request.signal_group;
  options.dies_with_parent = !request.users_own_command;
  options.env = request.env;
  options.output_path = request.output_path;
  options.run_as = request.run_as;
  auto child = PausedChild::spawn(request.argv, options);
  if (!child) {
    guard.fail_with(child.error().message);
    return child.error();
  }
  if (tracer) {
    if (Status s = tracer->enroll(child->pid()); !s) {
      guard.fail_with(s.error().message);
      return s.error();
    }
  }
  // Checked while the child is still held: a DB that cannot take this write (a full disk) would
  // not take the run's end either, and the job is not started for a run that cannot be stored.
  if (Status s = db.set_root_pid(guard.id(), child->pid()); !s) {
    guard.fail_with(s.error().message);
    return s.error();
  }
  // The user's own command in its own group gets the terminal, as a shell's foreground job.
  std::optional<TerminalLoan> terminal =
      request.users_own_command && request.signal_group ? TerminalLoan::open() : std::nullopt;
  if (terminal) terminal->lend_to(child->pid());
  if (Status s = child->release(); !s) {
    // The release's error is the one to report; the tracer's stop only ends what was started.
    if (tracer) (void)tracer->stop();
    guard.fail_with(s.error().message);
    // Uncommitted, the guard marks the run failed with the same message as it goes.
    (void)guard.commit(tracer::RunEnd{s.error().exit_code, std::string(contract::status::kFailed), std::nullopt,
                                      s.error().message, std::nullopt, {}});
    return s.error();
  }
  // --duration ends a launched command as end_when does, counted from its release.
  const auto released = Clock::now();
  const auto end_when = [&] {
    return (request.duration_s &&
            std::chrono::duration<double>(Clock::now() - released).count() >= *request.duration_s) ||
           (request.end_when && request.end_when());
  };
  const bool may_end = request.end_when || request.duration_s;
  auto status = supervise_child(child->pid(), tracer, request.signal_group,
                                may_end ? std::function<bool()>(end_when) : std::function<bool()>(),
                                terminal ? &*terminal : nullptr);
  if (terminal) terminal->take_back();
  if (!status) {
    guard.fail_with(status.error().message);
    return status.error();
  }
  outcome.ended_by_harness = status->ended_by_harness;
  outcome.job_user_ns = cpu_ns(status->usage.ru_utime);
  outcome.job_system_ns = cpu_ns(status->usage.ru_stime);
  if (may_end && request.signal_group) end_process_group(child->pid());
  return status->status;
}

// Attaches to the targets and follows them; returns the span traced (monotonic ns).
Result<std::pair<int64_t, int64_t>> run_attached(const RunRequest& request, const std::vector<Target>& targets,
                                                 tracer::Tracer* tracer, RunGuard& guard) {
  for (const Target& t : targets) {
    if (Status s = tracer->attach(t.pid); !s) {
      guard.fail_with(s.error().message);
      (void)tracer->stop();  // the attach's error is the one to report; this only ends what was started
      return s.error();
    }
  }
  const int64_t from = monotonic_ns();
  supervise_attached(targets, tracer, request.duration_s);
  return std::make_pair(from, monotonic_ns());
}

// The tracer stopped and its totals (with the observer's and the attach's settings) stored.
std::optional<tracer::TraceTotals> store_trace(const RunRequest& request, tracer::Tracer& tracer, tracer::TraceDb& db,
                                               int64_t run_id, std::pair<int64_t, int64_t> traced_span,
                                               RunOutcome& outcome) {
  auto stopped = tracer.stop();
  if (!stopped) {
    outcome.trace_problems.push_back("the tracer could not be stopped cleanly: " + stopped.error().message);
    return std::nullopt;
  }
  tracer::TraceTotals totals = std::move(*stopped);
  if (traced_span.second > 0) {
    totals.settings.emplace_back(std::string(contract::kTracedFromSetting), std::to_string(traced_span.first));
    totals.settings.emplace_back(std::string(contract::kTracedUntilSetting), std::to_string(traced_span.second));
  }
  if (request.argv.empty()) add_trainer_command(totals);
  if (request.observer_dir)
    add_observed_job(request, db, run_id, totals, outcome);
  else if (request.kind == contract::kind::kCommand)
    totals.settings.emplace_back(std::string(contract::kObserverSetting), std::string(contract::kObserverOff));
  outcome.events_lost = totals.events_lost();
  outcome.calls_traced = totals.calls_traced();
  outcome.trace_problems = totals.problems;
  if (Status s = db.write_totals(run_id, totals); !s) {
    outcome.stored = false;
    outcome.store_error = s.error().message;
  }
  return totals;
}

// The workload's record: read, kept in --out, its batch timings stored. The record survives first
// in --out, then in the DB; when both fail it stays where the workload wrote it. A record --out
// cannot take (a full disk) is that output's failure, not the run's: the DB still holds it whole.
// Returns whether a record was due and missing.
bool keep_record(const RunRequest& request, tracer::TraceDb& db, int64_t run_id, const tracer::TraceTotals* totals,
                 RunOutcome& outcome) {
  outcome.result = read_result(request);
  // A workload that exits 0 without its record measured nothing (a --python that is not
  // python, a script that returned early): a failed run, not an ok one with no numbers.
  const bool record_missing = request.result_path && !outcome.result && !request.argv.empty() && outcome.exit_code == 0;
  if (record_missing) outcome.child_exit += " without writing its result record";
  if (outcome.result && request.record_dir) {
    const std::string path = run_file_path(*request.record_dir, run_id, request.label, "json");
    if (Status s = write_file_atomically(path, outcome.result->dump(2)); !s)
      outcome.record_error = s.error();
    else
      outcome.record_kept_at = path;
  }
  if (outcome.result) {
    if (auto summary = workloads::summary_from_json(*outcome.result); summary) {
      if (Status s = db.add_workload_events(run_id, workload_events(*summary, totals)); !s && outcome.stored) {
        outcome.stored = false;
        outcome.store_error = s.error().message;
      }
    }
  }
  return record_missing;
}

// Our workloads' batch waits reach the live metrics from their record, exact, as each run ends (the
// workload writes them there, not as it goes); the knobs from the run's config.
void publish_record_waits(const RunRequest& request, const TraceSettings& trace, int64_t run_id,
                          const RunOutcome& outcome) {
  if (!trace.metrics || !outcome.result || request.kind != contract::kind::kWorkload) return;
  auto summary = workloads::summary_from_json(*outcome.result);
  if (!summary) return;
  const nlohmann::json config = parse_json_or_discarded(request.config_json.value_or(""));
  tracer::LiveTotals live;
  live.run_id = run_id;
  for (const workloads::MainLoopTimings& loop : summary->loops) {
    tracer::LiveLoaderWaits l;
    l.pid = loop.pid;
    l.rank = loop.rank;
    l.role = std::string(contract::kRoleMain);
    l.wait_buckets.assign(tracer::kBatchWaitBounds.size() + 1, 0);
    for (const workloads::BatchTiming& b : loop.batches) {
      ++l.batches;
      l.wait_ns += b.wait_ns;
      const double seconds = static_cast<double>(b.wait_ns) / 1e9;
      ++l.wait_buckets[static_cast<size_t>(
          std::lower_bound(tracer::kBatchWaitBounds.begin(), tracer::kBatchWaitBounds.end(), seconds) -
          tracer::kBatchWaitBounds.begin())];
    }
    for (const char* knob : {"num_workers", "prefetch_factor", "pin_memory", "persistent_workers", "batch_size"})
      if (config.is_object() && config.contains(knob) && !config[knob].is_null()) l.knobs[knob] = config[knob].dump();
    live.loaders.push_back(std::move(l));
  }
  trace.metrics->sink()->publish(live);
}

// A launched command of the user's stopped from outside: timeout(1)'s status 124 (it stopped the
// command), or death by SIGINT, SIGTERM or SIGHUP. It ran as it would have until then, so its trace
// is judged as an interrupted one is; a workload's own record says how it ended.
std::optional<std::string> stopped_from_outside(const RunRequest& request, const RunOutcome& outcome) {
  if (request.result_path || request.argv.empty() || outcome.ended_by_harness) return std::nullopt;
  if (outcome.exit_code == 124)
    return "stopped from outside: the process exited with status 124, timeout(1)'s for a command it stopped";
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    if (outcome.exit_code == 128 + sig) return "stopped from outside: the process " + outcome.child_exit;
  return std::nullopt;
}

// The run's end as the DB keeps it: ok, failed (with why) or interrupted.
tracer::RunEnd decide_end(const RunRequest& request, bool record_missing, const nlohmann::json& target_outcomes,
                          bool attached, RunOutcome& outcome) {
  outcome.status = interrupt_requested() ? std::string(contract::status::kInterrupted)
                   : (outcome.exit_code == 0 && !record_missing) ||
                           (outcome.ended_by_harness && (outcome.result || !request.result_path))
                       ? std::string(contract::status::kOk)
                       : std::string(contract::status::kFailed);
  const auto stopped = stopped_from_outside(request, outcome);
  if (stopped && outcome.status == contract::status::kFailed) outcome.status = contract::status::kInterrupted;
  if (!outcome.stored && outcome.status == contract::status::kOk) outcome.status = contract::status::kFailed;
  std::optional<std::string> error = stopped;
  if (outcome.status == contract::status::kFailed && outcome.stored)
    error = outcome.result && outcome.result->contains("error") ? outcome.result->value("error", "")
                                                                 : "the process " + outcome.child_exit;
  if (!outcome.stored) error = "could not store everything: " + outcome.store_error;
  tracer::RunEnd end{outcome.exit_code, outcome.status,
                     outcome.result ? std::optional<std::string>(outcome.result->dump()) : std::nullopt, error,
                     attached ? std::optional<std::string>(target_outcomes.dump()) : std::nullopt, {}};
  if (outcome.job_user_ns && outcome.job_system_ns) {
    end.settings.emplace_back(std::string(contract::kJobUserNsSetting), std::to_string(*outcome.job_user_ns));
    end.settings.emplace_back(std::string(contract::kJobSystemNsSetting), std::to_string(*outcome.job_system_ns));
  }
  return end;
}

// What serving /metrics cost during the run: the service's cost since it began less what it was at the
// run's start (a sweep's runs share one service). Nothing when not serving.
void add_serving_cost(const TraceSettings& trace, const std::optional<metrics::ServingCost>& before,
                      tracer::RunEnd& end) {
  const auto now = trace.metrics && before ? trace.metrics->serving_cost() : std::nullopt;
  if (!now) return;
  const uint64_t cpu_ns = now->cpu_ns > before->cpu_ns ? now->cpu_ns - before->cpu_ns : 0;  // a thread that exited
  end.settings.emplace_back(std::string(contract::kMetricsServeCpuNsSetting), std::to_string(cpu_ns));
  end.settings.emplace_back(std::string(contract::kMetricsScrapesSetting), std::to_string(now->scrapes - before->scrapes));
}

}  // namespace

Result<RunOutcome> execute_run(const RunRequest& request, tracer::TraceDb& db, const TraceSettings& trace,
                               const std::string& machine_json) {
  auto targets = find_targets(request.attach_pids);
  if (!targets) return targets.error();
  tracer::RunStart start{request.label,       request.kind,        request.argv,       request.config_json,
                         machine_json,        trace.enabled,       trace.options.system_wide,
                         std::nullopt,        request.sweep_id,    request.sweep_point, request.sweep_phase};
  if (!targets->empty()) start.targets_json = nlohmann::json(request.attach_pids).dump();
  auto guard = RunGuard::begin(db, start);
  if (!guard) return guard.error();
  RunOutcome outcome;
  outcome.run_id = guard->id();
  const auto serving_before = trace.metrics ? trace.metrics->serving_cost() : std::nullopt;

  std::unique_ptr<tracer::Tracer> tracer;
  if (trace.enabled) {
    tracer::TraceOptions options = trace.options;
    options.observer_dir = request.observer_dir;  // the live metrics read the observer's records
    // Without them, an attached or launched job's waits are estimated live; our workloads' come exact
    // from their records, at each run's end (publish_record_waits).
    options.live_wait_estimate = !request.observer_dir && request.kind != contract::kind::kWorkload;
    auto t = tracer::Tracer::start(options, db.path(), guard->id());
    if (!t) {
      guard->fail_with("the tracer could not start: " + t.error().message);
      return t.error();
    }
    tracer = std::move(t).value();
  }

  int wait_status = 0;
  std::pair<int64_t, int64_t> traced_span{0, 0};  // attached: from the attach to the end of watching
  if (!request.argv.empty()) {
    auto status = run_launched(request, tracer.get(), db, *guard, outcome);
    if (!status) return status.error();
    wait_status = *status;
  } else {
    auto span = run_attached(request, *targets, tracer.get(), *guard);
    if (!span) return span.error();
    traced_span = *span;
  }
  outcome.exit_code = request.argv.empty() ? 0 : shell_exit_code(wait_status);
  outcome.child_exit = request.argv.empty() ? "was traced" : describe_wait_status(wait_status);

  std::optional<tracer::TraceTotals> totals;
  if (tracer) totals = store_trace(request, *tracer, db, guard->id(), traced_span, outcome);
  const nlohmann::json outcomes = target_outcomes(*targets, totals ? &*totals : nullptr);
  if (!targets->empty()) outcome.targets_summary = summarize_targets(outcomes);

  const bool record_missing = keep_record(request, db, guard->id(), totals ? &*totals : nullptr, outcome);
  publish_record_waits(request, trace, guard->id(), outcome);
  tracer::RunEnd end = decide_end(request, record_missing, outcomes, !targets->empty(), outcome);
  add_serving_cost(trace, serving_before, end);
  if (Status s = guard->commit(end); !s) {
    guard->fail_with("could not store the end of the run: " + s.error().message);
    if (outcome.stored) {
      outcome.stored = false;
      outcome.store_error = s.error().message;
    }
  }
  if (!outcome.stored && !outcome.record_kept_at) outcome.record_kept_at = request.result_path;
  return outcome;
}

Result<RunOutcome> store_unstarted_run(const RunRequest& request, tracer::TraceDb& db, const std::string& machine_json,
                                       const Error& cause) {
  tracer::RunStart start{request.label,  request.kind,     request.argv,       request.config_json,
                         machine_json,   false,            false,              std::nullopt,
                         request.sweep_id, request.sweep_point, request.sweep_phase};
  auto guard = RunGuard::begin(db, start);
  if (!guard) return guard.error();
  RunOutcome outcome;
  outcome.run_id = guard->id();
  outcome.exit_code = cause.exit_code;
  outcome.status = std::string(contract::status::kFailed);
  outcome.child_exit = cause.message;
  outcome.fix = cause.hint;
  if (Status s = guard->commit(tracer::RunEnd{cause.exit_code, outcome.status, std::nullopt, cause.message,
                                              std::nullopt, {}});
      !s) {
    guard->fail_with(cause.message);
    outcome.stored = false;
    outcome.store_error = s.error().message;
  }
  return outcome;
}

}  // namespace ingero::harness
