// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/jobs.h"

#include <algorithm>
#include <set>
#include <tuple>


namespace ingero::reports {
namespace {

bool overlap(const JobMember& a, const JobMember& b) {
  return std::max(a.start_unix, b.start_unix) < std::min(a.end_unix, b.end_unix);
}

// A job as runs join it.
struct Forming {
  std::vector<JobMember> members;
  std::set<int64_t> ranks;
  std::optional<int64_t> world_size;
};

bool fits(const Forming& job, const JobMember& run) {
  for (int64_t rank : run.ranks)
    if (job.ranks.count(rank)) return false;
  if (job.world_size && run.world_size && *job.world_size != *run.world_size) return false;
  const std::optional<int64_t> size = job.world_size ? job.world_size : run.world_size;
  if (size && (*job.ranks.rbegin() >= *size || run.ranks.back() >= *size)) return false;
  return std::all_of(job.members.begin(), job.members.end(),
                     [&](const JobMember& member) { return overlap(member, run); });
}

void join(Forming& job, JobMember run) {
  job.ranks.insert(run.ranks.begin(), run.ranks.end());
  if (!job.world_size) job.world_size = run.world_size;
  job.members.push_back(std::move(run));
}

Job finished(Forming&& forming) {
  Job job;
  job.world_size = forming.world_size;
  job.overlap_start_unix = forming.members.front().start_unix;
  job.overlap_end_unix = forming.members.front().end_unix;
  for (const JobMember& m : forming.members) {
    job.overlap_start_unix = std::max(job.overlap_start_unix, m.start_unix);
    job.overlap_end_unix = std::min(job.overlap_end_unix, m.end_unix);
  }
  if (job.world_size)
    for (int64_t rank = 0; rank < *job.world_size; ++rank)
      if (!forming.ranks.count(rank)) job.missing_ranks.push_back(rank);
  job.members = std::move(forming.members);
  return job;
}

std::optional<int64_t> result_world_size(const nlohmann::json& result) {
  if (!result.is_object()) return std::nullopt;
  auto it = result.find("world_size");
  if (it == result.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

Result<JobMember> member_of(const TraceFile& trace, const RunRecord& run, RunRanks ranks) {
  JobMember m;
  m.run_id = run.run_id;
  m.node = run.node;
  m.ranks = std::move(ranks.ranks);
  m.world_size = ranks.world_size ? ranks.world_size : result_world_size(run.result);
  std::optional<int64_t> end = run.end_ns;
  if (!end) {
    auto last = trace.last_event_end(run.run_id);
    if (!last) return last.error();
    end = *last;
  }
  m.start_unix = run.started_unix;
  m.end_unix = run.started_unix + static_cast<double>(std::max<int64_t>(0, end.value_or(run.start_ns) - run.start_ns)) / 1e9;
  return m;
}

}  // namespace

const JobMember* Job::member(int64_t run_id) const {
  for (const JobMember& m : members)
    if (m.run_id == run_id) return &m;
  return nullptr;
}

std::vector<Job> group_jobs(std::vector<JobMember> runs) {
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const JobMember& r) { return r.ranks.empty(); }), runs.end());
  std::sort(runs.begin(), runs.end(), [](const JobMember& a, const JobMember& b) {
    return std::tie(a.start_unix, a.run_id) < std::tie(b.start_unix, b.run_id);
  });
  std::vector<Forming> forming;
  for (JobMember& run : runs) {
    auto job = std::find_if(forming.begin(), forming.end(), [&](const Forming& f) { return fits(f, run); });
    if (job == forming.end()) job = forming.insert(forming.end(), Forming{});
    join(*job, std::move(run));
  }
  std::vector<Job> jobs;
  for (Forming& f : forming)
    if (f.members.size() >= 2) jobs.push_back(finished(std::move(f)));
  return jobs;
}

Result<std::vector<Job>> find_jobs(const TraceFile& trace) {
  auto ranked = trace.ranked_runs();
  if (!ranked) return ranked.error();
  if (ranked->size() < 2) return std::vector<Job>{};
  auto runs = trace.runs();
  if (!runs) return runs.error();
  std::vector<JobMember> members;
  for (RunRanks& r : *ranked) {
    auto run = std::find_if(runs->begin(), runs->end(), [&](const RunRecord& x) { return x.run_id == r.run_id; });
    if (run == runs->end()) continue;  // threads of a run that is gone
    auto member = member_of(trace, *run, std::move(r));
    if (!member) return member.error();
    members.push_back(std::move(*member));
  }
  return group_jobs(std::move(members));
}

std::optional<Job> job_of(const std::vector<Job>& jobs, int64_t run_id) {
  for (const Job& job : jobs)
    if (job.member(run_id)) return job;
  return std::nullopt;
}

}  // namespace ingero::reports
