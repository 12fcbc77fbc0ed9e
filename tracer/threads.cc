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

void ThreadTable::set_rank(pid_t pid, int rank) { ranks_[pid] = rank; }

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

std::vector<ThreadInfo> ThreadTable::rows() const {
  std::vector<ThreadInfo> rows;
  rows.reserve(threads_.size());
  for (const auto& [tid, thread] : threads_) {
    ThreadInfo t = thread;
    if (t.comm.empty())
      t.comm = proc::read_first_line("/proc/" + std::to_string(t.pid) + "/task/" + std::to_string(tid) + "/comm")
                   .value_or("?");
    auto rank = ranks_.find(t.pid);
    if (rank != ranks_.end()) t.rank = rank->second;
    const bool root = roots_.count(t.pid) > 0 || rank != ranks_.end();
    t.role = std::string(contract::thread_role(t.comm, tid == t.pid, root));
    rows.push_back(std::move(t));
  }
  return rows;
}

}  // namespace ingero::tracer
