// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/thread_activity.h"

#include <algorithm>
#include <array>

namespace ingero::reports {
namespace {

constexpr int kLayers = 4;  // cpu_wait, pinned_alloc, io_wait, blocked: ThreadState's first four values

bool starts_before(const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; }

// The times at which one layer's depth changes by `delta`: the starts (or ends) of
// a list of intervals, ascending, empty intervals left out. A thread's intervals
// are recorded in time order, so the times are usually read in place; otherwise
// they are copied and sorted.
class EdgeStream {
 public:
  EdgeStream(const IntervalList& intervals, bool at_end, int layer, int delta)
      : intervals_(intervals), at_end_(at_end), layer_(layer), delta_(delta) {
    if (!ascending()) {
      for (const auto& e : intervals_) {
        if (!e.empty()) sorted_.push_back(time_of(e));
      }
      std::sort(sorted_.begin(), sorted_.end());
      in_place_ = false;
    }
    settle();
  }

  bool done() const { return done_; }
  int64_t time() const { return time_; }
  void pop() {
    ++next_;
    settle();
  }
  int layer() const { return layer_; }
  int delta() const { return delta_; }

 private:
  int64_t time_of(const TimeSpan& e) const { return at_end_ ? e.end_ns : e.start_ns; }

  bool ascending() const {
    int64_t previous = INT64_MIN;
    for (const auto& e : intervals_) {
      if (e.empty()) continue;
      if (time_of(e) < previous) return false;
      previous = time_of(e);
    }
    return true;
  }

  // Moves past empty intervals and caches the next time, read many times per edge.
  void settle() {
    if (in_place_) {
      while (next_ < intervals_.size() && intervals_[next_].empty()) ++next_;
      done_ = next_ >= intervals_.size();
      if (!done_) time_ = time_of(intervals_[next_]);
    } else {
      done_ = next_ >= sorted_.size();
      if (!done_) time_ = sorted_[next_];
    }
  }

  const IntervalList& intervals_;
  bool at_end_;
  int layer_;
  int delta_;
  bool in_place_ = true;
  size_t next_ = 0;
  bool done_ = false;
  int64_t time_ = 0;
  std::vector<int64_t> sorted_;
};

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
  build_segments(intervals);  // before the lists move on
  preempted_ = OffCpuList(std::move(intervals.preempted));
  blocked_ = OffCpuList(std::move(intervals.blocked));
  io_ = OffCpuList(std::move(intervals.io));
  faults_ = std::move(intervals.faults);
  index_block_io(intervals.block_io);
  auto by_start = [](const FaultBurst& a, const FaultBurst& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(faults_.begin(), faults_.end(), by_start)) std::sort(faults_.begin(), faults_.end(), by_start);
}

// Sweep over interval edges in time order; each maximal stretch with one top
// state becomes a segment. All edges at one instant are applied before the state
// is read, so the order among them does not matter.
void ThreadActivity::build_segments(const ThreadIntervals& intervals) {
  constexpr size_t kStreams = 10;  // a start and an end stream for each of the five lists
  std::vector<EdgeStream> streams;
  streams.reserve(kStreams);  // no reallocation: `active` below points into it
  auto add_layer = [&](const IntervalList& list, int layer) {
    streams.emplace_back(list, /*at_end=*/false, layer, +1);
    streams.emplace_back(list, /*at_end=*/true, layer, -1);
  };
  add_layer(intervals.preempted, 0);
  add_layer(intervals.runq, 0);
  add_layer(intervals.pinned_alloc, 1);
  add_layer(intervals.io, 2);
  add_layer(intervals.blocked, 3);
  // Each segment ends at a distinct edge, so this bounds their number; room that
  // stays unused is never touched and costs no memory.
  segments_.reserve(2 * (intervals.preempted.size() + intervals.runq.size() + intervals.pinned_alloc.size() +
                         intervals.blocked.size() + intervals.io.size()));
  std::array<int, kLayers> depth{};
  ThreadState current = ThreadState::on_cpu;
  int64_t since = 0;
  std::vector<EdgeStream*> active;  // streams with edges left
  for (auto& stream : streams) {
    if (!stream.done()) active.push_back(&stream);
  }
  auto finished = [](const EdgeStream* stream) { return stream->done(); };
  while (!active.empty()) {
    int64_t t = active[0]->time();
    for (size_t i = 1; i < active.size(); ++i) t = std::min(t, active[i]->time());
    bool any_finished = false;
    for (auto* stream : active) {
      for (; !stream->done() && stream->time() == t; stream->pop()) depth[stream->layer()] += stream->delta();
      any_finished |= stream->done();
    }
    if (any_finished) active.erase(std::remove_if(active.begin(), active.end(), finished), active.end());
    const ThreadState next = top_state(depth);
    if (next == current) continue;
    if (current != ThreadState::on_cpu && t > since) segments_.push_back({since, t, current});
    current = next;
    since = t;
  }
}

ThreadActivity::OffCpuList::OffCpuList(IntervalList intervals) : intervals_(std::move(intervals)) {
  if (!std::is_sorted(intervals_.begin(), intervals_.end(), starts_before)) {
    std::sort(intervals_.begin(), intervals_.end(), starts_before);
  }
  max_end_.reserve(intervals_.size());
  int64_t max_end = INT64_MIN;
  for (const auto& e : intervals_) {
    max_end = std::max(max_end, e.end_ns);
    max_end_.push_back(max_end);
  }
}

// Every interval before this one ends at or before t.
size_t ThreadActivity::OffCpuList::first_ending_after(int64_t t) const {
  return static_cast<size_t>(std::upper_bound(max_end_.begin(), max_end_.end(), t) - max_end_.begin());
}

int64_t ThreadActivity::OffCpuList::count_overlapping(int64_t from, int64_t to) const {
  int64_t count = 0;
  for (size_t i = first_ending_after(from); i < intervals_.size() && intervals_[i].start_ns < to; ++i) {
    count += intervals_[i].end_ns > from ? 1 : 0;
  }
  return count;
}

int64_t ThreadActivity::OffCpuList::overlap_ns(int64_t from, int64_t to) const {
  int64_t covered = 0;
  for (size_t i = first_ending_after(from); i < intervals_.size() && intervals_[i].start_ns < to; ++i) {
    const TimeSpan& e = intervals_[i];
    covered += std::max<int64_t>(0, std::min(to, e.end_ns) - std::max(from, e.start_ns));
  }
  return covered;
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

double ThreadActivity::faults_in(int64_t from, int64_t to) const {
  // Bursts of one thread do not overlap each other: those starting before `to` and ending
  // after `from` are a contiguous run once sorted by start.
  auto first = std::partition_point(faults_.begin(), faults_.end(),
                                    [&](const FaultBurst& b) { return b.end_ns < from; });
  double faults = 0;
  for (auto it = first; it != faults_.end() && it->start_ns < to; ++it) {
    const int64_t span = it->end_ns - it->start_ns;
    if (span <= 0) {
      faults += it->start_ns >= from ? static_cast<double>(it->count) : 0.0;
      continue;
    }
    const int64_t overlap = std::min(to, it->end_ns) - std::max(from, it->start_ns);
    faults += static_cast<double>(it->count) * static_cast<double>(std::max<int64_t>(0, overlap)) /
              static_cast<double>(span);
  }
  return faults;
}

int64_t ThreadActivity::switches_in(int64_t from, int64_t to) const {
  return preempted_.count_overlapping(from, to) + blocked_.count_overlapping(from, to) +
         io_.count_overlapping(from, to);
}

int64_t ThreadActivity::offcpu_overlap_ns(int64_t from, int64_t to) const {
  return preempted_.overlap_ns(from, to) + blocked_.overlap_ns(from, to) + io_.overlap_ns(from, to);
}

int64_t ThreadActivity::io_wait_overlap_ns(int64_t from, int64_t to) const { return io_.overlap_ns(from, to); }

// Requests overlap one another (several in flight), so they are indexed by completion.
void ThreadActivity::index_block_io(std::vector<FaultBurst>& requests) {
  std::sort(requests.begin(), requests.end(),
            [](const FaultBurst& a, const FaultBurst& b) { return a.end_ns < b.end_ns; });
  io_ends_.reserve(requests.size());
  io_bytes_before_.reserve(requests.size() + 1);
  int64_t total = 0;
  for (const FaultBurst& r : requests) {
    io_ends_.push_back(r.end_ns);
    io_bytes_before_.push_back(total);
    total += r.count;
  }
  io_bytes_before_.push_back(total);
}

int64_t ThreadActivity::block_io_bytes_in(int64_t from, int64_t to) const {
  const auto first = std::lower_bound(io_ends_.begin(), io_ends_.end(), from) - io_ends_.begin();
  const auto last = std::lower_bound(io_ends_.begin(), io_ends_.end(), to) - io_ends_.begin();
  return io_bytes_before_[static_cast<size_t>(last)] - io_bytes_before_[static_cast<size_t>(first)];
}

}  // namespace ingero::reports
