// SPDX-License-Identifier: Apache-2.0
// What the Python observer (tracer/observer/) wrote about a launched job: one JSON-lines file
// per Python process that built a DataLoader or ran as one of its workers, turned into the
// trace DB's own rows: the same batch_wait / batch_compute / worker_start events our python
// mode writes, one row per DataLoader with its knobs, and the roles the observer can vouch
// for (the processes that iterated, their workers, their pin threads).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "tracer/cpu_profile.h"
#include "tracer/live_totals.h"
#include "tracer/threads.h"
#include "tracer/trace_db.h"
#include "tracer/trace_totals.h"

namespace ingero::tracer {

// The observer's record formats this reader knows (a process line's observer_version); a file of another
// version is left out, and said in the notes.
inline constexpr int kObserverVersion = 1;

// The observer's files are named observer-<pid>.jsonl in the directory the harness gives it.
inline constexpr const char* kObserverDirEnv = "INGERO_OBSERVER_DIR";
inline constexpr const char* kObserverSwitchEnv = "INGERO_OBSERVER";
inline constexpr const char* kObserverOverridesEnv = "INGERO_OBSERVER_OVERRIDES";

struct ObservedJob {
  std::vector<ObservedLoader> loaders;
  std::vector<WorkloadEvent> events;  // batch_wait, batch_compute (loader set), worker_start
  std::vector<FramedEventStack> stacks;  // the Python stack that asked for each batch_wait
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

// A running job's observer files, read as they grow (a sweep ends a point once it has seen
// enough batches): each DataLoader's knobs and overrides, and when each returned batch was
// asked for. Only complete lines are read; a line still being written waits for the next poll.
struct LiveLoader {
  pid_t pid = 0;
  int loader = 0;
  nlohmann::json knobs;               // as the observer read them from the constructed loader
  nlohmann::json overrides_applied;   // {argument: value passed}
  nlohmann::json overrides_not_applicable;
  std::string override_error;
  std::string init_error;
  std::vector<uint64_t> batch_starts;  // next() calls that returned a batch, in time order
  uint64_t wait_ns = 0;                 // their waits, summed (a live view's counters)
  std::vector<uint64_t> wait_buckets;   // their waits per kBatchWaitBounds bucket, +Inf last
};

class ObserverTail {
 public:
  explicit ObserverTail(std::string dir) : dir_(std::move(dir)) {}
  // Reads what every observer file gained since the last call.
  void poll();
  const std::map<std::pair<pid_t, int>, LiveLoader>& loaders() const { return loaders_; }
  // The loader whose batches were asked for most (index: only loaders with that index), or null.
  const LiveLoader* busiest(std::optional<int> index = std::nullopt) const;
  // The roles the records vouch for so far (processes that iterated, their workers, pin threads).
  const RoleHints& roles() const { return roles_; }

 private:
  struct File {
    uint64_t offset = 0;
    std::string partial;  // an incomplete last line
    bool unknown_version = false;  // its process line names a version this reader does not know
  };
  void read_line(File& file, const std::string& line);
  std::string dir_;
  std::map<std::string, File> files_;
  std::map<std::pair<pid_t, int>, LiveLoader> loaders_;
  RoleHints roles_;
};

}  // namespace ingero::tracer
