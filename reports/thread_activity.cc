#include "reports/thread_activity.h"

#include <algorithm>
#include <array>

namespace ingero::reports {
namespace {

struct Edge {
  int64_t t;
  int layer;
  int delta;
};

constexpr int kLayers = 3;  // cpu_wait, pinned_alloc, blocked: ThreadState's first three values

void add_edges(const std::vector<Event>& intervals, int layer, std::vector<Edge>& edges) {
  for (const auto& e : intervals) {
    if (e.dur_ns <= 0) continue;
    edges.push_back({e.ts_ns, layer, +1});
    edges.push_back({e.end_ns(), layer, -1});
  }
}

ThreadState top_state(const std::array<int, kLayers>& depth) {
  for (int layer = 0; layer < kLayers; ++layer) {
    if (depth[layer] > 0) return static_cast<ThreadState>(layer);
  }
  return ThreadState::on_cpu;
}

}  // namespace

ThreadActivity::ThreadActivity(int64_t tid, int64_t alive_start_ns, int64_t alive_end_ns,
                               ThreadIntervals intervals)
    : tid_(tid), alive_start_(alive_start_ns), alive_end_(alive_end_ns) {
  build_segments(intervals);
  offcpu_ = std::move(intervals.preempted);
  offcpu_.insert(offcpu_.end(), intervals.blocked.begin(), intervals.blocked.end());
  std::sort(offcpu_.begin(), offcpu_.end(),
            [](const Event& a, const Event& b) { return a.ts_ns < b.ts_ns; });
  offcpu_max_end_.reserve(offcpu_.size());
  int64_t max_end = INT64_MIN;
  for (const auto& e : offcpu_) {
    max_end = std::max(max_end, e.end_ns());
    offcpu_max_end_.push_back(max_end);
  }
  fault_ts_ = std::move(intervals.fault_ts);
  std::sort(fault_ts_.begin(), fault_ts_.end());
}

// Sweep over interval edges; each maximal stretch with one top state becomes a segment.
void ThreadActivity::build_segments(const ThreadIntervals& intervals) {
  std::vector<Edge> edges;
  add_edges(intervals.preempted, 0, edges);
  add_edges(intervals.runq, 0, edges);
  add_edges(intervals.pinned_alloc, 1, edges);
  add_edges(intervals.blocked, 2, edges);
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::array<int, kLayers> depth{};
  ThreadState current = ThreadState::on_cpu;
  int64_t since = 0;
  for (size_t i = 0; i < edges.size();) {
    const int64_t t = edges[i].t;
    for (; i < edges.size() && edges[i].t == t; ++i) depth[edges[i].layer] += edges[i].delta;
    const ThreadState next = top_state(depth);
    if (next == current) continue;
    if (current != ThreadState::on_cpu && t > since) segments_.push_back({since, t, current});
    current = next;
    since = t;
  }
}

std::pair<size_t, size_t> ThreadActivity::segments_overlapping(int64_t from, int64_t to) const {
  auto first = std::partition_point(segments_.begin(), segments_.end(),
                                    [&](const StateSegment& s) { return s.end_ns <= from; });
  auto last = std::partition_point(first, segments_.end(),
                                   [&](const StateSegment& s) { return s.start_ns < to; });
  return {static_cast<size_t>(first - segments_.begin()), static_cast<size_t>(last - segments_.begin())};
}

ThreadState ThreadActivity::state_at(int64_t t, size_t& cursor) const {
  if (t < alive_start_ || t >= alive_end_) return ThreadState::absent;
  while (cursor < segments_.size() && segments_[cursor].end_ns <= t) ++cursor;
  if (cursor < segments_.size() && segments_[cursor].start_ns <= t) return segments_[cursor].state;
  return ThreadState::on_cpu;
}

int64_t ThreadActivity::faults_in(int64_t from, int64_t to) const {
  return std::lower_bound(fault_ts_.begin(), fault_ts_.end(), to) -
         std::lower_bound(fault_ts_.begin(), fault_ts_.end(), from);
}

int64_t ThreadActivity::switches_in(int64_t from, int64_t to) const {
  // Intervals starting before `to` whose (running max) end passes `from`.
  auto first = std::upper_bound(offcpu_max_end_.begin(), offcpu_max_end_.end(), from) -
               offcpu_max_end_.begin();
  int64_t count = 0;
  for (auto i = static_cast<size_t>(first); i < offcpu_.size() && offcpu_[i].ts_ns < to; ++i) {
    count += offcpu_[i].end_ns() > from ? 1 : 0;
  }
  return count;
}

int64_t ThreadActivity::offcpu_overlap_ns(int64_t from, int64_t to) const {
  auto first = std::upper_bound(offcpu_max_end_.begin(), offcpu_max_end_.end(), from) -
               offcpu_max_end_.begin();
  int64_t covered = 0;
  for (auto i = static_cast<size_t>(first); i < offcpu_.size() && offcpu_[i].ts_ns < to; ++i) {
    covered += std::max<int64_t>(0, std::min(to, offcpu_[i].end_ns()) - std::max(from, offcpu_[i].ts_ns));
  }
  return covered;
}

}  // namespace ingero::reports
