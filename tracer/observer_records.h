// SPDX-License-Identifier: Apache-2.0
// What the Python observer (tracer/observer/) wrote about a launched job: one JSON-lines file
// per Python process that built a DataLoader or ran as one of its workers, turned into the
// trace DB's own rows: the same batch_wait / batch_compute / worker_start events our python
// mode writes, one row per DataLoader with its knobs, and the roles the observer can vouch
// for (the processes that iterated, their workers, their pin threads).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"
#include "tracer/threads.h"
#include "tracer/trace_db.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

// The observer's files are named observer-<pid>.jsonl in the directory the harness gives it.
inline constexpr const char* kObserverDirEnv = "INGERO_OBSERVER_DIR";
inline constexpr const char* kObserverSwitchEnv = "INGERO_OBSERVER";
inline constexpr const char* kObserverOverridesEnv = "INGERO_OBSERVER_OVERRIDES";

struct ObservedJob {
  std::vector<ObservedLoader> loaders;
  std::vector<WorkloadEvent> events;  // batch_wait, batch_compute (loader set), worker_start
  RoleHints roles;
  int processes = 0;                  // Python processes that wrote a file
  int64_t batches = 0;
  int64_t dropped = 0;                // batches past the observer's cap, not recorded
  std::vector<std::string> notes;     // the observer's own errors, unreadable lines, in words
};

// Reads every observer-*.jsonl in dir (none: an empty job). A file's malformed last line (a
// process killed mid-write) is skipped and said in the notes; fork times of workers come from
// the trace's threads when the tracer saw them start.
ObservedJob read_observed_job(const std::string& dir, const std::vector<ThreadInfo>& threads);

}  // namespace ingero::tracer
