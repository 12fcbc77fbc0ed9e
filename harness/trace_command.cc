// SPDX-License-Identifier: Apache-2.0
// ingero-bench trace: a launched command (-- CMD ...), running processes (--pid), or every
// process that maps a CUDA library (--duration alone), traced into the DB as one run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/atomic_file.h"
#include "common/list_text.h"
#include "harness/commands.h"
#include "harness/diagnosis.h"
#include "harness/machine_info.h"
#include "harness/observer_setup.h"
#include "harness/signals.h"
#include "harness/sudo_user.h"

namespace ingero::harness {

Result<std::vector<pid_t>> parse_pids(const std::string& text) {
  std::vector<pid_t> pids;
  for (const std::string& item : split_list(text)) {
    auto id = parse_id("--pid", item);
    if (!id) return id.error();
    if (*id > INT32_MAX) return Error::bad_input(fmt::format("--pid {} is not a process id", *id));
    const auto pid = static_cast<pid_t>(*id);
    if (pid == getpid()) return Error::bad_input("--pid names ingero-bench itself", "pass the job's pid");
    const auto stat = proc::read_stat(pid);
    if (!stat) return Error::bad_input(fmt::format("--pid {}: no such process", pid), "check the pid with ps");
    // A zombie has exited and waits only to be reaped: nothing of it runs to trace.
    if (stat->state == 'Z' || stat->state == 'X')
      return Error::bad_input(fmt::format("--pid {} ({}) has exited; its parent (pid {}) has not reaped it yet", pid,
                                          stat->comm, stat->ppid),
                              "attach to a running process: check the pid with ps (state Z is an exited one)");
    // --pid X,X attaches once: a second attach would count the process's events twice.
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
  }
  return pids;
}

// The program execvp would run, found before anything is traced or stored.
Status check_program(const std::string& program) {
  auto executable = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    if (executable(program)) return {};
  } else if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
      if (executable(dir + "/" + program)) return {};
      start = end + 1;
    }
  }
  return Error::bad_input(fmt::format("'{}' is not an executable program{}", program,
                                      program.find('/') == std::string::npos ? " on PATH" : ""),
                          "give the path of the program to trace after --, e.g. ingero-bench trace -- python3 train.py");
}

Result<int> run_trace_command(const TraceCommandFlags& flags) {
  const bool launch = !flags.command.empty();
  const bool attach = !flags.pids.empty();
  if (launch && attach)
    return Error::bad_input("trace takes a command (after --) or --pid, not both",
                            "ingero-bench trace -- python3 train.py, or ingero-bench trace --pid 1234");
  // System-wide with --metrics-addr and no --duration: a node agent, serving until interrupted.
  if (!launch && !attach && flags.duration.empty() && flags.trace.metrics_addr.empty())
    return Error::bad_input("trace needs a command, --pid or --duration",
                            "e.g. ingero-bench trace -- python3 train.py, ingero-bench trace --pid 1234 --duration 60s, "
                            "ingero-bench trace --duration 60s (every CUDA process), or ingero-bench trace "
                            "--metrics-addr 9478 (every CUDA process, served to Prometheus until Ctrl-C)");
  if (flags.trace.no_trace) return Error::bad_input("trace with --no-trace would record nothing", "drop --no-trace");
  RunRequest req;
  if (!flags.duration.empty()) {
    auto seconds = parse_duration("--duration", flags.duration);
    if (!seconds) return seconds.error();
    req.duration_s = *seconds;
  }
  if (attach) {
    auto pids = parse_pids(flags.pids);
    if (!pids) return pids.error();
    req.attach_pids = *pids;
  }
  auto settings = trace_settings(flags.trace);
  if (!settings) return settings.error();
  auto overrides = parse_overrides(flags.overrides);
  if (!overrides) return overrides.error();
  if (!overrides->empty() && (!launch || flags.no_observer))
    return Error::bad_input("--override changes a launched job's DataLoaders through the observer",
                            "use it with a command after --, without --no-observer");
  auto sudo = sudo_user();
  if (!sudo) return sudo.error();
  if (*sudo && launch && !flags.as_root) {
    req.run_as = **sudo;
    req.env = user_environment(**sudo);
  }
  std::optional<PrivateDir> private_dir;
  if (launch && !flags.no_observer) {
    auto dir = PrivateDir::create("ingero-bench-run");
    if (!dir) return dir.error();
    private_dir.emplace(std::move(*dir));
    auto observer = install_observer(private_dir->path(), *overrides);
    if (!observer) return observer.error();
    // The job's observer reads its code and writes its records there, as the job's user.
    if (req.run_as) give_tree_to_user(*req.run_as, private_dir->path());
    req.env.insert(req.env.end(), observer->env.begin(), observer->env.end());
    req.observer_dir = observer->records_dir;
    req.overrides = *overrides;
  }
  if (launch) {
    if (Status s = check_program(flags.command.front()); !s) return s.error();
    req.kind = std::string(contract::kind::kCommand);
    req.argv = flags.command;
    req.signal_group = true;
    req.users_own_command = true;
    req.label = "trace:";
    for (const auto& a : flags.command) req.label += " " + a;
  } else if (attach) {
    req.kind = std::string(contract::kind::kAttach);
    req.label = "attach: pid " + flags.pids;
  } else {
    req.kind = std::string(contract::kind::kSystem);
    req.cuda_processes = true;
    req.label = "trace: every CUDA process " + (flags.duration.empty() ? "until interrupted" : "for " + flags.duration);
    settings->options.cuda_processes_only = true;
  }
  const std::vector<std::string> made_for_db = missing_parents(flags.trace.db);
  auto db = tracer::TraceDb::open(flags.trace.db);
  if (!db) return db.error();
  // Under sudo the DB and the folders made for it are the user's, whoever the job ran as.
  const auto give_outputs = [&] {
    if (!*sudo) return;
    std::vector<std::string> outputs = made_for_db;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) outputs.push_back(flags.trace.db + suffix);
    give_to_user(**sudo, outputs);
  };
  give_outputs();
  // CUDA availability is not probed here: the traced processes own the GPU.
  auto outcome = execute_run(req, *db, *settings, machine_info(std::nullopt).dump());
  if (!outcome) return outcome.error();
  report_outcome(*outcome, false);
  if (launch)
    std::fprintf(stderr, "ingero-bench: run %lld: '%s' %s%s; trace database: %s\n",
                 static_cast<long long>(outcome->run_id), flags.command.front().c_str(), outcome->child_exit.c_str(),
                 outcome->ended_by_harness ? fmt::format(" (ended after --duration {})", flags.duration).c_str() : "",
                 db->path().c_str());
  else
    std::fprintf(stderr, "ingero-bench: run %lld: %s; trace database: %s\n", static_cast<long long>(outcome->run_id),
                 outcome->targets_summary.empty() ? "traced" : outcome->targets_summary.c_str(), db->path().c_str());
  if (req.observer_dir)
    std::fprintf(stderr, "ingero-bench: DataLoader observer: %s\n",
                 outcome->observed_batches > 0 ? fmt::format("{} batches recorded", outcome->observed_batches).c_str()
                 : outcome->observer_unreached
                     ? fmt::format("did not reach the job (the waits are estimated from wake-ups): {}",
                                   *outcome->observer_unreached)
                           .c_str()
                     : "no DataLoader batch was iterated (the waits are estimated from wake-ups)");
  for (const auto& note : outcome->observer_notes) std::fprintf(stderr, "  note: %s\n", note.c_str());
  if (outcome->stored) print_diagnosis(db->path(), {outcome->run_id}, std::cerr);
  give_outputs();
  if (interrupt_requested()) return interrupt_exit_code();
  if (!outcome->stored) return kExitFailure;
  // A command ended by --duration exited as asked: its signal status is ours, not its own.
  return launch && !outcome->ended_by_harness ? outcome->exit_code : kExitOk;
}

}  // namespace ingero::harness
