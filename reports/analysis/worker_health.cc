// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/worker_health.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/trace_contract.h"

namespace ingero::reports {
namespace {

constexpr int kSigBus = 7;
constexpr int kSigKill = 9;
constexpr const char* kOomKillOp = "oom_kill";
constexpr const char* kFatalSignalOp = "fatal_signal";
constexpr const char* kBlockedOp = "offcpu_blocked";

std::optional<int64_t> knob_int(const nlohmann::json& knobs, const char* name) {
  if (!knobs.is_object() || !knobs.contains(name) || !knobs[name].is_number_integer()) return std::nullopt;
  return knobs[name].get<int64_t>();
}

// The loader with the most batches (the training loop's), as the observer saw it.
LoaderKnobs loader_knobs(const RunContext& context) {
  LoaderKnobs k;
  if (context.loaders.empty()) {
    // Our own workloads: their configuration.
    const nlohmann::json& c = context.run.config;
    k.num_workers = knob_int(c, "num_workers");
    k.prefetch_factor = knob_int(c, "prefetch_factor");
    k.batch_size = knob_int(c, "batch_size");
    return k;
  }
  const nlohmann::json& knobs = context.loaders.front().knobs;
  k.num_workers = knob_int(knobs, "num_workers");
  k.prefetch_factor = knob_int(knobs, "prefetch_factor");
  if (k.num_workers.value_or(0) > 0 && !k.prefetch_factor) k.prefetch_factor = 2;  // PyTorch's default
  k.batch_size = knob_int(knobs, "batch_size");
  k.batches_per_epoch = knob_int(knobs, std::string(contract::kBatchesPerEpochKnob).c_str());
  if (knobs.is_object() && knobs.contains("sharing_strategy") && knobs["sharing_strategy"].is_string())
    k.sharing_strategy = knobs["sharing_strategy"].get<std::string>();
  return k;
}

struct Process {
  std::string role = std::string(contract::kRoleOther);
  std::string comm;
  std::optional<int64_t> exit_ns;
  std::optional<int64_t> start_ns;  // its fork, where the tracer saw it
};

std::map<int64_t, Process> processes(const RunContext& context) {
  std::map<int64_t, Process> out;
  for (const ThreadRecord& t : context.threads)
    if (t.tid == t.pid) out[t.pid] = {t.role, t.comm, t.exit_ns, t.start_ns};
  return out;
}

int64_t pid_of(const RunContext& context, int64_t tid) {
  for (const ThreadRecord& t : context.threads)
    if (t.tid == tid) return t.pid;
  return tid;
}

MemoryCurve curve_of(const std::vector<const ProcessSampleRecord*>& rows) {
  MemoryCurve c;
  if (rows.empty()) return c;
  c.first_ns = rows.front()->ts_ns;
  c.last_ns = rows.back()->ts_ns;
  c.samples = static_cast<int64_t>(rows.size());
  for (const ProcessSampleRecord* r : rows) {
    if (r->private_dirty_bytes) {
      ++c.rollups;
      if (!c.private_dirty_first) c.private_dirty_first = r->private_dirty_bytes;
      c.private_dirty_last = r->private_dirty_bytes;
    }
    if (r->rss_bytes) {
      if (!c.rss_first) c.rss_first = r->rss_bytes;
      c.rss_last = r->rss_bytes;
      c.rss_peak = std::max(c.rss_peak.value_or(0), *r->rss_bytes);
    }
    if (r->pss_bytes) c.pss_last = r->pss_bytes;
  }
  return c;
}

int64_t batches_between(const EventList& waits, int64_t from_ns, int64_t until_ns) {
  return std::count_if(waits.begin(), waits.end(),
                       [&](const Event& e) { return e.end_ns() > from_ns && e.end_ns() <= until_ns; });
}

HealthFinding base_finding(HealthKind kind, Severity severity, int64_t pid, const std::map<int64_t, Process>& procs) {
  HealthFinding f;
  f.kind = kind;
  f.severity = severity;
  f.pid = pid;
  if (auto p = procs.find(pid); p != procs.end()) {
    f.role = p->second.role;
    f.comm = p->second.comm;
  } else {
    f.role = std::string(contract::kRoleOther);
  }
  return f;
}

// A measure of a process's memory over time, from its first point to its last.
struct GrowthCurve {
  GrowthMeasure measure = GrowthMeasure::private_dirty;
  std::vector<std::pair<int64_t, int64_t>> points;  // (ts_ns, bytes), in time order
  bool from_fork = false;                             // the first point is the worker's fork, at 0
};

// Its value at ts: the latest point's at or before it.
int64_t value_at(const GrowthCurve& g, int64_t ts) {
  int64_t value = g.points.front().second;
  for (const auto& [t, v] : g.points)
    if (t <= ts) value = v;
  return value;
}

// From the sampler's rows: a worker's private dirty memory (only the rows that read smaps_rollup
// have it), another process's RSS.
std::optional<GrowthCurve> sampled_curve(const std::vector<const ProcessSampleRecord*>& rows, const MemoryCurve& c,
                                         bool worker, std::optional<int64_t> fork_ns) {
  GrowthCurve g;
  g.measure = worker ? GrowthMeasure::private_dirty : GrowthMeasure::rss;
  for (const ProcessSampleRecord* r : rows)
    if (auto v = worker ? r->private_dirty_bytes : r->rss_bytes) g.points.push_back({r->ts_ns, *v});
  // One rollup can be all a busy large worker gets in a short run (tracer/process_sampler.h). A
  // forked worker has no private memory at its fork (every page it has is shared with the main
  // process) when its first RSS sample already held what its rollup later found private: that is
  // the curve's start then. A spawned worker starts small, and needs two rollups.
  const int64_t fork = fork_ns.value_or(INT64_MAX);  // none: later than any sample
  if (worker && g.points.size() == 1 && c.rss_first && *c.rss_first >= g.points.front().second &&
      fork < g.points.front().first) {
    g.points.insert(g.points.begin(), {fork, 0});
    g.from_fork = true;
  }
  if (g.points.size() < 2 || g.points.back().first <= g.points.front().first) return std::nullopt;
  return g;
}

// From the tracer's page_faults bursts: what a worker copied on write, from its fork (or its first
// sample, when it was forked before tracing) to its last sample. Empty for traces without them.
std::optional<GrowthCurve> copy_on_write_curve(int64_t pid, const std::vector<CopyOnWriteBytes>& buckets,
                                               const MemoryCurve& sampled, std::optional<int64_t> fork_ns) {
  auto first = std::lower_bound(buckets.begin(), buckets.end(), pid,
                                [](const CopyOnWriteBytes& b, int64_t p) { return b.pid < p; });
  if (first == buckets.end() || first->pid != pid) return std::nullopt;
  GrowthCurve g;
  g.measure = GrowthMeasure::copy_on_write_faults;
  g.from_fork = fork_ns.has_value();
  const int64_t start_ns = g.from_fork ? *fork_ns : sampled.first_ns;
  g.points.emplace_back(std::min(start_ns, first->until_ns), int64_t{0});
  int64_t total = 0;
  for (auto b = first; b != buckets.end() && b->pid == pid; ++b) g.points.push_back({b->until_ns, total += b->bytes});
  if (sampled.last_ns > g.points.back().first) g.points.push_back({sampled.last_ns, total});
  if (g.points.back().first <= g.points.front().first) return std::nullopt;
  return g;
}

// Memory that grew by growth_min_bytes and was still growing in the later half of its curve's time: a
// worker's private memory (what it copied of pages it shared at fork), another process's RSS (its
// private memory also moves as workers fork and exit: pages shared with them are not private).
// c: the process's sampled curve, shown as the finding's evidence.
std::optional<HealthFinding> memory_growth(int64_t pid, const GrowthCurve& g, MemoryCurve c, const HealthInputs& in,
                                           const std::map<int64_t, Process>& procs, const LoaderKnobs& knobs,
                                           const HealthThresholds& limits) {
  const int64_t from_ns = g.points.front().first, until_ns = g.points.back().first;
  const int64_t first = g.points.front().second, last = g.points.back().second;
  const int64_t growth = last - first;
  if (growth < limits.growth_min_bytes) return std::nullopt;
  const int64_t later = last - value_at(g, from_ns + (until_ns - from_ns) / 2);
  if (g.points.size() >= 3 &&
      static_cast<double>(later) < limits.still_growing_share * static_cast<double>(growth))
    return std::nullopt;
  if (g.from_fork && g.measure == GrowthMeasure::private_dirty) {
    c.private_dirty_first = 0;
    c.first_ns = from_ns;
  }
  HealthFinding f = base_finding(HealthKind::memory_growth, Severity::medium, pid, procs);
  f.ts_ns = std::max(c.last_ns, until_ns);
  f.growth_measure = g.measure;
  f.growth_from_fork = g.from_fork;
  f.memory = c;
  f.knobs = knobs;
  f.growth_bytes = growth;
  f.growth_bytes_per_s = static_cast<double>(growth) * 1e9 / static_cast<double>(until_ns - from_ns);
  // Copy-on-write turns pages the worker already mapped (shared with the main process) private: its
  // RSS stays where it was. Memory it allocates itself grows its RSS as much.
  if (f.role == contract::kRoleWorker && c.rss_first && c.rss_last)
    f.copy_on_write = static_cast<double>(*c.rss_last - *c.rss_first) < limits.cow_rss_share * static_cast<double>(growth);
  const EventList& waits = in.events.of(contract::op::kBatchWait);
  const int64_t batches = batches_between(waits, from_ns, until_ns);
  if (batches > 0) {
    f.growth_bytes_per_batch = static_cast<double>(growth) / static_cast<double>(batches);
    if (knobs.batches_per_epoch) {
      f.growth_bytes_per_epoch = *f.growth_bytes_per_batch * static_cast<double>(*knobs.batches_per_epoch);
      // Batches of the epoch still to come: the epoch's batches less those delivered so far; none when
      // the last one delivered ended an epoch (its end is where the process is now).
      const int64_t delivered = batches_between(waits, 0, f.ts_ns);
      const int64_t in_epoch = delivered % std::max<int64_t>(1, *knobs.batches_per_epoch);
      const int64_t done = in_epoch == 0 && delivered > 0 ? *knobs.batches_per_epoch : in_epoch;
      // What it holds now: a worker's copies are its private memory, at least.
      const int64_t now = std::max(last, c.private_dirty_last.value_or(0));
      f.projected_epoch_end_bytes = now + static_cast<int64_t>(*f.growth_bytes_per_batch *
                                                               (*knobs.batches_per_epoch - done));
    }
  }
  const nlohmann::json& machine = in.context.run.machine;
  if (machine.is_object() && machine.contains("memory_bytes") && machine["memory_bytes"].is_number_integer())
    f.machine_memory_bytes = machine["memory_bytes"].get<int64_t>();
  if (f.projected_epoch_end_bytes && f.machine_memory_bytes && knobs.num_workers &&
      *f.projected_epoch_end_bytes * std::max<int64_t>(1, *knobs.num_workers) > *f.machine_memory_bytes)
    f.severity = Severity::high;
  return f;
}

// A process's memory growth: a worker's copy-on-write where the tracer counted it, else its sampled
// private dirty memory (which also holds what it allocated); another process's RSS.
std::optional<HealthFinding> memory_growth(int64_t pid, const std::vector<const ProcessSampleRecord*>& rows,
                                           const HealthInputs& in, const std::map<int64_t, Process>& procs,
                                           const LoaderKnobs& knobs, const HealthThresholds& limits) {
  auto proc = procs.find(pid);
  const bool worker = proc != procs.end() && proc->second.role == contract::kRoleWorker;
  const std::optional<int64_t> fork_ns = worker ? proc->second.start_ns : std::nullopt;
  const MemoryCurve c = curve_of(rows);
  if (worker)
    if (auto g = copy_on_write_curve(pid, in.copy_on_write, c, fork_ns))
      if (auto f = memory_growth(pid, *g, c, in, procs, knobs, limits); f && f->copy_on_write) return f;
  auto g = sampled_curve(rows, c, worker, fork_ns);
  if (!g) return std::nullopt;
  return memory_growth(pid, *g, c, in, procs, knobs, limits);
}

}  // namespace

const char* growth_measure_code(GrowthMeasure measure) {
  switch (measure) {
    case GrowthMeasure::copy_on_write_faults: return "copy_on_write_faults";
    case GrowthMeasure::private_dirty: return "private_dirty";
    case GrowthMeasure::rss: return "rss";
  }
  return "private_dirty";
}

const char* health_kind_code(HealthKind kind) {
  switch (kind) {
    case HealthKind::memory_growth: return "memory_growth";
    case HealthKind::oom_kill: return "oom_kill";
    case HealthKind::shm_exhausted: return "shm_exhausted";
    case HealthKind::fd_limit: return "fd_limit";
    case HealthKind::hang: return "hang";
  }
  return "unknown";
}

std::optional<int64_t> LoaderKnobs::in_flight_batches() const {
  if (!num_workers || *num_workers <= 0) return std::nullopt;
  return *num_workers * prefetch_factor.value_or(2);
}

const std::vector<std::string>& health_ops() {
  static const std::vector<std::string> ops{kOomKillOp, kFatalSignalOp, std::string(contract::op::kBatchWait)};
  return ops;
}

HealthAnalysis analyze_worker_health(const HealthInputs& in) {
  HealthAnalysis a;
  if (auto v = in.context.setting(contract::kHangAfterNsSetting)) a.thresholds.hang_after_ns = std::stoll(*v);
  if (auto v = in.context.setting(contract::kHealthIntervalNsSetting)) a.interval_ns = std::stoll(*v);
  a.sampled = !in.samples.empty();
  const HealthThresholds& limits = a.thresholds;
  const auto procs = processes(in.context);
  const LoaderKnobs knobs = loader_knobs(in.context);
  std::map<int64_t, std::vector<const ProcessSampleRecord*>> by_pid;
  for (const ProcessSampleRecord& r : in.samples) by_pid[r.pid].push_back(&r);
  // The loader's start: its first worker's first sample (the first sample without workers). Before
  // it, the main process imports and builds its dataset, which is neither growth nor a hang.
  int64_t loader_start = INT64_MAX, first_sample = INT64_MAX;
  for (const ProcessSampleRecord& r : in.samples) {
    first_sample = std::min(first_sample, r.ts_ns);
    auto p = procs.find(r.pid);
    if (p != procs.end() && p->second.role == contract::kRoleWorker) loader_start = std::min(loader_start, r.ts_ns);
  }
  if (loader_start == INT64_MAX) loader_start = first_sample;

  // The kernel's word on how processes died.
  std::set<int64_t> oom_victims;
  for (const Event& e : in.events.of(kOomKillOp)) {
    const int64_t pid = pid_of(in.context, e.tid);
    if (!oom_victims.insert(pid).second) continue;
    HealthFinding f = base_finding(HealthKind::oom_kill, Severity::high, pid, procs);
    f.ts_ns = e.ts_ns;
    f.knobs = knobs;
    if (auto rows = by_pid.find(pid); rows != by_pid.end()) f.memory = curve_of(rows->second);
    if (e.arg) f.invoker_pid = static_cast<int64_t>(static_cast<uint64_t>(e.arg) >> 32);
    f.fatal_signal = kSigKill;
    f.oom_seen_as_sigkill = in.context.setting(contract::kOomKillsFromSetting) == contract::oom_source::kKernelSigkill;
    f.machine_memory_bytes = in.context.run.machine.value("memory_bytes", int64_t{0});
    a.findings.push_back(std::move(f));
  }
  std::set<int64_t> sigbus_pids;
  for (const Event& e : in.events.of(kFatalSignalOp))
    if (e.arg == kSigBus) sigbus_pids.insert(pid_of(in.context, e.tid));

  // /dev/shm: the fullest it was against its size, per mount the job saw (by size; the loader's
  // processes' where they were sampled: a wrapper's first samples may precede the job's own mount),
  // the batches in flight against the most of it free, and SIGBUS.
  bool loader_samples = false;
  for (const ProcessSampleRecord& r : in.samples)
    if (auto p = procs.find(r.pid); r.shm_size_bytes && p != procs.end() &&
                                     (p->second.role == contract::kRoleMain || p->second.role == contract::kRoleWorker))
      loader_samples = true;
  auto counts = [&](const ProcessSampleRecord& r) {
    if (!r.shm_size_bytes || !r.shm_free_bytes) return false;
    if (!loader_samples) return true;
    auto p = procs.find(r.pid);
    return p != procs.end() && (p->second.role == contract::kRoleMain || p->second.role == contract::kRoleWorker);
  };
  std::optional<int64_t> shm_size, shm_used_peak, shm_free_most;
  int64_t shm_peak_pid = 0, shm_peak_ns = 0;
  for (const ProcessSampleRecord& r : in.samples) {
    if (!counts(r)) continue;
    const int64_t used = *r.shm_size_bytes - *r.shm_free_bytes;
    if (!shm_used_peak || used > *shm_used_peak) {
      shm_used_peak = used;
      shm_size = r.shm_size_bytes;
      shm_peak_pid = r.pid;
      shm_peak_ns = r.ts_ns;
    }
  }
  for (const ProcessSampleRecord& r : in.samples)
    if (counts(r) && r.shm_size_bytes == shm_size) shm_free_most = std::max(shm_free_most.value_or(0), *r.shm_free_bytes);
  const bool shm_nearly_full =
      shm_size && *shm_size > 0 &&
      static_cast<double>(*shm_used_peak) >= limits.shm_used_share * static_cast<double>(*shm_size);
  std::optional<int64_t> in_flight;
  if (in.batch_bytes && knobs.in_flight_batches()) in_flight = *in.batch_bytes * *knobs.in_flight_batches();
  const bool in_flight_too_big = in_flight && shm_free_most && static_cast<double>(*in_flight) >=
                                                                   limits.shm_in_flight_share * static_cast<double>(*shm_free_most);
  if (!sigbus_pids.empty() || shm_nearly_full || in_flight_too_big) {
    const int64_t pid = sigbus_pids.empty() ? shm_peak_pid : *sigbus_pids.begin();
    const bool overflows = in_flight_too_big && *in_flight > *shm_free_most;
    HealthFinding f = base_finding(HealthKind::shm_exhausted,
                                   sigbus_pids.empty() && !overflows ? Severity::medium : Severity::high, pid, procs);
    f.ts_ns = shm_peak_ns;
    for (const Event& e : in.events.of(kFatalSignalOp))
      if (e.arg == kSigBus && pid_of(in.context, e.tid) == pid) f.ts_ns = e.ts_ns;
    f.sigbus = !sigbus_pids.empty();
    if (f.sigbus) f.fatal_signal = kSigBus;
    f.knobs = knobs;
    f.shm_size_bytes = shm_size;
    f.shm_used_peak_bytes = shm_used_peak;
    f.shm_free_bytes = shm_free_most;
    f.batch_bytes = in.batch_bytes;
    f.in_flight_bytes = in_flight;
    a.findings.push_back(std::move(f));
  }

  for (const auto& [pid, rows] : by_pid) {
    // Descriptors near the soft limit.
    std::optional<int64_t> fds_peak, fd_limit;
    int64_t fd_ns = 0;
    for (const ProcessSampleRecord* r : rows) {
      if (!r->fds || !r->fd_limit) continue;
      if (!fds_peak || *r->fds > *fds_peak) {
        fds_peak = r->fds;
        fd_limit = r->fd_limit;
        fd_ns = r->ts_ns;
      }
    }
    if (fds_peak && *fd_limit > 0 &&
        static_cast<double>(*fds_peak) >= limits.fd_share * static_cast<double>(*fd_limit)) {
      HealthFinding f = base_finding(HealthKind::fd_limit, Severity::medium, pid, procs);
      f.ts_ns = fd_ns;
      f.knobs = knobs;
      f.fds_peak = fds_peak;
      f.fd_limit = fd_limit;
      if (*fds_peak >= *fd_limit - 3) f.severity = Severity::high;  // at the limit: opens fail
      a.findings.push_back(std::move(f));
    }
  }

  // Memory growth: the fastest-growing worker speaks for the others that grew alike.
  std::optional<HealthFinding> worst_worker;
  int workers_growing = 0;
  for (const auto& [pid, all_rows] : by_pid) {
    std::vector<const ProcessSampleRecord*> rows;
    for (const ProcessSampleRecord* r : all_rows)
      if (r->ts_ns >= loader_start) rows.push_back(r);
    auto f = memory_growth(pid, rows, in, procs, knobs, limits);
    if (!f) continue;
    if (oom_victims.count(pid)) {
      // Its kill says it first; the growth stays its evidence.
      for (HealthFinding& kill : a.findings)
        if (kill.kind == HealthKind::oom_kill && kill.pid == pid) {
          kill.growth_bytes = f->growth_bytes;
          kill.growth_bytes_per_s = f->growth_bytes_per_s;
          kill.copy_on_write = f->copy_on_write;
        }
      continue;
    }
    if (f->copy_on_write) {
      ++workers_growing;
      if (!worst_worker || f->growth_bytes_per_s > worst_worker->growth_bytes_per_s) worst_worker = std::move(f);
    } else {
      a.findings.push_back(std::move(*f));
    }
  }
  if (worst_worker) {
    worst_worker->workers_growing = workers_growing;
    a.findings.push_back(std::move(*worst_worker));
  }

  // A hang: the longest span with no batch delivered while the samples found every main and worker
  // process asleep, from the loader's first sample to the last.
  if (!by_pid.empty()) {
    std::vector<int64_t> edges;  // batch deliveries
    for (const Event& e : in.events.of(contract::op::kBatchWait)) edges.push_back(e.end_ns());
    std::sort(edges.begin(), edges.end());
    const int64_t first = loader_start;
    int64_t last = 0;
    for (const ProcessSampleRecord& r : in.samples) last = std::max(last, r.ts_ns);
    // Candidate quiet spans: between deliveries, and after the last one.
    std::vector<std::pair<int64_t, int64_t>> spans;
    int64_t from = first;
    for (int64_t t : edges) {
      if (t > from) spans.push_back({from, t});
      from = std::max(from, t);
    }
    if (last > from) spans.push_back({from, last});
    for (const auto& [start, end] : spans) {
      if (end - start < limits.hang_after_ns) continue;
      // Every main or worker process sampled in the span, asleep in nearly all of its samples there (a
      // waiting loop wakes now and then to check on its workers).
      std::vector<HealthFinding::Waiter> waiters;
      bool all_asleep = true;
      for (const auto& [pid, rows] : by_pid) {
        auto proc = procs.find(pid);
        const std::string role = proc == procs.end() ? std::string(contract::kRoleOther) : proc->second.role;
        if (role != contract::kRoleMain && role != contract::kRoleWorker) continue;
        std::map<std::string, int> channels;
        int in_span = 0, awake = 0;
        for (const ProcessSampleRecord* r : rows) {
          if (r->ts_ns < start || r->ts_ns > end) continue;
          ++in_span;
          if (r->wchan)
            ++channels[*r->wchan];
          else
            ++awake;
        }
        if (in_span == 0) continue;
        if (channels.empty() || awake > limits.hang_awake_share * in_span) {
          all_asleep = false;
          break;
        }
        auto most = std::max_element(channels.begin(), channels.end(),
                                     [](const auto& x, const auto& y) { return x.second < y.second; });
        waiters.push_back({pid, role, most->first, std::nullopt, std::nullopt});
      }
      if (!all_asleep || waiters.empty()) continue;
      HealthFinding f = base_finding(HealthKind::hang, Severity::high, waiters.front().pid, procs);
      f.ts_ns = start;
      f.hang_ns = end - start;
      f.knobs = knobs;
      f.waiters = std::move(waiters);
      a.findings.push_back(std::move(f));
      break;
    }
  }

  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](const HealthFinding& x, const HealthFinding& y) { return x.severity > y.severity; });
  return a;
}

void add_hang_stacks(HealthAnalysis& analysis, const std::vector<EventStackRecord>& hang_stacks) {
  for (HealthFinding& f : analysis.findings) {
    if (f.kind != HealthKind::hang) continue;
    for (HealthFinding::Waiter& w : f.waiters)
      for (const EventStackRecord& s : hang_stacks)  // by time: the last one seen speaks
        if (s.tid == w.pid && !s.frames.empty()) w.python_frame = s.frames.front();
  }
}

void add_hang_wakers(HealthAnalysis& analysis, const EventSet& blocked) {
  for (HealthFinding& f : analysis.findings) {
    if (f.kind != HealthKind::hang) continue;
    for (HealthFinding::Waiter& w : f.waiters)
      for (const Event& e : blocked.of(kBlockedOp))
        if (e.tid == w.pid && e.end_ns() >= f.ts_ns + f.hang_ns && e.arg)
          w.woken_by = static_cast<int64_t>(static_cast<uint64_t>(e.arg) & 0xffffffffu);
  }
}

}  // namespace ingero::reports
