// SPDX-License-Identifier: Apache-2.0
#include "tracer/live_waits.h"

#include <algorithm>

#include "common/trace_contract.h"

namespace ingero::tracer {

void WakeWaits::add(const ib_event& event) {
  if (event.op != IB_OP_OFFCPU_BLOCKED || event.pid != event.tid || event.arg == 0) return;
  const std::pair<pid_t, pid_t> key{static_cast<pid_t>(event.pid), static_cast<pid_t>(IB_WAKER_TID(event.arg))};
  auto it = by_waker_.find(key);
  if (it == by_waker_.end()) {
    if (by_waker_.size() >= kMaxPairs) return;
    it = by_waker_.emplace(key, Waits{}).first;
  }
  Waits& w = it->second;
  w.ns += event.dur_ns;
  ++w.count;
  const double seconds = static_cast<double>(event.dur_ns) / 1e9;
  const auto bucket = std::lower_bound(kBatchWaitBounds.begin(), kBatchWaitBounds.end(), seconds);
  ++w.buckets[static_cast<size_t>(bucket - kBatchWaitBounds.begin())];
}

std::vector<LiveLoaderWaits> WakeWaits::estimate(const std::vector<ThreadInfo>& threads) const {
  std::map<pid_t, const ThreadInfo*> info;
  for (const ThreadInfo& t : threads) info[t.tid] = &t;
  auto role = [&](pid_t tid) {
    auto it = info.find(tid);
    return it == info.end() ? std::string() : it->second->role;
  };
  std::map<pid_t, LiveLoaderWaits> by_pid;
  for (const auto& [key, w] : by_waker_) {
    const auto [pid, waker] = key;
    const std::string producer = role(waker);
    if (role(pid) != contract::kRoleMain || (producer != contract::kRoleWorker && producer != contract::kRolePin))
      continue;
    LiveLoaderWaits& l = by_pid[pid];
    l.pid = pid;
    l.loader = -1;
    l.estimated = true;
    l.role = std::string(contract::kRoleMain);
    l.rank = info.at(pid)->rank;
    l.batches += w.count;
    l.wait_ns += w.ns;
    l.wait_buckets.resize(w.buckets.size(), 0);
    for (size_t i = 0; i < w.buckets.size(); ++i) l.wait_buckets[i] += w.buckets[i];
  }
  std::vector<LiveLoaderWaits> rows;
  for (auto& [pid, l] : by_pid) rows.push_back(std::move(l));
  return rows;
}

}  // namespace ingero::tracer
