#include "tracer/threads.h"

#include <cstring>

namespace ingero::tracer {

namespace {
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string comm_of(const ib_event& e) { return std::string(e.comm, strnlen(e.comm, sizeof(e.comm))); }
}  // namespace

std::string_view thread_role(pid_t tid, std::string_view comm, pid_t root_pid) {
  if (starts_with(comm, "ib-worker") || starts_with(comm, "pt_data_worker")) return "worker";
  if (starts_with(comm, "ib-pin") || starts_with(comm, "pt_data_pin")) return "pin";
  if (tid == root_pid) return "main";
  return "other";
}

int exit_code_from_status(int64_t status) {
  int signal = static_cast<int>(status & 0x7f);
  if (signal != 0) return 128 + signal;
  return static_cast<int>((status >> 8) & 0xff);
}

ThreadInfo& ThreadTable::ensure(pid_t tid, pid_t pid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) it->second.pid = pid;
  return it->second;
}

void ThreadTable::apply(const ib_event& e) {
  switch (e.op) {
    case IB_OP_FORK: {  // pid/tid: the parent; arg: the new process
      pid_t child = static_cast<pid_t>(e.arg);
      ThreadInfo& t = threads_[child];
      t = ThreadInfo{child, static_cast<pid_t>(e.pid), comm_of(e), e.ts_ns, std::nullopt, std::nullopt};
      break;
    }
    case IB_OP_THREAD_START: {
      ThreadInfo& t = threads_[static_cast<pid_t>(e.tid)];
      t = ThreadInfo{static_cast<pid_t>(e.pid), std::nullopt, comm_of(e), e.ts_ns, std::nullopt, std::nullopt};
      break;
    }
    case IB_OP_EXEC:
    case IB_OP_RENAME:
      ensure(static_cast<pid_t>(e.tid), static_cast<pid_t>(e.pid)).comm = comm_of(e);
      break;
    case IB_OP_EXIT:
    case IB_OP_THREAD_EXIT: {
      ThreadInfo& t = ensure(static_cast<pid_t>(e.tid), static_cast<pid_t>(e.pid));
      t.comm = comm_of(e);
      t.exit_ns = e.ts_ns;
      t.exit_code = static_cast<int>(e.ret);  // already decoded by the consumer
      break;
    }
    default:
      break;
  }
}

}  // namespace ingero::tracer
