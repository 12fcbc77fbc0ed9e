// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/causal_chains.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>


#include "common/knobs.h"
#include "common/trace_contract.h"
#include "reports/analysis/chain_changes.h"
#include "reports/analysis/thread_activity.h"

namespace ingero::reports {
namespace {

const std::set<std::string> kPinnedAllocOps = {"cudaHostAlloc", "cudaMallocHost", "cuMemHostAlloc",
                                               "cudaHostRegister"};

struct Victim {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t tid = 0;
  size_t op = 0;              // index into the analysis' victim op list
  int64_t since_last_batch = 0;  // end of the previous wait (waits only)
};

struct VictimOp {
  std::string name;
  bool is_wait = false;
  VictimSelection selection = VictimSelection::calls_in_tail;
  LatencyStats stats;
  int64_t threshold_ns = 0;
  InputBound verdict = InputBound::unknown;
};

// The threads of the run, by tid, with when each was alive.
class ThreadDirectory {
 public:
  ThreadDirectory(const RunContext& context, const TimeWindow& window) : window_(window) {
    for (const auto& t : context.threads) by_tid_[t.tid] = &t;
  }
  std::string role(int64_t tid) const {
    auto it = by_tid_.find(tid);
    return it == by_tid_.end() ? "other" : it->second->role;
  }
  // torch.distributed rank: a DDP rank's main loop is fed by its own workers only.
  std::optional<int64_t> rank(int64_t tid) const {
    auto it = by_tid_.find(tid);
    return it == by_tid_.end() ? std::nullopt : it->second->rank;
  }
  std::pair<int64_t, int64_t> alive(int64_t tid, int64_t run_start) const {
    auto it = by_tid_.find(tid);
    if (it == by_tid_.end()) return {INT64_MIN, INT64_MAX};
    return {it->second->start_ns.value_or(run_start), it->second->exit_ns.value_or(INT64_MAX)};
  }
  std::vector<int64_t> producers() const {
    std::vector<int64_t> tids;
    for (const auto& [tid, t] : by_tid_) {
      if (contract::is_producer_role(t->role)) tids.push_back(tid);
    }
    std::sort(tids.begin(), tids.end());
    return tids;
  }

 private:
  const TimeWindow& window_;
  std::unordered_map<int64_t, const ThreadRecord*> by_tid_;
};

void select_call_victims(const ChainInputs& in, const ChainThresholds& limits,
                         std::vector<VictimOp>& ops, std::vector<Victim>& victims) {
  for (const auto& row : in.calls) {
    const int64_t threshold = slow_threshold(row.stats, limits);
    const size_t op_index = ops.size();
    bool any = false;
    for (const auto& e : in.victims.of(row.function)) {
      if (!in.window.contains_start(e) || e.dur_ns < threshold) continue;
      victims.push_back({e.ts_ns, e.end_ns(), e.tid, op_index, 0});
      any = true;
    }
    if (any) ops.push_back({row.function, false, VictimSelection::calls_in_tail, row.stats, threshold, InputBound::unknown});
  }
}

void select_wait_victims(const ChainInputs& in, const ChainThresholds& limits,
                         std::vector<VictimOp>& ops, std::vector<Victim>& victims) {
  EventList waits = in.victims.of(contract::op::kBatchWait);
  std::sort(waits.begin(), waits.end(), [](const Event& a, const Event& b) {
    return std::tie(a.tid, a.ts_ns) < std::tie(b.tid, b.ts_ns);
  });
  const bool every = in.waits == WaitSelection::every_wait ||
                     in.metrics.verdict == InputBound::highly ||
                     in.metrics.verdict == InputBound::moderately;
  const int64_t threshold = every ? 1 : slow_threshold(in.metrics.batch_wait, limits);
  const size_t op_index = ops.size();
  bool any = false;
  for (size_t i = 0; i < waits.size(); ++i) {
    const Event& e = waits[i];
    if (!in.window.contains_start(e) || e.dur_ns < threshold) continue;
    const bool same_thread_before = i > 0 && waits[i - 1].tid == e.tid;
    const int64_t since = same_thread_before ? waits[i - 1].end_ns() : in.context.run.start_ns;
    victims.push_back({e.ts_ns, e.end_ns(), e.tid, op_index, since});
    any = true;
  }
  if (!any) return;
  const VictimSelection selection = in.waits == WaitSelection::every_wait ? VictimSelection::every_wait
                                    : every ? VictimSelection::every_wait_input_bound
                                            : VictimSelection::waits_in_tail;
  ops.push_back({std::string(contract::op::kBatchWait), true, selection, in.metrics.batch_wait, threshold,
                 in.metrics.verdict});
}

// Which recorded intervals of a thread an op contributes to its activity.
enum class IntervalKind { none, preempted, blocked, io, runq, pinned_alloc, page_faults, block_io, startup };

IntervalKind interval_kind(const std::string& op_name) {
  namespace op = contract::op;
  if (op_name == op::kOffcpuPreempted) return IntervalKind::preempted;
  if (op_name == op::kOffcpuBlocked) return IntervalKind::blocked;
  if (op_name == op::kOffcpuIo) return IntervalKind::io;
  if (op_name == op::kBlockIo) return IntervalKind::block_io;
  if (op_name == op::kRunqWait) return IntervalKind::runq;
  if (kPinnedAllocOps.count(op_name)) return IntervalKind::pinned_alloc;
  if (op_name == op::kPageFaults) return IntervalKind::page_faults;
  if (op_name == op::kWorkerStart) return IntervalKind::startup;
  return IntervalKind::none;
}


// Each thread's recorded intervals, from the events of the activity ops. Start-up
// intervals (fork -> ready) are kept apart: they mark when a producer was starting.
struct ThreadEvents {
  ThreadIntervals intervals;
  std::optional<TimeSpan> startup;
};

std::unordered_map<int64_t, ThreadEvents> collect_intervals(const EventSet& events,
                                                             const std::unordered_set<int64_t>& tids) {
  std::unordered_map<int64_t, ThreadEvents> by_tid;
  for (int64_t tid : tids) by_tid[tid];
  for (const auto& [op, list] : events.by_op) {
    const IntervalKind kind = interval_kind(op);
    if (kind == IntervalKind::none) continue;
    for (const Event& e : list) {
      auto it = by_tid.find(e.tid);
      if (it == by_tid.end()) continue;
      ThreadEvents& t = it->second;
      const TimeSpan span{e.ts_ns, e.end_ns()};
      switch (kind) {
        case IntervalKind::preempted: t.intervals.preempted.push_back(span); break;
        case IntervalKind::blocked: t.intervals.blocked.push_back(span); break;
        case IntervalKind::io: t.intervals.io.push_back(span); break;
        case IntervalKind::block_io: t.intervals.block_io.push_back({e.ts_ns, e.end_ns(), e.arg}); break;
        case IntervalKind::runq: t.intervals.runq.push_back(span); break;
        case IntervalKind::pinned_alloc: t.intervals.pinned_alloc.push_back(span); break;
        case IntervalKind::page_faults: t.intervals.faults.push_back({e.ts_ns, e.end_ns(), e.arg}); break;
        case IntervalKind::startup: t.startup = span; break;
        case IntervalKind::none: break;
      }
    }
  }
  return by_tid;
}

struct Producer {
  const ThreadActivity* activity = nullptr;
  std::string role;
  size_t cursor = 0;
  std::optional<TimeSpan> startup;  // measured fork -> ready, when the loader reported it
  bool starting_at(int64_t t) const { return startup && t >= startup->start_ns && t < startup->end_ns; }
};

// Time per cause for one slow interval, plus the tids each cause was seen on.
struct Attribution {
  std::vector<std::pair<Cause, double>> ns;
  void add(const Cause& cause, double amount) {
    for (auto& [c, total] : ns) {
      if (!(c < cause) && !(cause < c)) {
        total += amount;
        return;
      }
    }
    ns.emplace_back(cause, amount);
  }
};

std::vector<int64_t> piece_boundaries(const Victim& v, const ThreadActivity& self,
                                      const std::vector<Producer>& producers) {
  std::vector<int64_t> points = {v.start_ns, v.end_ns};
  auto add_segments = [&](const ThreadActivity& a) {
    auto [first, last] = a.segments_overlapping(v.start_ns, v.end_ns);
    for (size_t i = first; i < last; ++i) {
      points.push_back(a.segments()[i].start_ns);
      points.push_back(a.segments()[i].end_ns);
    }
  };
  add_segments(self);
  for (const auto& p : producers) {
    add_segments(*p.activity);
    points.push_back(p.activity->alive_start_ns());
    points.push_back(p.activity->alive_end_ns());
    if (p.startup) {
      points.push_back(p.startup->start_ns);
      points.push_back(p.startup->end_ns);
    }
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  points.erase(std::remove_if(points.begin(), points.end(),
                              [&](int64_t t) { return t < v.start_ns || t > v.end_ns; }),
               points.end());
  return points;
}

void share_among_producers(int64_t at, double length, std::vector<Producer>& producers,
                           Attribution& out) {
  Cause active[64];
  int count = 0;
  for (auto& p : producers) {
    const ThreadState state = p.activity->state_at(at, p.cursor);
    CauseKind kind;
    if (state == ThreadState::on_cpu) {
      kind = p.starting_at(at) ? CauseKind::startup : CauseKind::on_cpu;
    } else if (state == ThreadState::cpu_wait) {
      kind = CauseKind::cpu_wait;
    } else if (state == ThreadState::pinned_alloc) {
      kind = CauseKind::pinned_alloc;
    } else if (state == ThreadState::io_wait) {
      kind = CauseKind::io_wait;  // reading the dataset: producing, at the storage's pace
    } else {
      continue;  // blocked or not alive: not producing
    }
    if (count < 64) active[count++] = Cause{kind, p.role, true};
  }
  if (count == 0) {
    out.add(Cause{CauseKind::unattributed, "", true}, length);
    return;
  }
  for (int i = 0; i < count; ++i) out.add(active[i], length / count);
}

Attribution attribute(const Victim& v, bool is_wait, const ThreadActivity& self,
                      const std::string& self_role, std::vector<Producer>& producers) {
  Attribution out;
  const auto points = piece_boundaries(v, self, producers);
  size_t self_cursor = self.segments_overlapping(v.start_ns, v.end_ns).first;
  for (auto& p : producers) p.cursor = p.activity->segments_overlapping(v.start_ns, v.end_ns).first;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const int64_t at = points[i];
    const double length = static_cast<double>(points[i + 1] - at);
    ThreadState state = self.state_at(at, self_cursor);
    if (state == ThreadState::absent || (state == ThreadState::pinned_alloc && !is_wait)) {
      state = ThreadState::on_cpu;  // a CUDA call's own allocation is its own work
    }
    if ((state == ThreadState::blocked || state == ThreadState::io_wait) && is_wait && !producers.empty()) {
      share_among_producers(at, length, producers, out);
      continue;
    }
    const CauseKind kind = state == ThreadState::cpu_wait       ? CauseKind::cpu_wait
                           : state == ThreadState::blocked      ? CauseKind::blocked
                           : state == ThreadState::io_wait      ? CauseKind::io_wait
                           : state == ThreadState::pinned_alloc ? CauseKind::pinned_alloc
                                                                : CauseKind::on_cpu;
    out.add(Cause{kind, self_role, false}, length);
  }
  return out;
}

struct ChainAccumulator {
  double lost_ns = 0;
  int64_t calls_explained = 0;
  ChainEvidence evidence;
  double faults = 0;  // pro-rated from bursts; rounded once at the end
  std::set<int64_t> tids;
};

struct ThreadEvidence {
  int64_t switches = 0;
  int64_t offcpu_ns = 0;
  double faults = 0;
  int64_t io_wait_ns = 0;
  int64_t read_bytes = 0;
};

ThreadEvidence evidence_of(const ThreadActivity& a, const Victim& v) {
  return {a.switches_in(v.start_ns, v.end_ns), a.offcpu_overlap_ns(v.start_ns, v.end_ns),
          a.faults_in(v.start_ns, v.end_ns), a.io_wait_overlap_ns(v.start_ns, v.end_ns),
          a.block_io_bytes_in(v.start_ns, v.end_ns)};
}

void add_evidence(ChainAccumulator& chain, int64_t tid, const ThreadEvidence& e) {
  chain.tids.insert(tid);
  chain.evidence.context_switches += e.switches;
  chain.evidence.offcpu_overlap_ns += e.offcpu_ns;
  chain.faults += e.faults;
  chain.evidence.io_wait_ns += e.io_wait_ns;
  chain.evidence.read_bytes += e.read_bytes;
}

int64_t forks_between(const EventList& forks, int64_t from, int64_t to) {
  return std::lower_bound(forks.begin(), forks.end(), to,
                          [](const Event& e, int64_t t) { return e.ts_ns < t; }) -
         std::lower_bound(forks.begin(), forks.end(), from,
                          [](const Event& e, int64_t t) { return e.ts_ns < t; });
}


class ChainBuilder {
 public:
  ChainBuilder(const ChainInputs& in, const ChainThresholds& limits) : in_(in), limits_(limits),
      directory_(in.context, in.window) {}

  ChainAnalysis run() {
    if (in_.include_calls) select_call_victims(in_, limits_, ops_, victims_);
    select_wait_victims(in_, limits_, ops_, victims_);
    ChainAnalysis analysis;
    analysis.thresholds = limits_;
    if (victims_.empty()) return analysis;
    build_activities();
    forks_ = in_.victims.of("fork");
    std::sort(forks_.begin(), forks_.end(), [](const Event& a, const Event& b) { return a.ts_ns < b.ts_ns; });
    op_totals_.assign(ops_.size(), {});
    for (const auto& v : victims_) attribute_one(v);
    analysis.producers = producer_counts();
    analysis.victims = summaries();
    analysis.chains = chains(analysis.producers);
    return analysis;
  }

 private:
  void build_activities() {
    std::unordered_set<int64_t> tids;
    for (const auto& v : victims_) tids.insert(v.tid);
    const bool any_wait = std::any_of(ops_.begin(), ops_.end(), [](const VictimOp& op) { return op.is_wait; });
    if (any_wait) {
      for (int64_t tid : directory_.producers()) tids.insert(tid);
    }
    for (auto& [tid, recorded] : collect_intervals(in_.activity, tids)) {
      auto [start, end] = directory_.alive(tid, in_.context.run.start_ns);
      activities_.emplace(tid, ThreadActivity(tid, start, end, std::move(recorded.intervals)));
      if (recorded.startup) startups_[tid] = *recorded.startup;
    }
    if (any_wait) {
      for (int64_t tid : directory_.producers()) producer_tids_.push_back(tid);
    }
  }

  void attribute_one(const Victim& v) {
    const VictimOp& op = ops_[v.op];
    const ThreadActivity& self = activities_.at(v.tid);
    const std::string self_role = directory_.role(v.tid);
    std::vector<Producer> producers;
    if (op.is_wait) {
      const std::optional<int64_t> victim_rank = directory_.rank(v.tid);
      for (int64_t tid : producer_tids_) {
        if (tid == v.tid || directory_.rank(tid) != victim_rank) continue;
        const ThreadActivity& a = activities_.at(tid);
        if (a.alive_end_ns() <= v.start_ns || a.alive_start_ns() >= v.end_ns) continue;
        auto startup = startups_.find(tid);
        producers.push_back({&a, directory_.role(tid), 0,
                             startup == startups_.end() ? std::nullopt : std::optional<TimeSpan>(startup->second)});
      }
    }
    const Attribution attribution = attribute(v, op.is_wait, self, self_role, producers);
    const double length = static_cast<double>(v.end_ns - v.start_ns);
    auto& totals = op_totals_[v.op];
    ++totals.count;
    totals.total_ns += v.end_ns - v.start_ns;
    const ThreadEvidence self_evidence = evidence_of(self, v);
    const int64_t forks = op.is_wait ? forks_between(forks_, v.since_last_batch, v.end_ns) : 0;
    std::vector<ThreadEvidence> producer_evidence;
    producer_evidence.reserve(producers.size());
    for (const auto& p : producers) producer_evidence.push_back(evidence_of(*p.activity, v));
    for (const auto& [cause, ns] : attribution.ns) {
      totals.by_cause[cause] += ns;
      if (cause.kind == CauseKind::unattributed) continue;
      auto& chain = chains_[{v.op, cause}];
      chain.lost_ns += ns;
      chain.calls_explained += ns >= limits_.explains_share * length ? 1 : 0;
      if (!cause.producer) {
        add_evidence(chain, v.tid, self_evidence);
        continue;
      }
      for (size_t i = 0; i < producers.size(); ++i) {
        if (producers[i].role == cause.role) add_evidence(chain, producers[i].activity->tid(), producer_evidence[i]);
      }
      if (cause.kind == CauseKind::startup) chain.evidence.forks += forks;
    }
  }

  std::vector<VictimSummary> summaries() const {
    std::vector<VictimSummary> out;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const auto& totals = op_totals_[i];
      const VictimOp& op = ops_[i];
      VictimSummary summary{op.name, op.selection, op.stats, op.threshold_ns, op.verdict, totals.count, totals.total_ns, {}};
      for (const auto& [cause, ns] : totals.by_cause) {
        const double share = totals.total_ns > 0 ? ns / static_cast<double>(totals.total_ns) : 0;
        summary.causes.push_back({cause, static_cast<int64_t>(ns), share});
      }
      std::sort(summary.causes.begin(), summary.causes.end(),
                [](const CauseShare& a, const CauseShare& b) { return a.ns > b.ns; });
      out.push_back(std::move(summary));
    }
    return out;
  }

  std::vector<CausalChain> chains(const std::map<std::string, int>& producers) const {
    std::vector<CausalChain> out;
    const double window = static_cast<double>(std::max<int64_t>(1, in_.window.length_ns()));
    for (const auto& [key, acc] : chains_) {
      const auto& [op_index, cause] = key;
      const auto& op = ops_[op_index];
      const auto& totals = op_totals_[op_index];
      const double share = totals.total_ns > 0 ? acc.lost_ns / static_cast<double>(totals.total_ns) : 0;
      if (share < limits_.min_chain_share) continue;
      CausalChain chain;
      chain.victim = op.name;
      chain.victim_role = victim_role(op_index);
      chain.cause = cause;
      chain.calls_explained = acc.calls_explained;
      chain.victim_calls = totals.count;
      chain.lost_ns = static_cast<int64_t>(acc.lost_ns);
      chain.victim_ns = totals.total_ns;
      chain.share_of_victim = share;
      chain.share_of_window = acc.lost_ns / window;
      chain.severity = severity_of(chain.share_of_window, limits_);
      chain.evidence = acc.evidence;
      chain.evidence.threads = static_cast<int>(acc.tids.size());
      chain.evidence.page_faults = static_cast<int64_t>(acc.faults + 0.5);
      chain.changes = suggested_changes(chain, ChainContext{in_.context, in_.metrics, in_.calls, producers});
      out.push_back(std::move(chain));
    }
    std::sort(out.begin(), out.end(),
              [](const CausalChain& a, const CausalChain& b) { return a.lost_ns > b.lost_ns; });
    for (size_t i = 0; i < out.size(); ++i) out[i].rank = static_cast<int>(i) + 1;
    return out;
  }

  std::string victim_role(size_t op_index) const {
    for (const auto& v : victims_) {
      if (v.op == op_index) return directory_.role(v.tid);
    }
    return "other";
  }

  std::map<std::string, int> producer_counts() const {
    std::map<std::string, int> counts;
    for (int64_t tid : producer_tids_) ++counts[directory_.role(tid)];
    return counts;
  }

  struct OpTotals {
    int64_t count = 0;
    int64_t total_ns = 0;
    std::map<Cause, double> by_cause;
  };

  const ChainInputs& in_;
  const ChainThresholds& limits_;
  ThreadDirectory directory_;
  std::vector<VictimOp> ops_;
  std::vector<Victim> victims_;
  std::unordered_map<int64_t, ThreadActivity> activities_;
  std::unordered_map<int64_t, TimeSpan> startups_;  // measured fork -> ready of producers
  std::vector<int64_t> producer_tids_;
  EventList forks_;
  std::vector<OpTotals> op_totals_;
  std::map<std::pair<size_t, Cause>, ChainAccumulator> chains_;
};

}  // namespace

std::string Cause::code() const {
  static const char* const names[] = {"cpu_wait", "blocked",  "on_cpu",      "pinned_alloc",
                                      "startup",  "io_wait", "unattributed"};
  static_assert(std::size(names) == static_cast<size_t>(CauseKind::unattributed) + 1, "a name per CauseKind");
  const char* kind_name = names[static_cast<int>(kind)];
  return role.empty() ? kind_name : role + "." + kind_name;
}

bool Cause::operator<(const Cause& other) const {
  return std::tie(kind, role, producer) < std::tie(other.kind, other.role, other.producer);
}

int64_t slow_threshold(const LatencyStats& stats, const ChainThresholds& limits) {
  return std::max({stats.p99_ns, static_cast<int64_t>(limits.slow_vs_p50 * static_cast<double>(stats.p50_ns)),
                   limits.slow_min_ns});
}

const std::vector<std::string>& activity_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (std::string_view op : {contract::op::kOffcpuPreempted, contract::op::kOffcpuBlocked, contract::op::kOffcpuIo,
                                contract::op::kRunqWait, contract::op::kPageFaults, contract::op::kBlockIo,
                                contract::op::kWorkerStart})
      names.emplace_back(op);
    names.insert(names.end(), kPinnedAllocOps.begin(), kPinnedAllocOps.end());
    return names;
  }();
  return ops;
}

Severity severity_of(double share_of_window, const ChainThresholds& limits) {
  if (share_of_window >= limits.high_share_of_window) return Severity::high;
  if (share_of_window >= limits.medium_share_of_window) return Severity::medium;
  return Severity::low;
}

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::high: return "HIGH";
    case Severity::medium: return "MEDIUM";
    case Severity::low: break;
  }
  return "LOW";
}

std::optional<Severity> parse_severity(const std::string& name) {
  for (Severity s : {Severity::low, Severity::medium, Severity::high})
    if (name == severity_name(s)) return s;
  return std::nullopt;
}

std::map<std::string, int> run_producers(const RunContext& context) {
  std::map<std::string, int> producers;
  for (const ThreadRecord& t : context.threads)
    if (t.role == contract::kRoleWorker || t.role == contract::kRolePin) ++producers[t.role];
  return producers;
}

std::optional<CausalChain> host_bound_chain(const RunContext& context, const RunMetrics& metrics,
                                            const TimeWindow& window, const std::vector<CallLatencyRow>& calls) {
  const bool cpu_compute = metrics.verdict == InputBound::cpu_compute_bound;
  if ((metrics.verdict != InputBound::host_bound && !cpu_compute) || !metrics.main_host_share) return std::nullopt;
  CausalChain chain;
  chain.victim = kMainBusyVictim;
  chain.victim_role = std::string(contract::kRoleMain);
  chain.cause = Cause{CauseKind::on_cpu, std::string(contract::kRoleMain), false};
  for (const ThreadRecord& t : context.threads)
    if (t.role == contract::kRoleMain) ++chain.victim_calls;
  chain.calls_explained = chain.victim_calls;
  chain.victim_ns = window.length_ns() * std::max<int64_t>(1, chain.victim_calls);
  chain.lost_ns = static_cast<int64_t>(*metrics.main_host_share * static_cast<double>(chain.victim_ns));
  chain.share_of_victim = *metrics.main_host_share;
  chain.share_of_window = *metrics.main_host_share;
  const ChainThresholds limits;
  chain.severity = severity_of(chain.share_of_window, limits);
  chain.rank = 1;
  // Training on the CPU: the model's compute is the pace, and no loader knob removes it.
  if (!cpu_compute) chain.changes = host_chain_changes(chain, ChainContext{context, metrics, calls, run_producers(context)});
  return chain;
}

std::optional<CausalChain> epoch_startup_chain(const RunMetrics& metrics) {
  if (!metrics.startup || !metrics.startup->matters()) return std::nullopt;
  const EpochStartup& s = *metrics.startup;
  const bool workers = s.waited_for == StartupWait::worker_startup;
  CausalChain chain;
  chain.victim = kEpochStartVictim;
  chain.victim_role = std::string(contract::kRoleMain);
  chain.cause = Cause{CauseKind::startup, std::string(workers ? contract::kRoleWorker : contract::kRoleMain), workers};
  chain.victim_calls = chain.calls_explained = s.epochs;
  chain.victim_ns = chain.lost_ns = s.wait_ns;
  chain.share_of_victim = 1.0;
  chain.share_of_window = *s.share_of_epoch;
  chain.evidence.forks = s.workers_started;
  chain.severity = severity_of(chain.share_of_window, ChainThresholds{});
  if (workers && !s.persistent_workers)
    chain.changes.push_back({std::string(knob::kPersistentWorkers), "on"});
  else
    chain.changes.push_back({std::string(kSamplerKnob), kCheaperSampler});
  return chain;
}

ChainAnalysis analyze_causal_chains(const ChainInputs& inputs) {
  const ChainThresholds limits;
  return ChainBuilder(inputs, limits).run();
}

}  // namespace ingero::reports
