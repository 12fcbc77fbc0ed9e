// SPDX-License-Identifier: Apache-2.0
// Who is the trainer: the process that called CUDA or iterated a DataLoader, not the wrapper that
// started it; workers by name, by the observer's word, or as never-exec'd forks of the trainer.
#include <gtest/gtest.h>

#include "bpf/events.h"
#include "common/trace_contract.h"
#include "tracer/threads.h"

namespace ingero::tracer {
namespace {

ib_event process_event(uint16_t op, uint32_t pid, uint32_t tid, const char* comm, int64_t arg = 0) {
  ib_event e{};
  e.op = op;
  e.pid = pid;
  e.tid = tid;
  e.arg = arg;
  snprintf(e.comm, sizeof(e.comm), "%s", comm);
  return e;
}

// timeout (10) forks and execs python3 (11), which forks an unnamed worker (12) and starts a thread (13).
TraceTotals wrapped_job() {
  ThreadTable table;
  table.add_root(10);
  table.ensure(10, 10).comm = "timeout";
  table.apply(process_event(IB_OP_FORK, 10, 10, "timeout", 11));
  table.apply(process_event(IB_OP_EXEC, 11, 11, "python3"));
  table.apply(process_event(IB_OP_FORK, 11, 11, "python3", 12));
  table.apply(process_event(IB_OP_THREAD_START, 11, 13, "python3"));
  TraceTotals totals;
  totals.threads = table.rows();
  auto oncpu = [](uint32_t pid, uint64_t ns) {
    ib_thread_stats s{};
    s.pid = pid;
    s.oncpu_ns = ns;
    return s;
  };
  totals.thread_stats = {{10, oncpu(10, 1'000'000)}, {11, oncpu(11, 900'000'000)}, {12, oncpu(12, 800'000'000)}};
  return totals;
}

std::string role_of(const TraceTotals& totals, pid_t tid) {
  for (const ThreadInfo& t : totals.threads)
    if (t.tid == tid) return t.role;
  return "?";
}

TEST(Roles, TheRootIsMainUntilTheEvidenceSaysOtherwise) {
  TraceTotals totals = wrapped_job();
  EXPECT_EQ(role_of(totals, 10), "main") << "rows() alone knows only the root";
}

TEST(Roles, AWrapperHandsMainToTheBusiestProgramItStarted) {
  TraceTotals totals = wrapped_job();
  assign_roles(totals, {});
  EXPECT_EQ(role_of(totals, 10), "other");
  EXPECT_EQ(role_of(totals, 11), "main");
  EXPECT_EQ(role_of(totals, 13), "other");
  EXPECT_EQ(role_of(totals, 12), "worker") << "a fork of the trainer that never exec'd";
}

TEST(Roles, CudaCallsMakeTheTrainer) {
  TraceTotals totals = wrapped_job();
  ib_call_stats calls{};
  calls.pid = 11;
  calls.calls = 5;
  totals.call_stats = {{{13, IB_OP_CUDA_LAUNCH_KERNEL}, calls}};
  totals.thread_stats.clear();  // no CPU evidence: the CUDA calls alone decide
  assign_roles(totals, {});
  EXPECT_EQ(role_of(totals, 11), "main");
  EXPECT_EQ(role_of(totals, 10), "other");
}

TEST(Roles, TheObserverNamesTrainerWorkersAndPinThread) {
  TraceTotals totals = wrapped_job();
  assign_roles(totals, RoleHints{{11}, {12}, {13}});
  EXPECT_EQ(role_of(totals, 11), "main");
  EXPECT_EQ(role_of(totals, 12), "worker");
  EXPECT_EQ(role_of(totals, 13), "pin");
  assign_roles(totals, RoleHints{{11}, {12}, {13}});
  EXPECT_EQ(role_of(totals, 13), "pin") << "assigning twice changes nothing";
}

TEST(Roles, NamedLoaderThreadsKeepTheirNames) {
  TraceTotals totals = wrapped_job();
  for (ThreadInfo& t : totals.threads)
    if (t.tid == 13) t.comm = "pt_data_pin";
  assign_roles(totals, RoleHints{{11}, {}, {}});
  EXPECT_EQ(role_of(totals, 13), "pin");
}

}  // namespace
}  // namespace ingero::tracer
