// SPDX-License-Identifier: Apache-2.0
#include "tracer/live_health.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/trace_contract.h"

namespace ingero::tracer {

namespace {

void add(std::optional<uint64_t>& sum, const std::optional<uint64_t>& value) {
  if (value) sum = sum.value_or(0) + *value;
}

template <typename Pick>
void keep(std::optional<uint64_t>& kept, const std::optional<uint64_t>& value, Pick pick) {
  if (value) kept = kept ? pick(*kept, *value) : *value;
}

}  // namespace

void LatestHealth::update(const std::vector<ProcessSample>& round) {
  std::lock_guard lock(mutex_);
  std::map<pid_t, ProcessSample> next;
  for (const ProcessSample& s : round) {
    ProcessSample& kept = next[s.pid] = s;
    auto before = latest_.find(s.pid);
    if (before == latest_.end()) continue;
    if (!kept.private_dirty_bytes) kept.private_dirty_bytes = before->second.private_dirty_bytes;
    if (!kept.pss_bytes) kept.pss_bytes = before->second.pss_bytes;
  }
  latest_.swap(next);
}

void LatestHealth::add_oom_kill(pid_t victim) {
  std::lock_guard lock(mutex_);
  ++oom_kills_[victim];
}

void LatestHealth::fill(const std::vector<ThreadInfo>& threads, LiveTotals& live) const {
  std::map<pid_t, const ThreadInfo*> info;
  for (const ThreadInfo& t : threads) info[t.tid] = &t;
  auto who = [&](pid_t pid) -> std::pair<std::string, std::optional<int>> {
    auto it = info.find(pid);
    if (it == info.end()) return {std::string(contract::kRoleOther), std::nullopt};
    return {it->second->role, it->second->rank};
  };
  std::lock_guard lock(mutex_);
  std::map<std::pair<std::string, int>, LiveHealth> groups;  // rank -1: none
  for (const auto& [pid, s] : latest_) {
    const auto [role, rank] = who(pid);
    LiveHealth& g = groups[{role, rank.value_or(-1)}];
    g.role = role;
    g.rank = rank;
    ++g.processes;
    add(g.rss_bytes, s.rss_bytes);
    add(g.private_dirty_bytes, s.private_dirty_bytes);
    keep(g.open_fds, s.fds, [](uint64_t a, uint64_t b) { return std::max(a, b); });
    keep(g.fd_limit, s.fd_limit, [](uint64_t a, uint64_t b) { return std::min(a, b); });
    if (s.shm_size_bytes && s.shm_free_bytes && (!live.shm || *s.shm_free_bytes < live.shm->free_bytes))
      live.shm = LiveShm{*s.shm_size_bytes, *s.shm_free_bytes};
  }
  for (auto& [key, g] : groups) live.health.push_back(std::move(g));
  for (const auto& [pid, kills] : oom_kills_) live.oom_kills[who(pid).first] += kills;
}

std::map<int, double> stalled_by_rank(const std::vector<ThreadInfo>& threads,
                                      const std::map<pid_t, ThreadClock>& clocks, uint64_t now_ns) {
  std::map<int, uint64_t> last_ran;  // the latest switch out of each rank's threads; 0: one runs
  for (const ThreadInfo& t : threads) {
    if (t.exit_ns || (t.role != contract::kRoleMain && t.role != contract::kRoleWorker && t.role != contract::kRolePin))
      continue;
    const int rank = t.rank.value_or(-1);
    auto clock = clocks.find(t.tid);
    const bool off = clock != clocks.end() && clock->second.oncpu_since == 0 && clock->second.offcpu_since > 0;
    auto [it, fresh] = last_ran.try_emplace(rank, off ? clock->second.offcpu_since : 0);
    if (!fresh && it->second != 0) it->second = off ? std::max(it->second, clock->second.offcpu_since) : 0;
  }
  std::map<int, double> stalled;
  for (const auto& [rank, since] : last_ran)
    stalled[rank] = since == 0 || since > now_ns ? 0.0 : static_cast<double>(now_ns - since) / 1e9;
  return stalled;
}

}  // namespace ingero::tracer
