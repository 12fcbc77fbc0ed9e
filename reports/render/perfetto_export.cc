// SPDX-License-Identifier: Apache-2.0
#include "reports/render/perfetto_export.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "reports/render/report_json.h"
#include "reports/analysis/profile_analysis.h"
#include "reports/analysis/profile_causes.h"
#include "reports/text/profile_text.h"
#include "reports/analysis/tracing_cost.h"
#include "reports/text/format.h"
#include "reports/documents/input_errors.h"

namespace ingero::reports {
namespace {

using nlohmann::json;
using EmitEvent = std::function<void(json&&)>;

double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// ---- names and order of processes and threads

struct Track {
  int64_t pid = 0;
  int64_t tid = 0;
  std::string role;
  std::string comm;
  std::string name() const { return fmt::format("{} {} {}", role, tid, comm); }
};

// Every thread of the run, and any thread that only appears in the events (as 'other', name unknown).
std::vector<Track> tracks_of(const RunContext& context, const std::vector<EventRow>& events) {
  std::map<int64_t, Track> by_tid;
  for (const auto& t : context.threads) by_tid[t.tid] = Track{t.pid, t.tid, t.role, t.comm};
  for (const auto& e : events) {
    if (!by_tid.count(e.tid)) by_tid[e.tid] = Track{e.pid, e.tid, std::string(contract::kRoleOther), "?"};
  }
  std::vector<Track> tracks;
  for (auto& [tid, track] : by_tid) tracks.push_back(std::move(track));
  return tracks;
}

// A process is named after its leader (the thread whose tid is the pid), else its first thread.
std::map<int64_t, const Track*> process_leaders(const std::vector<Track>& tracks) {
  std::map<int64_t, const Track*> leaders;
  for (const auto& t : tracks) {
    auto [it, fresh] = leaders.emplace(t.pid, &t);
    if (!fresh && t.tid == t.pid) it->second = &t;
  }
  return leaders;
}

json metadata_event(std::string_view name, int64_t pid, int64_t tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

void emit_track_metadata(const std::vector<Track>& tracks, const EmitEvent& emit) {
  const auto leaders = process_leaders(tracks);
  std::vector<const Track*> processes;
  for (const auto& [pid, leader] : leaders) processes.push_back(leader);
  std::stable_sort(processes.begin(), processes.end(), [](const Track* a, const Track* b) {
    return std::make_tuple(contract::role_rank(a->role), a->pid) <
           std::make_tuple(contract::role_rank(b->role), b->pid);
  });
  for (size_t i = 0; i < processes.size(); ++i) {
    const Track& p = *processes[i];
    const std::string name = fmt::format("{} {} {}", p.role, p.pid, p.comm);
    emit(metadata_event("process_name", p.pid, p.pid, {{"name", name}}));
    emit(metadata_event("process_sort_index", p.pid, p.pid, {{"sort_index", static_cast<int64_t>(i)}}));
  }
  std::vector<const Track*> threads;
  for (const auto& t : tracks) threads.push_back(&t);
  std::stable_sort(threads.begin(), threads.end(), [](const Track* a, const Track* b) {
    return std::make_tuple(a->pid, contract::role_rank(a->role), a->tid) <
           std::make_tuple(b->pid, contract::role_rank(b->role), b->tid);
  });
  int64_t index_in_process = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    const Track& t = *threads[i];
    index_in_process = (i > 0 && threads[i - 1]->pid == t.pid) ? index_in_process + 1 : 0;
    emit(metadata_event("thread_name", t.pid, t.tid, {{"name", t.name()}}));
    emit(metadata_event("thread_sort_index", t.pid, t.tid, {{"sort_index", index_in_process}}));
  }
}

// ---- events

// What the op-specific columns mean, so that the args read as what they are.
std::string_view arg_name(std::string_view op) {
  if (op == contract::op::kBatchWait || op == contract::op::kBatchCompute) return "batch";
  if (op == contract::op::kWorkerStart) return "worker_id";
  if (op == contract::op::kFork) return "child_pid";
  if (op == contract::op::kPageFaults || op == contract::op::kPageAllocs) return "count";
  return "arg";
}

std::string_view ret_name(std::string_view op) {
  if (op == contract::op::kExit || op == contract::op::kThreadExit) return "exit_code";
  if (op == contract::op::kBlockIo) return "status";
  return "ret";
}

json args_of(const EventRow& e) {
  json args = json::object();
  if (e.ret) args[std::string(ret_name(e.op))] = *e.ret;
  if (e.bytes) args["bytes"] = *e.bytes;
  if (e.arg) args[std::string(arg_name(e.op))] = *e.arg;
  if (e.stream) args["stream"] = *e.stream;
  return args;
}

// A slice with the stack that made it (a slow call's, a batch wait's): args.site names the user's line.
json slice_event(const EventRow& e, int64_t origin_ns, const ProfileRecord& profile) {
  json event = {{"ph", "X"},         {"name", e.op},
                {"cat", e.category}, {"ts", micros(e.ts_ns - origin_ns)},
                {"dur", micros(std::max<int64_t>(e.dur_ns, 0))},
                {"pid", e.pid},      {"tid", e.tid}};
  json args = args_of(e);
  if (auto stack = profile.event_stacks.find({e.tid, e.ts_ns, e.op}); stack != profile.event_stacks.end())
    if (const ProfileFrame* f = user_frame(profile, profile.frames_of(stack->second)))
      args["site"] = site_text(CallSite{f->kind, f->name, f->file, f->line, 0, 0});
  if (!args.empty()) event["args"] = std::move(args);
  return event;
}

json instant_event(const EventRow& e, int64_t origin_ns) {
  json event = {{"ph", "i"}, {"s", "t"}, {"name", e.op}, {"cat", e.category}, {"ts", micros(e.ts_ns - origin_ns)},
                {"pid", e.pid}, {"tid", e.tid}};
  if (json args = args_of(e); !args.empty()) event["args"] = std::move(args);
  return event;
}

// ---- counters: page faults and allocations, summed per process from the tracer's bursts

struct CounterSeries {
  std::string_view name;  // "page faults (cumulative)"
  std::string_view key;   // the value's name in args: "faults"
};

struct CounterSample {
  int64_t start_ns = 0;  // the burst's start
  int64_t end_ns = 0;    // its end: by then its count had happened
  int64_t value = 0;
};

class Counters {
 public:
  void add(const EventRow& e) {
    const CounterSample sample{e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0), e.arg.value_or(0)};
    if (e.op == contract::op::kPageFaults) {
      samples_[{e.pid, kFaults}].push_back(sample);
    } else if (e.op == contract::op::kPageAllocs) {
      samples_[{e.pid, kAllocs}].push_back(sample);
      if (e.bytes) samples_[{e.pid, kAllocBytes}].push_back({sample.start_ns, sample.end_ns, *e.bytes});
    }
  }

  // Per process and series: zero at the first burst's start, then the running total at each burst's
  // end, in time order, so that the series never decreases.
  void emit(int64_t origin_ns, const EmitEvent& emit) {
    for (auto& [key, samples] : samples_) {
      const auto& [pid, series] = key;
      const CounterSeries& s = kSeries[series];
      std::stable_sort(samples.begin(), samples.end(),
                       [](const CounterSample& a, const CounterSample& b) { return a.end_ns < b.end_ns; });
      int64_t first = samples.front().start_ns;
      for (const auto& sample : samples) first = std::min(first, sample.start_ns);
      emit(counter_event(s, pid, first - origin_ns, 0));
      int64_t total = 0;
      for (const auto& sample : samples) {
        total += sample.value;
        emit(counter_event(s, pid, sample.end_ns - origin_ns, total));
      }
    }
  }

 private:
  enum Series { kFaults, kAllocs, kAllocBytes };
  static constexpr CounterSeries kSeries[] = {{"page faults (cumulative)", "faults"},
                                              {"page allocations (cumulative)", "pages"},
                                              {"page allocation bytes (cumulative)", "bytes"}};

  static json counter_event(const CounterSeries& s, int64_t pid, int64_t ts_ns, int64_t value) {
    return {{"ph", "C"}, {"name", s.name}, {"cat", contract::category::kMemory}, {"ts", micros(ts_ns)},
            {"pid", pid}, {"tid", pid}, {"args", {{std::string(s.key), value}}}};
  }

  std::map<std::pair<int64_t, Series>, std::vector<CounterSample>> samples_;
};

// ---- GPU counters: NVML's samples, one counter track per GPU and metric, under one "process"

constexpr int64_t kGpuTrackPid = 0;

void emit_gpu_counters(const RunContext& context, int64_t origin_ns, const EmitEvent& emit_metadata,
                       const EmitEvent& emit_counter) {
  if (context.gpu_samples.empty()) return;
  emit_metadata({{"ph", "M"}, {"name", "process_name"}, {"pid", kGpuTrackPid}, {"tid", kGpuTrackPid},
                 {"args", {{"name", "GPUs (NVML samples, %)"}}}});
  for (const GpuSample& s : context.gpu_samples)
    emit_counter({{"ph", "C"}, {"name", fmt::format("GPU {} {}", s.gpu, s.metric)}, {"cat", "gpu"},
                  {"ts", micros(s.ts_ns - origin_ns)}, {"pid", kGpuTrackPid}, {"tid", kGpuTrackPid},
                  {"args", {{"percent", s.value}}}});
}

// ---- duty-cycled functions: when their probes were in, one async track per process and function
// ("cuLaunchKernel probed"); between its slices that function's calls were not seen

// A function duty-cycled system-wide (pid 0 in the DB) has no process of its own: its windows go on a
// pseudo-process above any pid Linux hands out (pid_max is at most 2^22), not on the GPUs' pid 0.
constexpr int64_t kEveryProcessTrackPid = (int64_t{1} << 22) + 1;

int64_t emit_sampled_windows(const std::vector<SampledWindowRecord>& windows, int64_t origin_ns,
                             const EmitEvent& emit_metadata, const EmitEvent& emit) {
  int64_t id = 0;
  bool every_process_named = false;
  for (const SampledWindowRecord& w : windows) {
    const int64_t pid = w.pid == 0 ? kEveryProcessTrackPid : w.pid;
    if (w.pid == 0 && !every_process_named) {
      for (const char* kind : {"process_name", "thread_name"})
        emit_metadata({{"ph", "M"}, {"name", kind}, {"pid", pid}, {"tid", pid},
                       {"args", {{"name", "every process (functions duty-cycled system-wide)"}}}});
      every_process_named = true;
    }
    const std::string name = fmt::format("{} probed{}", w.op, w.pid == 0 ? " (every process)" : "");
    json begin = {{"ph", "b"}, {"name", name}, {"cat", "sampling"}, {"id", ++id}, {"pid", pid}, {"tid", pid},
                  {"ts", micros(w.start_ns - origin_ns)}, {"args", {{"calls", w.calls}}}};
    emit(std::move(begin));
    emit({{"ph", "e"}, {"name", name}, {"cat", "sampling"}, {"id", id}, {"pid", pid}, {"tid", pid},
          {"ts", micros(w.end_ns - origin_ns)}});
  }
  return id;
}

// ---- the whole trace

struct PhaseCounts {
  int64_t metadata = 0, slices = 0, instants = 0, counters = 0, windows = 0;
  int64_t profile_instants = 0, profile_samples = 0;  // of the instants: the CPU profile's
};

// ---- the CPU profile: one instant per thread, stack and time bucket, at the bucket's start, named
// after its sampled function, with the samples it holds and its stack (root first) in args.
void emit_profile(const RunContext& context, const ProfileRecord& profile, int64_t origin, PhaseCounts& counts,
                  const EmitEvent& emit) {
  std::map<int64_t, int64_t> pid_of;
  for (const ThreadRecord& t : context.threads) pid_of[t.tid] = t.pid;
  std::map<int64_t, std::pair<std::string, std::string>> stacks;  // stack id -> (leaf, folded stack)
  for (const ProfileSampleRow& row : profile.samples) {
    auto stack = stacks.find(row.stack_id);
    if (stack == stacks.end()) {
      std::string leaf = "[unknown]", folded;
      const std::vector<int64_t> ids = profile.frames_of(row.stack_id);
      for (auto id = ids.rbegin(); id != ids.rend(); ++id) {
        auto frame = profile.frames.find(*id);
        if (frame == profile.frames.end()) continue;
        leaf = frame_label(frame->second);
        folded += (folded.empty() ? "" : ";") + leaf;
      }
      stack = stacks.emplace(row.stack_id, std::make_pair(leaf, folded)).first;
    }
    auto pid = pid_of.find(row.tid);
    emit({{"ph", "i"}, {"s", "t"}, {"name", stack->second.first}, {"cat", "cpu_profile"},
          {"ts", micros(row.bucket_ns - origin)}, {"pid", pid == pid_of.end() ? row.tid : pid->second},
          {"tid", row.tid}, {"args", {{"samples", row.samples}, {"stack", stack->second.second}}}});
    ++counts.instants;
    ++counts.profile_instants;
    counts.profile_samples += row.samples;
  }
}

json trace_metadata(const TraceFile& trace, const RunRecord& run, const Timeline& timeline, int64_t events_in_run,
                    const PerfettoOptions& options, const PhaseCounts& counts, const TracingCost& cost) {
  json meta = {{"tool", "ingero-bench export"}, {"format", "perfetto"},
               {"source_db", trace.path()},
               {"run_id", run.run_id},
               {"label", run.label},
               {"kind", run.kind},
               {"status", run.status},
               {"node", run.node},
               {"run_start_ns", run.start_ns},
               {"run_start_unix", run.started_unix},
               {"time_base", "ts and dur in microseconds from the run's start (run_start_ns, CLOCK_MONOTONIC)"},
               {"counters", "page faults and allocations per process, cumulative: the running total of the "
                            "tracer's bursts, stepped at each burst's end; GPU utilisation per GPU and metric "
                            "(NVML's samples, percent, each at the end of the period it covers) under pid 0"},
               {"sampled_windows", "async slices (b/e, category 'sampling'), one track per duty-cycled function and "
                                   "process: when its probes were in, with the calls they counted; its calls "
                                   "between them were not seen, and its count is an estimate (tracing_cost.sampled)"},
               {"cpu_profile", "instants (category 'cpu_profile') on their threads, one per stack and time bucket "
                               "(run setting profile_bucket_ns) at the bucket's start: named after the sampled "
                               "function, with the samples it holds and the stack, root first, in args"},
               {"profile_instants", counts.profile_instants},
               {"profile_samples", counts.profile_samples},
               {"events_in_run", events_in_run},
               {"events_exported", static_cast<int64_t>(timeline.events.size())},
               {"max_events", static_cast<int64_t>(options.max_events)},
               {"truncated", timeline.truncated},
               {"trace_events", {{"M", counts.metadata}, {"X", counts.slices}, {"i", counts.instants},
                                 {"C", counts.counters}, {"b", counts.windows}, {"e", counts.windows}}},
               {"tracing_cost", to_json(cost)}};
  if (timeline.truncated) {
    const int64_t last = timeline.events.empty() ? run.start_ns : timeline.events.back().ts_ns;
    meta["truncation_note"] =
        fmt::format("truncated: only the first {} of the run's {} events (up to {} after the start) are here; "
                    "raise max_events to export more",
                    format_count(static_cast<int64_t>(timeline.events.size())), format_count(events_in_run),
                    format_duration_ns(static_cast<double>(last - run.start_ns)));
  }
  return meta;
}

// Reads the run and hands every trace event to `emit` in a fixed order: metadata, then slices and
// instants by start time (longer first at equal starts, so that enclosing slices come first), then
// each process's counters, then the duty-cycled functions' windows. Returns the document's "metadata".
Result<json> emit_trace(const TraceFile& trace, int64_t run_id, const PerfettoOptions& options,
                        const EmitEvent& emit_event) {
  auto run = trace.run(run_id);
  if (!run) return with_flag("--run", run.error());
  auto context = trace.context(*run);
  if (!context) return context.error();
  TimelineQuery query;
  query.limit = static_cast<int64_t>(options.max_events);
  auto timeline = trace.timeline(run_id, query);
  if (!timeline) return timeline.error();
  auto op_counts = trace.count_events(run_id, std::nullopt, std::nullopt);
  if (!op_counts) return op_counts.error();
  int64_t events_in_run = 0;
  for (const auto& c : *op_counts) events_in_run += c.count;

  std::vector<EventRow>& events = timeline->events;
  std::stable_sort(events.begin(), events.end(), [](const EventRow& a, const EventRow& b) {
    return std::make_tuple(a.ts_ns, -a.dur_ns, a.pid, a.tid, a.op) <
           std::make_tuple(b.ts_ns, -b.dur_ns, b.pid, b.tid, b.op);
  });

  PhaseCounts counts;
  auto emit = [&](json&& event, int64_t& counter) {
    ++counter;
    emit_event(std::move(event));
  };
  emit_track_metadata(tracks_of(*context, events), [&](json&& e) { emit(std::move(e), counts.metadata); });
  const int64_t origin = run->start_ns;
  auto profile = trace.profile(run_id, std::nullopt, std::nullopt);
  if (!profile) return profile.error();
  Counters counters;
  for (const auto& e : events) {
    if (e.category == contract::category::kMemory) {
      counters.add(e);
    } else if (e.category == contract::category::kProcess) {
      emit(instant_event(e, origin), counts.instants);
    } else {
      emit(slice_event(e, origin, *profile), counts.slices);
    }
  }
  counters.emit(origin, [&](json&& e) { emit(std::move(e), counts.counters); });
  emit_profile(*context, *profile, origin, counts, emit_event);
  emit_gpu_counters(
      *context, origin, [&](json&& e) { emit(std::move(e), counts.metadata); },
      [&](json&& e) { emit(std::move(e), counts.counters); });
  auto windows = trace.sampled_windows(run_id);
  if (!windows) return windows.error();
  counts.windows = emit_sampled_windows(
      *windows, origin, [&](json&& e) { emit(std::move(e), counts.metadata); }, emit_event);
  return trace_metadata(trace, *run, *timeline, events_in_run, options, counts, tracing_cost(*context));
}

}  // namespace

Result<json> perfetto_trace(const TraceFile& trace, int64_t run_id, const PerfettoOptions& options) {
  json events = json::array();
  auto metadata = emit_trace(trace, run_id, options, [&](json&& e) { events.push_back(std::move(e)); });
  if (!metadata) return metadata.error();
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"metadata", std::move(*metadata)}};
}

Status export_perfetto(const std::string& db_path, int64_t run_id, const std::string& out_path,
                       const PerfettoOptions& options) {
  if (Status writable = check_writable_path("--out", out_path); !writable) return writable;
  auto trace = TraceFile::open(db_path);
  if (!trace) return with_flag("--db", trace.error());
  // Each event is dumped as it comes, so only the text is held. The keys are written in the order
  // nlohmann::json sorts them (displayTimeUnit, metadata, traceEvents): the bytes equal
  // perfetto_trace(...).dump().
  std::string events;
  auto metadata = emit_trace(**trace, run_id, options, [&](json&& e) {
    if (!events.empty()) events += ',';
    events += e.dump();
  });
  if (!metadata) return metadata.error();
  std::string text = R"({"displayTimeUnit":"ms","metadata":)" + metadata->dump() + R"(,"traceEvents":[)";
  text.reserve(text.size() + events.size() + 2);
  text += events;
  text += "]}";
  return write_file_atomically(out_path, text);
}

}  // namespace ingero::reports
