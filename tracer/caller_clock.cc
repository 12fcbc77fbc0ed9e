// SPDX-License-Identifier: Apache-2.0
#include "tracer/caller_clock.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cstdint>

#include "bpf/events.h"
#include "common/clock.h"

namespace ingero::tracer {

std::optional<ProgramRunTime> read_program_run_time(int program_fd) {
  if (program_fd < 0) return std::nullopt;
  bpf_prog_info info{};
  uint32_t size = sizeof(info);
  if (bpf_obj_get_info_by_fd(program_fd, &info, &size) != 0) return std::nullopt;
  return ProgramRunTime{info.run_cnt, info.run_time_ns};
}

std::optional<uint64_t> OnCpuReader::oncpu_ns(uint32_t tid) const {
  if (stats_fd_ < 0 || clocks_fd_ < 0) return std::nullopt;
  // The time is taken first: a reader held off its CPU after the lookup would count a slice that
  // had ended as still running, and the next reading would then come out lower than this one.
  const auto now = static_cast<uint64_t>(monotonic_ns());
  ib_task_clock clock{};
  if (bpf_map_lookup_elem(clocks_fd_, &tid, &clock) == 0)
    return clock.oncpu_ns + (clock.oncpu_since && now > clock.oncpu_since ? now - clock.oncpu_since : 0);
  // No clock: the thread has exited (its last slice is in thread_stats), or was never seen running.
  ib_thread_stats stats{};
  if (bpf_map_lookup_elem(stats_fd_, &tid, &stats) != 0 || stats.oncpu_ns == 0) return std::nullopt;
  return stats.oncpu_ns;
}

std::map<uint32_t, uint64_t> OnCpuReader::read(const std::vector<uint32_t>& tids) const {
  std::map<uint32_t, uint64_t> times;
  for (uint32_t tid : tids)
    if (auto ns = oncpu_ns(tid)) times[tid] = *ns;
  return times;
}

std::vector<uint32_t> CallerMarks::tids() const {
  std::vector<uint32_t> tids;
  for (const auto& entry : at_) tids.push_back(entry.first);
  return tids;
}

void CallerMarks::mark(const std::vector<uint32_t>& tids, const std::map<uint32_t, uint64_t>& times) {
  for (uint32_t tid : tids) {
    auto it = times.find(tid);
    if (it == times.end()) {
      known_ = false;
      continue;
    }
    at_[tid] = it->second;
  }
}

uint64_t CallerMarks::advance(const std::map<uint32_t, uint64_t>& times) {
  uint64_t unused = 0;
  return advance_within(times, UINT64_MAX, unused);
}

uint64_t CallerMarks::advance_within(const std::map<uint32_t, uint64_t>& times, uint64_t span_ns,
                                     uint64_t& before_span) {
  uint64_t ran = 0;
  before_span = 0;
  for (auto& [tid, at] : at_) {
    auto it = times.find(tid);
    if (it == times.end()) {
      known_ = false;
      continue;
    }
    const uint64_t thread_ran = it->second > at ? it->second - at : 0;
    ran += std::min(thread_ran, span_ns);
    before_span += thread_ran - std::min(thread_ran, span_ns);
    at = it->second;
  }
  return ran;
}

}  // namespace ingero::tracer
