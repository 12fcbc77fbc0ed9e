// SPDX-License-Identifier: Apache-2.0
#include "tracer/threads.h"

#include <cstring>
#include <string>

#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/wait_status.h"

namespace ingero::tracer {

namespace {
std::string comm_of(const ib_event& e) { return std::string(e.comm, strnlen(e.comm, sizeof(e.comm))); }
}  // namespace

ThreadInfo& ThreadTable::ensure(pid_t tid, pid_t pid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) {
    it->second.tid = tid;
    it->second.pid = pid;
  }
  return it->second;
}

void ThreadTable::add_root(pid_t pid) { roots_.insert(pid); }

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
      break;
    }
    case IB_OP_THREAD_START: {
      ThreadInfo& t = ensure(tid, pid);
      t.comm = comm_of(e);
      t.start_ns = e.ts_ns;
      break;
    }
    case IB_OP_EXEC:
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
    const bool root = ranks_.empty() ? roots_.count(t.pid) > 0 : execed_with_rank(t.pid);
    t.role = std::string(contract::thread_role(t.comm, tid == t.pid, root));
    rows.push_back(std::move(t));
  }
  return rows;
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

}  // namespace ingero::tracer
