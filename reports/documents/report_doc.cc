// SPDX-License-Identifier: Apache-2.0
#include "reports/documents/report_doc.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/documents/trace_reports.h"
#include "reports/text/format.h"
#include "reports/documents/input_errors.h"
#include "reports/analysis/run_analysis.h"
#include "reports/text/run_text.h"

namespace ingero::reports {

const std::vector<TimelineKind> kTimelineKinds = {
    {"CUDA call", "time inside a CUDA runtime or NCCL call"},
    {"batch wait", "the main loop waiting for the next batch"},
    {"batch compute", "the main loop moving a batch to the device and running the model"},
    {"worker start-up", "a loader worker from fork until ready for its first task"},
    {"blocked", "off CPU, sleeping or blocked (intervals above the run's off-CPU threshold)"},
    {"I/O wait", "off CPU waiting for I/O: a read waiting for the disk, a page-cache miss (intervals above the "
                 "run's I/O-wait threshold)"},
    {"waiting for a CPU", "runnable but not running: preempted, or woken and queued"},
    {"on CPU", "running: the thread's lifetime outside its stored off-CPU intervals (shorter ones than the run's "
               "off-CPU threshold count as on CPU)"},
    {"GPU busy", "NVML: each sample period drawn busy for the share of it a kernel ran"},
    {"block I/O", "a block-device request of a traced thread, issue to completion (requests in flight overlap)"},
};

namespace {

// ---- which runs

struct ChosenRuns {
  std::string scope;
  std::optional<SweepRecord> sweep;
  std::vector<RunRecord> runs;
  bool given = false;  // named with --run
};

std::string id_list(const std::vector<RunRecord>& runs) {
  std::string ids;
  for (const auto& r : runs) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", r.run_id);
  return ids;
}

Result<ChosenRuns> given_runs(const TraceFile& trace, const std::vector<int64_t>& ids) {
  ChosenRuns chosen;
  chosen.given = true;
  std::set<int64_t> seen;
  for (int64_t id : ids) {
    if (!seen.insert(id).second) continue;
    auto run = trace.run(id);
    if (!run) return with_flag("--run", run.error());
    chosen.runs.push_back(std::move(*run));
  }
  chosen.scope = fmt::format("run{} {}", chosen.runs.size() == 1 ? "" : "s", id_list(chosen.runs));
  return chosen;
}

Result<ChosenRuns> sweep_or_every_run(const TraceFile& trace, std::optional<int64_t> sweep_id) {
  auto sweep = trace.sweep(sweep_id);
  if (!sweep) return sweep.error();
  if (sweep_id && !*sweep)
    return Error::bad_input(fmt::format("--sweep {}: sweep {} is not in '{}'", *sweep_id, *sweep_id, trace.path()),
                            "ingero-bench runs --db FILE shows the sweep of each run; leave out --sweep for the "
                            "last one");
  auto runs = trace.runs();
  if (!runs) return runs.error();
  ChosenRuns chosen;
  chosen.sweep = *sweep;
  for (auto& run : *runs) {
    if (!chosen.sweep || run.sweep_id == chosen.sweep->sweep_id) chosen.runs.push_back(std::move(run));
  }
  if (chosen.runs.empty())
    return Error::bad_input(
        chosen.sweep ? fmt::format("--sweep: sweep {} in '{}' has no runs", chosen.sweep->sweep_id, trace.path())
                     : fmt::format("--db: '{}' holds no runs", trace.path()),
        "record some first: ingero-bench sweep --db FILE (or ingero-bench --workload dataloader --db FILE)");
  chosen.scope = chosen.sweep ? fmt::format("sweep {}", chosen.sweep->sweep_id) : "every run in the file";
  return chosen;
}

Result<ChosenRuns> choose_runs(const TraceFile& trace, const ReportSelection& selection) {
  if (Status s = check_selection(selection); !s) return s.error();
  if (!selection.runs.empty()) return given_runs(trace, selection.runs);
  return sweep_or_every_run(trace, selection.sweep);
}

// ---- the recommendation

// The runs named with --run, grouped and judged as recommend judges a sweep's or a file's runs.
Result<RecommendReport> recommend_given_runs(const TraceFile& trace, const std::vector<RunRecord>& runs) {
  RecommendInputs in;
  for (const auto& run : runs) {
    auto context = trace.context(run);
    if (!context) return context.error();
    ConfigRun entry{run, run_histogram_quantile(*context, "runq_us", 0.99)};
    (run.sweep_phase == contract::sweep_phase::kVerify ? in.verify_runs : in.runs).push_back(std::move(entry));
  }
  return recommend_configuration(in);
}

// No recommendation is not an error of the report (runs without epoch timings still have their
// processes and timeline); why there is none is said instead.
Result<std::optional<RecommendReport>> recommendation_for(const TraceFile& trace, const ChosenRuns& chosen,
                                                          std::string& why_not) {
  auto report = [&]() -> Result<RecommendReport> {
    if (chosen.given) return recommend_given_runs(trace, chosen.runs);
    RecommendOptions options;
    options.db = trace.path();
    if (chosen.sweep) options.sweep = chosen.sweep->sweep_id;
    return make_recommend_report(trace, options);
  }();
  if (report) return std::optional<RecommendReport>(std::move(*report));
  if (report.error().exit_code != kExitBadInput) return report.error();
  why_not = report.error().message;
  return std::optional<RecommendReport>();
}

// ---- configurations

std::optional<int> prefetch_of(const ConfigResult& c) {
  if (c.config.num_workers <= 0 || !c.config_json.is_object()) return std::nullopt;
  const auto it = c.config_json.find("prefetch_factor");
  if (it == c.config_json.end() || !it->is_number()) return std::nullopt;
  return it->get<int>();
}

ConfigRow config_row(const RecommendReport& r, size_t index) {
  const ConfigResult& c = r.configs[index];
  const ConfigResult& base = r.configs[static_cast<size_t>(r.baseline)];
  ConfigRow row;
  row.label = c.label;
  row.mode = c.config.mode;
  row.num_workers = c.config.num_workers;
  row.prefetch_factor = prefetch_of(c);
  row.pin_memory = c.config.pin_memory;
  row.persistent_workers = c.config.persistent_workers;
  row.run_ids = c.run_ids;
  row.epoch_seconds = c.epoch_seconds;
  row.wait_fraction = c.wait_fraction;
  row.state = c.state;
  row.reason = c.reason;
  row.flags = c.flags;
  row.baseline = static_cast<int>(index) == r.baseline;
  row.recommended = static_cast<int>(index) == r.recommended;
  if (!c.measured()) return row;
  row.median_s = c.median_s;
  row.interval = c.interval;
  if (c.config.samples && c.median_s > 0) row.samples_per_s = static_cast<double>(*c.config.samples) / c.median_s;
  if (row.baseline) return row;
  // The recommendation's own speed-up is the verified one when the sweep re-ran it; the others are
  // from the search's epochs, computed as recommend computes the unverified one.
  if (row.recommended && r.verification) {
    row.speedup = r.verification->speedup;
    row.speedup_verified = true;
  } else if (base.measured()) {
    row.speedup = ratio_of_medians(c.epoch_seconds, base.epoch_seconds, kSpeedupConfidence);
  }
  return row;
}

// ---- epoch-time grids

// Configurations of one family differ in num_workers and prefetch_factor only.
std::string family_key(const nlohmann::json& config) {
  nlohmann::json rest = config.is_object() ? config : nlohmann::json::object();
  rest.erase("num_workers");
  rest.erase("prefetch_factor");
  return rest.dump();
}

std::string family_label(const RunConfigSummary& c) {
  std::string label = fmt::format("{}, pin_memory {}, persistent_workers {}", c.mode.empty() ? "no mode" : c.mode,
                                  c.pin_memory ? "on" : "off", c.persistent_workers ? "on" : "off");
  if (c.cpus > 0) label += fmt::format(", {} cores", c.cpus);
  return label;
}

template <class T>
size_t position(const std::vector<T>& values, const T& value) {
  return static_cast<size_t>(std::find(values.begin(), values.end(), value) - values.begin());
}

std::optional<EpochGrid> grid_of(const RecommendReport& r, const std::vector<size_t>& members,
                                 std::vector<ConfigRow>& rows) {
  std::set<int> workers;
  std::set<std::optional<int>> prefetch;
  std::set<int> prefetch_with_workers;
  for (size_t i : members) {
    workers.insert(rows[i].num_workers);
    prefetch.insert(rows[i].prefetch_factor);
    if (rows[i].num_workers > 0 && rows[i].prefetch_factor) prefetch_with_workers.insert(*rows[i].prefetch_factor);
  }
  if (workers.size() < 2 || prefetch_with_workers.size() < 2) return std::nullopt;
  EpochGrid grid;
  grid.mode = r.configs[members.front()].config.mode;
  grid.family = family_label(r.configs[members.front()].config);
  grid.num_workers.assign(workers.begin(), workers.end());
  grid.prefetch.assign(prefetch.begin(), prefetch.end());  // std::nullopt sorts first
  grid.median_s.assign(grid.num_workers.size(), std::vector<std::optional<double>>(grid.prefetch.size()));
  for (size_t i : members) {
    ConfigRow& row = rows[i];
    const size_t y = position(grid.num_workers, row.num_workers);
    const size_t x = position(grid.prefetch, row.prefetch_factor);
    auto& cell = grid.median_s[y][x];
    if (!cell || *row.median_s < *cell) cell = row.median_s;  // one per cell in practice; the faster otherwise
    if (row.recommended) grid.marks[{y, x}] = "recommended";
    if (row.baseline) grid.marks[{y, x}] = "baseline";
    row.in_grid = true;
  }
  return grid;
}

// One grid per family of measured configurations in which both num_workers and prefetch_factor vary.
std::vector<EpochGrid> epoch_grids(const RecommendReport& r, std::vector<ConfigRow>& rows) {
  std::vector<std::pair<std::string, std::vector<size_t>>> families;  // in the configurations' order
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].measured()) continue;
    const std::string key = family_key(r.configs[i].config_json);
    auto it = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == key; });
    if (it == families.end()) it = families.insert(families.end(), {key, {}});
    it->second.push_back(i);
  }
  std::vector<EpochGrid> grids;
  for (const auto& [key, members] : families) {
    if (auto grid = grid_of(r, members, rows)) grids.push_back(std::move(*grid));
  }
  return grids;
}

// ---- the timeline

// Main threads, pin threads, then workers in order of start; other threads are left out.
std::vector<const ThreadRecord*> lane_threads(const RunContext& context, int& left_out) {
  std::vector<const ThreadRecord*> threads;
  for (const auto& t : context.threads)
    if (t.role != contract::kRoleOther) threads.push_back(&t);
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadRecord* a, const ThreadRecord* b) {
    return std::make_tuple(contract::role_rank(a->role), a->start_ns.value_or(0), a->tid) <
           std::make_tuple(contract::role_rank(b->role), b->start_ns.value_or(0), b->tid);
  });
  left_out = static_cast<int>(threads.size() > kMaxTimelineLanes ? threads.size() - kMaxTimelineLanes : 0);
  if (left_out > 0) threads.resize(kMaxTimelineLanes);
  return threads;
}

// The library calls drawn: CUDA runtime and NCCL calls, or the driver's when the runtime was not probed
// (a runtime call and the driver call inside it would otherwise be drawn twice).
std::vector<std::string> drawn_calls(const RunContext& context) {
  std::vector<std::string> runtime, driver;
  for (const auto& c : context.calls) {
    if (c.category == contract::category::kCudaDriver) driver.push_back(c.op);
    else if (contract::is_library_call_category(c.category)) runtime.push_back(c.op);
  }
  return runtime.empty() ? driver : runtime;
}

// The period a run's first NVML sample covers, unknown from the samples themselves: the driver's
// (200 ms on an H200).
constexpr int64_t kNvmlFirstPeriodNs = 200'000'000;

struct SpanKindOf {
  std::string_view op;
  const char* kind;
};
constexpr SpanKindOf kDrawnOps[] = {{contract::op::kBatchWait, "batch wait"},
                                    {contract::op::kBatchCompute, "batch compute"},
                                    {contract::op::kWorkerStart, "worker start-up"},
                                    {contract::op::kOffcpuBlocked, "blocked"},
                                    {contract::op::kOffcpuIo, "I/O wait"},
                                    {contract::op::kOffcpuPreempted, "waiting for a CPU"},
                                    {contract::op::kRunqWait, "waiting for a CPU"}};

std::string span_text(const std::string& op, const Event& e) {
  if (op == contract::op::kBatchWait || op == contract::op::kBatchCompute) return fmt::format("batch {}", e.arg);
  if (op == contract::op::kWorkerStart) return fmt::format("worker {} starting", e.arg);
  if (op == contract::op::kOffcpuPreempted) return "preempted";
  if (op == contract::op::kRunqWait) return "in the run queue";
  if (op == contract::op::kOffcpuBlocked) return "blocked";
  if (op == contract::op::kOffcpuIo) return "waiting for I/O";
  return op;
}

void add_span(TimelineLane& lane, int64_t start, int64_t end, const std::string& kind, std::string what) {
  lane.spans.push_back({start, end, kind, std::move(what)});
  SpanTotal& total = lane.totals[kind];
  ++total.spans;
  total.ns += end - start;
}

// A thread is on CPU between its off-CPU intervals, from its start to its exit (within the run).
void add_on_cpu_spans(const ThreadRecord& thread, const RunTimeline& timeline, TimelineLane& lane) {
  std::vector<std::pair<int64_t, int64_t>> off;
  for (const TimelineSpan& s : lane.spans)
    if (s.kind == "blocked" || s.kind == "I/O wait" || s.kind == "waiting for a CPU") off.emplace_back(s.start_ns, s.end_ns);
  std::sort(off.begin(), off.end());
  int64_t from = std::max(timeline.start_ns, thread.start_ns.value_or(timeline.start_ns));
  const int64_t until = std::min(timeline.end_ns, thread.exit_ns.value_or(timeline.end_ns));
  for (const auto& [start, end] : off) {
    if (start > from) add_span(lane, from, std::min(start, until), "on CPU", "on CPU");
    from = std::max(from, end);
    if (from >= until) return;
  }
  if (until > from) add_span(lane, from, until, "on CPU", "on CPU");
}

// One lane per GPU that NVML sampled: each gpu_util sample covers the period since the previous one.
void add_gpu_lanes(const RunContext& context, RunTimeline& timeline) {
  std::map<int64_t, size_t> lane_of_gpu;
  std::map<int64_t, int64_t> previous;
  for (const GpuSample& s : context.gpu_samples) {
    if (s.metric != contract::gpu_metric::kGpuUtil) continue;
    auto [it, fresh] = lane_of_gpu.try_emplace(s.gpu, timeline.lanes.size());
    if (fresh) {
      std::string name = "GPU";
      for (const GpuRecord& g : context.gpus)
        if (g.gpu == s.gpu) name = g.name;
      timeline.lanes.push_back(TimelineLane{"gpu", 0, s.gpu, name, {}, {}});
    }
    auto prev = previous.find(s.gpu);
    const int64_t period_start = prev == previous.end() ? std::max(timeline.start_ns, s.ts_ns - kNvmlFirstPeriodNs)
                                                        : prev->second;
    previous[s.gpu] = s.ts_ns;
    const int64_t busy = static_cast<int64_t>(static_cast<double>(s.ts_ns - period_start) * s.value / 100.0);
    if (busy > 0)
      add_span(timeline.lanes[it->second], period_start, period_start + busy, "GPU busy",
               fmt::format("GPU {} busy {:.0f} %", s.gpu, s.value));
  }
}

// One lane for the block device: the traced threads' requests, issue to completion.
Status add_block_io_lane(const TraceFile& trace, const RunContext& context, RunTimeline& timeline) {
  if (context.thread_stats.empty()) return {};
  EventFilter filter;
  filter.ops.emplace_back(contract::op::kBlockIo);
  auto events = trace.events(context.run.run_id, filter);
  if (!events) return events.error();
  const EventList& requests = events->of(contract::op::kBlockIo);
  if (requests.empty()) return {};
  TimelineLane lane{"io", 0, 0, "block device", {}, {}};
  for (const Event& e : requests)
    add_span(lane, e.ts_ns, e.end_ns(), "block I/O",
             fmt::format("{} for tid {}", format_bytes(static_cast<double>(e.arg)), e.tid));
  timeline.lanes.push_back(std::move(lane));
  return {};
}

Result<RunTimeline> run_timeline(const TraceFile& trace, const RunContext& context, std::string why) {
  const RunRecord& run = context.run;
  RunTimeline timeline;
  timeline.run_id = run.run_id;
  timeline.run_label = run.label;
  timeline.why = std::move(why);
  timeline.start_ns = run.start_ns;
  if (run.end_ns) {
    timeline.end_ns = *run.end_ns;
  } else {
    auto last = trace.last_event_end(run.run_id);
    if (!last) return last.error();
    timeline.end_ns = last->value_or(run.start_ns);
  }
  const auto threads = lane_threads(context, timeline.lanes_left_out);
  if (threads.empty()) return timeline;

  std::map<std::string, std::string> kind_of_op;
  for (const auto& op : drawn_calls(context)) kind_of_op[op] = "CUDA call";
  for (const auto& d : kDrawnOps) kind_of_op[std::string(d.op)] = d.kind;
  EventFilter filter;
  for (const auto& [op, kind] : kind_of_op) filter.ops.push_back(op);
  for (const ThreadRecord* t : threads) filter.tids.push_back(t->tid);
  auto events = trace.events(run.run_id, filter);
  if (!events) return events.error();

  std::map<int64_t, size_t> lane_of_tid;
  for (const ThreadRecord* t : threads) {
    lane_of_tid[t->tid] = timeline.lanes.size();
    timeline.lanes.push_back(TimelineLane{t->role, t->pid, t->tid, t->comm, {}, {}});
  }
  for (const auto& [op, list] : events->by_op) {
    const std::string& kind = kind_of_op[op];
    for (const Event& e : list) {
      auto lane = lane_of_tid.find(e.tid);
      if (lane == lane_of_tid.end()) continue;
      add_span(timeline.lanes[lane->second], e.ts_ns, e.end_ns(), kind, span_text(op, e));
    }
  }
  for (size_t i = 0; i < threads.size(); ++i) add_on_cpu_spans(*threads[i], timeline, timeline.lanes[i]);
  add_gpu_lanes(context, timeline);
  if (Status s = add_block_io_lane(trace, context, timeline); !s) return s.error();
  for (auto& lane : timeline.lanes) {
    std::sort(lane.spans.begin(), lane.spans.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
      return std::tie(a.start_ns, a.end_ns, a.kind, a.what) < std::tie(b.start_ns, b.end_ns, b.kind, b.what);
    });
  }
  return timeline;
}

// ---- processes

void add_process_panel(const RunContext& context, ReportDoc& doc) {
  auto rows = process_table(context);
  if (!rows.empty()) doc.processes.push_back({context.run.run_id, context.run.label, std::move(rows)});
}

void add_role_rows(const RunContext& context, ReportDoc& doc) {
  for (auto& row : role_totals(context, process_table(context)))
    doc.roles.push_back({context.run.run_id, context.run.label, std::move(row)});
}

// ---- the whole report

std::string workload_text(const std::vector<RunRecord>& runs) {
  for (const auto& run : runs) {
    const RunConfigSummary c = summarize_config(run);
    if (!c.samples) continue;
    std::string text = format_count(*c.samples);
    if (c.features) text += fmt::format(" × {}", format_count(*c.features));
    text += " samples";
    if (c.batch_size) text += fmt::format(", batch {}", format_count(*c.batch_size));
    return text;
  }
  return "";
}

// The run drawn and diagnosed: the first given with --run, else the baseline's first run, else the first run.
std::pair<const RunRecord*, std::string> focus_run(const ChosenRuns& chosen, const ReportDoc& doc) {
  if (chosen.given) return {&chosen.runs.front(), "the first run given with --run"};
  for (const auto& row : doc.configs) {
    if (!row.baseline || row.run_ids.empty()) continue;
    for (const auto& run : chosen.runs)
      if (run.run_id == row.run_ids.front()) return {&run, fmt::format("the baseline ({})", row.label)};
  }
  return {&chosen.runs.front(), "the first run"};
}

Status add_focus_sections(const TraceFile& trace, const RunRecord& run, std::string why, ReportDoc& doc) {
  auto context = trace.context(run);
  if (!context) return context.error();
  auto timeline = run_timeline(trace, *context, std::move(why));
  if (!timeline) return timeline.error();
  doc.timeline = std::move(*timeline);
  auto profile = trace.profile(run.run_id, std::nullopt, std::nullopt);
  if (!profile) return profile.error();
  if (auto analysis = analyze_profile(*context, *profile))
    for (const RoleProfile& role : analysis->roles) doc.flame_graphs.push_back(flame_tree(*context, *profile, role.role));
  ExplainOptions options;
  options.db = trace.path();
  options.run = run.run_id;
  auto diagnosis = make_explain_report(trace, options);
  if (diagnosis) {
    doc.diagnosis = std::move(*diagnosis);
  } else if (diagnosis.error().exit_code == kExitBadInput) {
    doc.notes.push_back(fmt::format("no diagnosis of run {}: {}", run.run_id, diagnosis.error().message));
  } else {
    return diagnosis.error();
  }
  return {};
}

Status add_process_sections(const TraceFile& trace, const ChosenRuns& chosen, const RunRecord& focus, ReportDoc& doc) {
  std::vector<const RunRecord*> panel_runs;
  if (chosen.given) {
    for (const auto& run : chosen.runs)
      if (panel_runs.size() < kMaxProcessPanels) panel_runs.push_back(&run);
    if (chosen.runs.size() > kMaxProcessPanels)
      doc.notes.push_back(fmt::format("per-process charts are drawn for the first {} runs given with --run",
                                      kMaxProcessPanels));
  } else {
    panel_runs.push_back(&focus);
  }
  for (const RunRecord* run : panel_runs) {
    auto context = trace.context(*run);
    if (!context) return context.error();
    add_process_panel(*context, doc);
  }
  if (chosen.runs.size() < 2) return {};
  for (const auto& run : chosen.runs) {
    auto context = trace.context(run);
    if (!context) return context.error();
    add_role_rows(*context, doc);
  }
  return {};
}

}  // namespace

Status check_selection(const ReportSelection& selection) {
  if (selection.sweep && !selection.runs.empty())
    return Error::bad_input("--sweep and --run were both given",
                            "pass either --sweep ID (a sweep's runs) or --run ID ... (those runs), not both");
  return {};
}

Result<std::vector<RunProfileSection>> run_profiles(const TraceFile& trace, const std::vector<int64_t>& run_ids) {
  std::vector<RunProfileSection> out;
  for (int64_t id : run_ids) {
    // A run the file cannot give whole (empty, cut short) has no section: the table says what it is.
    auto run = trace.run(id);
    if (!run) continue;
    auto context = trace.context(*run);
    if (!context || !profile_taken(*context)) continue;
    auto profile = trace.profile(id, std::nullopt, std::nullopt);
    if (!profile) return profile.error();
    out.push_back({id, run->label, analyze_profile(*context, *profile)});
  }
  if (out.size() > kMaxProfileSections) out.erase(out.begin(), out.end() - kMaxProfileSections);
  return out;
}

Result<ReportDoc> make_report_doc(const TraceFile& trace, const ReportSelection& selection) {
  auto chosen = choose_runs(trace, selection);
  if (!chosen) return chosen.error();
  ReportDoc doc;
  doc.db_path = trace.path();
  doc.scope = chosen->scope;
  doc.sweep = chosen->sweep;
  for (const auto& run : chosen->runs) doc.runs.push_back({run.run_id, run.label, run.status, run.sweep_phase});
  doc.machine = machine_text(chosen->runs.front().machine);
  doc.workload = workload_text(chosen->runs);
  doc.notes = trace.notes();

  auto recommendation = recommendation_for(trace, *chosen, doc.no_recommendation);
  if (!recommendation) return recommendation.error();
  doc.recommendation = std::move(*recommendation);
  if (doc.recommendation) {
    for (size_t i = 0; i < doc.recommendation->configs.size(); ++i)
      doc.configs.push_back(config_row(*doc.recommendation, i));
    doc.grids = epoch_grids(*doc.recommendation, doc.configs);
  }

  const auto [focus, why] = focus_run(*chosen, doc);
  if (Status s = add_focus_sections(trace, *focus, why, doc); !s) return s.error();
  if (Status s = add_process_sections(trace, *chosen, *focus, doc); !s) return s.error();
  return doc;
}

}  // namespace ingero::reports
