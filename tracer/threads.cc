// SPDX-License-Identifier: Apache-2.0
#include "tracer/threads.h"

#include <cstring>
#include <map>
#include <string>

#include "common/list_text.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/wait_status.h"

namespace ingero::tracer {

namespace {
std::string comm_of(const ib_event& e) { return std::string(e.comm, strnlen(e.comm, sizeof(e.comm))); }
}  // namespace

const ThreadInfo* ThreadTable::find(pid_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

ThreadInfo& ThreadTable::ensure(pid_t tid, pid_t pid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) {
    it->second.tid = tid;
    it->second.pid = pid;
  }
  return it->second;
}

void ThreadTable::add_root(pid_t pid) { roots_.insert(pid); }

void ThreadTable::mark_forked_copy(pid_t pid) { forked_copies_.insert(pid); }

void ThreadTable::set_rank(pid_t pid, int rank, std::optional<int> world_size) {
  ranks_[pid] = rank;
  if (world_size) world_sizes_.insert(*world_size);
}

void ThreadTable::apply(const ib_event& e) {
  const auto pid = static_cast<pid_t>(e.pid), tid = static_cast<pid_t>(e.tid);
  switch (e.op) {
    case IB_OP_FORK: {  // pid/tid: the parent; arg: the new process
      const auto child = static_cast<pid_t>(e.arg);
      ThreadInfo& t = ensure(child, child);
      t.ppid = pid;
      t.comm = comm_of(e);
      t.start_ns = e.ts_ns;
      forked_copies_.insert(child);
      break;
    }
    case IB_OP_THREAD_START: {
      ThreadInfo& t = ensure(tid, pid);
      t.comm = comm_of(e);
      t.start_ns = e.ts_ns;
      break;
    }
    case IB_OP_EXEC:
      forked_copies_.erase(pid);
      ensure(tid, pid).comm = comm_of(e);
      break;
    case IB_OP_RENAME:
      ensure(tid, pid).comm = comm_of(e);
      break;
    case IB_OP_EXIT:
    case IB_OP_THREAD_EXIT: {
      ThreadInfo& t = ensure(tid, pid);
      t.comm = comm_of(e);
      t.exit_ns = e.ts_ns;
      t.exit_code = shell_exit_code(static_cast<int>(e.ret));
      break;
    }
    default:
      break;
  }
}

// A process's rank: its own (read from the environment it exec'd with), else its nearest
// ranked ancestor's, since a forked worker inherits that environment.
std::optional<int> ThreadTable::rank_of(pid_t pid) const {
  for (int depth = 0; depth < 64; ++depth) {
    if (auto rank = ranks_.find(pid); rank != ranks_.end()) return rank->second;
    auto process = threads_.find(pid);
    if (process == threads_.end() || !process->second.ppid || *process->second.ppid == pid) return std::nullopt;
    pid = *process->second.ppid;
  }
  return std::nullopt;
}

bool ThreadTable::execed_with_rank(pid_t pid) const { return ranks_.count(pid) > 0; }

std::vector<ThreadInfo> ThreadTable::rows() const {
  std::vector<ThreadInfo> rows;
  rows.reserve(threads_.size());
  for (const auto& [tid, thread] : threads_) {
    ThreadInfo t = thread;
    if (t.comm.empty())
      t.comm = proc::read_first_line("/proc/" + std::to_string(t.pid) + "/task/" + std::to_string(tid) + "/comm")
                   .value_or("?");
    t.rank = rank_of(t.pid);
    // In a DDP job each rank's process runs a main loop; the launcher (torchrun) does not.
    t.root = roots_.count(t.pid) > 0;
    t.forked_copy = forked_copies_.count(t.pid) > 0 && !t.root;
    const bool trainer = ranks_.empty() ? t.root : execed_with_rank(t.pid);
    t.role = std::string(contract::thread_role(t.comm, tid == t.pid, trainer));
    rows.push_back(std::move(t));
  }
  return rows;
}

namespace {

bool named_loader_thread(const ThreadInfo& t) {
  const auto by_name = contract::thread_role(t.comm, false, false);
  return by_name == contract::kRoleWorker || by_name == contract::kRolePin;
}

std::map<pid_t, const ThreadInfo*> processes_of(const std::vector<ThreadInfo>& threads) {
  std::map<pid_t, const ThreadInfo*> processes;
  for (const ThreadInfo& t : threads)
    if (t.tid == t.pid) processes[t.pid] = &t;
  return processes;
}

// The processes that run the training loop, by evidence: CUDA/NCCL calls, the observer's
// DataLoader iterations; else the ranked processes or roots that rows() made 'main'.
std::set<pid_t> evidenced_trainers(const TraceTotals& totals, const RoleHints& hints) {
  std::set<pid_t> trainers = hints.trainers;
  for (const auto& [key, stats] : totals.call_stats)
    if (stats.calls > 0) trainers.insert(static_cast<pid_t>(stats.pid));
  return trainers;
}

// Without evidence, a root that only waited for the program it started (timeout, bash -c)
// hands 'main' to the busiest of the root and the processes exec'd below it.
std::set<pid_t> busiest_program(const TraceTotals& totals, const std::set<pid_t>& current) {
  const auto processes = processes_of(totals.threads);
  std::map<pid_t, uint64_t> oncpu;
  for (const auto& [tid, stats] : totals.thread_stats) oncpu[static_cast<pid_t>(stats.pid)] += stats.oncpu_ns;
  pid_t best = 0;
  uint64_t best_ns = 0;
  for (const auto& [pid, t] : processes) {
    if (t->forked_copy || named_loader_thread(*t)) continue;
    if (!t->root && !t->ppid) continue;
    if (oncpu[pid] > best_ns || best == 0) {
      best = pid;
      best_ns = oncpu[pid];
    }
  }
  if (best == 0 || current.count(best)) return current;
  for (pid_t pid : current)
    if (oncpu[pid] >= best_ns) return current;
  return {best};
}

}  // namespace

void assign_roles(TraceTotals& totals, const RoleHints& hints) {
  std::set<pid_t> trainers = evidenced_trainers(totals, hints);
  if (trainers.empty()) {
    std::set<pid_t> current;
    bool ranked = false;
    for (const ThreadInfo& t : totals.threads) {
      if (t.tid == t.pid && t.role == contract::kRoleMain) current.insert(t.pid);
      ranked |= t.rank.has_value();
    }
    trainers = ranked ? current : busiest_program(totals, current);
  }
  const auto processes = processes_of(totals.threads);
  auto forked_from_trainer = [&](const ThreadInfo& t) {
    auto process = processes.find(t.pid);
    return process != processes.end() && process->second->forked_copy && process->second->ppid &&
           trainers.count(*process->second->ppid) > 0;
  };
  for (ThreadInfo& t : totals.threads) {
    const bool main_thread = t.tid == t.pid;
    std::string_view role = contract::thread_role(t.comm, main_thread, trainers.count(t.pid) > 0);
    if (role == contract::kRoleOther || role == contract::kRoleMain) {
      if (hints.pin_threads.count(t.tid))
        role = contract::kRolePin;
      else if (hints.workers.count(t.pid) || (role == contract::kRoleOther && forked_from_trainer(t)))
        role = contract::kRoleWorker;
    }
    t.role = std::string(role);
  }
}

void record_world_size(const std::set<int>& world_sizes, TraceTotals& totals) {
  if (world_sizes.size() == 1) {
    totals.settings.emplace_back(std::string(contract::kWorldSizeSetting), std::to_string(*world_sizes.begin()));
  } else if (world_sizes.size() > 1) {
    std::string list;
    for (int size : world_sizes) list += (list.empty() ? "" : ", ") + std::to_string(size);
    totals.problems.push_back("the ranked processes were started with different WORLD_SIZE values (" + list +
                              "): no world size recorded");
  }
}

std::optional<int> small_number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const auto value = parse_digits(*text, 999'999);
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

std::optional<int> rank_from_environment(const std::optional<std::string>& rank,
                                         const std::optional<std::string>& local_rank) {
  if (auto global = small_number(rank)) return global;
  return small_number(local_rank);
}

}  // namespace ingero::tracer
