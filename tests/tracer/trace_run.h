// SPDX-License-Identifier: Apache-2.0
// Runs a function or a program as a traced child, the way the harness does:
// start the tracer, fork the child paused, enroll it, release it, poll while it
// runs, stop. Then the DB can be queried.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "common/sqlite.h"
#include "tests/common/temp_dir.h"
#include "tracer/tracer.h"

// The tracer's tests need root for eBPF; each says so and skips without it (gtest's macros, for the
// tests that include this).
#define REQUIRE_ROOT()                                                                              \
  if (geteuid() != 0) GTEST_SKIP() << "needs root for eBPF: run the tracer tests as root (sudo ctest)"

// A traced run (or a tracer) that must have started, with the error and its hint when it did not.
#define ASSERT_RUN(result) ASSERT_TRUE((result).ok()) << (result).error().message << " " << (result).error().hint

namespace ingero::tracer::testing {

using ::ingero::testing::TempDir;

struct TracedRun {
  int64_t run_id = 0;
  pid_t root_pid = 0;
  int wait_status = 0;
  TraceTotals totals;  // what stop() returned (also written to the DB)
  sql::Connection db;

  int64_t query_int(const std::string& sql) const;  // first column of the first row; -1 if no row
  int64_t setting_int(const std::string& key) const;  // the run's run_settings value of key; -1 if none
  std::string where() const { return " run_id = " + std::to_string(run_id) + " "; }
};

// `child` runs in the forked process; its return value is the exit code. The DB is
// dir/trace.db, or db_path.
Result<TracedRun> run_traced(const std::string& db_path, const TraceOptions& opts, const std::function<int()>& child);
inline Result<TracedRun> run_traced(const TempDir& dir, const TraceOptions& opts, const std::function<int()>& child) {
  return run_traced(dir.file("trace.db"), opts, child);
}

// Counts this process's open BPF objects and perf events (from /proc/self/fd).
int count_own_bpf_fds();
// Counts BPF programs and links loaded in the whole system.
int count_system_bpf_objects();

}  // namespace ingero::tracer::testing
