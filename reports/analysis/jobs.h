// SPDX-License-Identifier: Apache-2.0
// Which runs of a trace DB are one distributed job traced on several nodes (`ingero-bench
// merge` puts each node's runs in one file). Each node traces its own ranks; the runs of one
// job are the ones that could not be anything else:
//
//   - every run carries ranks (threads.rank), and no rank is in two of them;
//   - their world sizes agree where known (the tracer's run setting from WORLD_SIZE, else the
//     result record's world_size), and every rank is below it;
//   - their wall-clock windows overlap: a run covers [started_unix, started_unix + (end_ns −
//     start_ns) / 1e9] (the end of its last event when it recorded no end), and all of a job's
//     windows share a stretch of time.
//
// Runs are taken in order of wall-clock start (then run id); each joins the first job it fits
// with every member of, else starts one. A job has two runs or more. The node does not decide
// (containers may share a hostname); it is what the reports name each run by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// One run as the grouping sees it.
struct JobMember {
  int64_t run_id = 0;
  std::string node;
  std::vector<int64_t> ranks;  // ascending, distinct
  std::optional<int64_t> world_size;
  double start_unix = 0;  // its wall-clock window
  double end_unix = 0;
};

struct Job {
  std::vector<JobMember> members;     // by wall-clock start, then run id
  std::optional<int64_t> world_size;  // the members' where any knows it
  double overlap_start_unix = 0;      // the stretch every member was traced
  double overlap_end_unix = 0;
  std::vector<int64_t> missing_ranks;  // ranks below the world size that no member traced
  const JobMember* member(int64_t run_id) const;  // nullptr when not in the job
};

// The jobs among these runs, in order of their first member's start (the rule above).
std::vector<Job> group_jobs(std::vector<JobMember> runs);

// The jobs of a trace DB's runs.
Result<std::vector<Job>> find_jobs(const TraceFile& trace);

// The job a run belongs to, if any.
std::optional<Job> job_of(const std::vector<Job>& jobs, int64_t run_id);

}  // namespace ingero::reports
