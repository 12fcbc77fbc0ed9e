// SPDX-License-Identifier: Apache-2.0
#include "reports/render/report_render.h"

#include <cctype>

#include <cmath>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "reports/text/tracing_cost_text.h"
#include "reports/text/format.h"
#include "reports/documents/input_errors.h"
#include "reports/text/profile_text.h"
#include "reports/text/rank_text.h"
#include "reports/text/recommend_text.h"
#include "reports/text/verdict_text.h"
#include "reports/render/charts.h"
#include "reports/render/html_page.h"
#include "reports/render/report_json.h"

namespace ingero::reports {
namespace {

using render::Table;

constexpr const char* kDash = "—";
constexpr const char* kOtherRole =
    "other: the remaining threads of the traced processes (runtime helpers such as CUDA's, mostly asleep, hence "
    "their long off-CPU time).";

// ---- text shared by the Markdown and HTML pages

std::string title_of(const ReportDoc& doc) { return "ingero-bench report: " + doc.scope; }

std::string seconds_or_dash(const std::optional<double>& s) { return s ? format_seconds(*s) : kDash; }

std::string interval_text(const std::optional<Interval>& i) {
  if (!i || std::isnan(i->low)) return kDash;
  return fmt::format("{} – {}", format_seconds(i->low), format_seconds(i->high));
}

std::string id_list(const std::vector<int64_t>& ids) {
  std::string text;
  for (int64_t id : ids) text += fmt::format("{}{}", text.empty() ? "" : ", ", id);
  return text;
}

std::string prefetch_text(const ConfigRow& row) {
  return row.prefetch_factor ? std::to_string(*row.prefetch_factor) : kDash;
}

std::string vs_baseline(const ConfigRow& row) {
  if (row.baseline) return "baseline";
  if (!row.speedup) return kDash;
  return format_ratio(row.speedup->ratio) + (row.speedup_verified ? " (verified)" : "");
}

// The row's part in the recommendation, or why it was not measured; the flags are among the
// recommendation's reasons.
std::string status_text(const ConfigRow& row) {
  std::vector<std::string> parts;
  if (row.state != contract::point_state::kMeasured)
    parts.push_back(row.reason.empty() ? row.state : row.state + ": " + row.reason);
  if (row.recommended) parts.push_back("recommended");
  if (row.baseline) parts.push_back("baseline");
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

std::vector<std::pair<std::string, std::string>> overview(const ReportDoc& doc) {
  std::vector<std::pair<std::string, std::string>> items = {{"trace DB", doc.db_path}, {"scope", doc.scope}};
  if (doc.sweep) items.push_back({"sweep", fmt::format("{} ({})", doc.sweep->sweep_id, doc.sweep->status)});
  std::vector<int64_t> ids;
  for (const auto& run : doc.runs) ids.push_back(run.run_id);
  items.push_back({"runs", fmt::format("{} ({})", doc.runs.size(), id_list(ids))});
  items.push_back({"machine", doc.machine});
  if (!doc.workload.empty()) items.push_back({"data", doc.workload});
  return items;
}

// The recommendation in sentences: the headline first, then the speed-up and its basis, then why.
std::vector<std::string> recommendation_lines(const ReportDoc& doc) {
  if (!doc.recommendation) return {"No recommendation: " + doc.no_recommendation};
  const RecommendReport& r = *doc.recommendation;
  std::vector<std::string> lines = {headline_text(r)};
  if (r.recommended != r.baseline) {
    lines.push_back(fmt::format("Speed-up over the baseline ({}): {}, 95 % interval {} – {}, {}.",
                                r.configs[static_cast<size_t>(r.baseline)].label, format_ratio(r.speedup),
                                format_ratio(r.speedup_low), format_ratio(r.speedup_high),
                                r.verified ? fmt::format("verified by interleaved re-runs (runs {}, {})",
                                                         id_list(r.verification->baseline_runs),
                                                         id_list(r.verification->recommended_runs))
                                           : "not verified by re-runs (from the search's own epochs)"));
  }
  for (auto& reason : reason_lines(r)) lines.push_back(std::move(reason));
  return lines;
}

Table results_table(const ReportDoc& doc) {
  Table t;
  // The mode is in the label (a sweep point's or a run's); the JSON has it apart.
  t.header = {"configuration", "workers", "prefetch", "pin", "epoch", "interval", "samples/s", "waiting", "speed-up",
              "runs", "status"};
  for (const auto& row : doc.configs) {
    t.rows.push_back({row.label, std::to_string(row.num_workers),
                      prefetch_text(row), row.pin_memory ? "yes" : "no", seconds_or_dash(row.median_s),
                      interval_text(row.interval),
                      row.samples_per_s ? format_count(std::llround(*row.samples_per_s)) : kDash,
                      row.wait_fraction ? format_percent(*row.wait_fraction) : kDash, vs_baseline(row),
                      id_list(row.run_ids), status_text(row)});
  }
  t.caption = "Fastest first. epoch: the median of the measured epoch times, with its interval; samples/s: samples "
              "per epoch over that median; waiting: the share of the time the main loop waited for the next batch; "
              "speed-up: over the baseline.";
  t.numeric = {false, true, true, false, true, true, true, true, true, false, false};
  return t;
}

Table speedup_table(const ReportDoc& doc) {
  Table t;
  t.header = {"configuration", "speed-up", "95 % interval", "from"};
  for (const auto& row : doc.configs) {
    if (!row.speedup) continue;
    const Interval& i = row.speedup->interval;
    t.rows.push_back({row.label, format_ratio(row.speedup->ratio),
                      std::isnan(i.low) ? kDash : fmt::format("{} – {}", format_ratio(i.low), format_ratio(i.high)),
                      row.speedup_verified ? "interleaved re-runs" : "the search's epochs"});
  }
  t.numeric = {false, true, true, false};
  return t;
}

std::string prefetch_label(const std::optional<int>& p) { return p ? std::to_string(*p) : "n/a"; }

Table grid_table(const EpochGrid& grid) {
  Table t;
  t.header = {"num_workers \\ prefetch_factor"};
  for (const auto& p : grid.prefetch) t.header.push_back(prefetch_label(p));
  for (size_t y = 0; y < grid.num_workers.size(); ++y) {
    std::vector<std::string> cells = {std::to_string(grid.num_workers[y])};
    for (size_t x = 0; x < grid.prefetch.size(); ++x) {
      std::string cell = seconds_or_dash(grid.median_s[y][x]);
      if (auto mark = grid.marks.find({y, x}); mark != grid.marks.end()) cell += " (" + mark->second + ")";
      cells.push_back(cell);
    }
    t.rows.push_back(std::move(cells));
  }
  t.caption = "Median epoch time, " + grid.family + "; n/a: no workers, prefetch_factor does not apply.";
  return t;
}

std::string process_label(const ProcessRow& row) {
  if (row.pid == 0) return row.role;
  return row.threads > 1 ? fmt::format("{} ({}, pid {}, {} threads)", row.name, row.role, row.pid, row.threads)
                         : fmt::format("{} ({}, pid {})", row.name, row.role, row.pid);
}

double millis(int64_t ns) { return static_cast<double>(ns) / 1e6; }
int64_t switches(const ThreadCounters& c) { return c.voluntary_switches + c.involuntary_switches; }

std::vector<std::string> counter_cells(const ProcessRow& row) {
  const ThreadCounters& c = row.counters;
  return {format_count(switches(c)), format_duration_ns(static_cast<double>(c.offcpu_ns)),
          format_duration_ns(static_cast<double>(c.runq_ns)), format_count(c.page_allocs)};
}

Table process_table_of(const ProcessPanel& panel) {
  Table t;
  t.header = {"process", "context switches", "off-CPU", "run-queue", "page allocations"};
  for (const auto& row : panel.rows) {
    std::vector<std::string> cells = {process_label(row)};
    for (auto& c : counter_cells(row)) cells.push_back(std::move(c));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Table role_table(const std::vector<RoleRow>& roles) {
  Table t;
  t.header = {"run", "role", "processes", "threads", "context switches", "off-CPU", "run-queue", "page allocations"};
  for (const auto& r : roles) {
    std::vector<std::string> cells = {fmt::format("{} {}", r.run_id, r.run_label), r.totals.role,
                                      std::to_string(r.totals.processes), std::to_string(r.totals.threads)};
    for (auto& c : counter_cells(r.totals)) cells.push_back(std::move(c));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::string lane_label(const TimelineLane& lane) {
  if (lane.role == "gpu") return fmt::format("GPU {} (NVML)", lane.tid);
  if (lane.role == "io") return "block I/O (traced threads' requests)";
  return fmt::format("{} (tid {})", lane.role, lane.tid);
}

Table lane_table(const RunTimeline& timeline) {
  Table t;
  t.header = {"thread"};
  for (const auto& kind : kTimelineKinds) t.header.push_back(kind.name);
  for (const auto& lane : timeline.lanes) {
    std::vector<std::string> cells = {fmt::format("{} {}, pid {}", lane_label(lane), lane.comm, lane.pid)};
    for (const auto& kind : kTimelineKinds) {
      auto total = lane.totals.find(kind.name);
      cells.push_back(total == lane.totals.end()
                          ? kDash
                          : fmt::format("{} in {}", format_duration_ns(static_cast<double>(total->second.ns)),
                                        format_count(total->second.spans)));
    }
    t.rows.push_back(std::move(cells));
  }
  t.caption = "Time in each kind of span (summed; spans of one kind may overlap) and how many spans.";
  return t;
}

Table calls_table(const ExplainReport& report) {
  Table t;
  t.header = {"function", "calls", "p50", "p99", "max", "total"};
  constexpr size_t kMaxRows = 10;
  for (const auto& row : report.calls) {
    if (t.rows.size() == kMaxRows) break;
    const auto d = [](int64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
    t.rows.push_back({row.function, format_calls(row.calls, row.estimate, false), d(row.stats.p50_ns) + (row.exact ? "" : " ≤"),
                      d(row.stats.p99_ns) + (row.exact ? "" : " ≤"), d(row.stats.max_ns), d(row.stats.total_ns)});
  }
  t.caption = "The slowest library calls by total time; ≤: an upper bound from the kernel's log2 buckets; ≈: a "
              "count estimated from duty-cycled probes, with its 95 % interval.";
  return t;
}

// A role's top functions by self samples, with their inclusive shares (the Markdown page's profile).
Table role_frames_table(const RoleProfile& role) {
  constexpr size_t kTopFrames = 10;
  Table t;
  t.header = {"function (" + role_profile_name(role) + ")", "self", "inclusive"};
  for (const FrameShare& f : role.top_by_self(kTopFrames))
    t.rows.push_back({frame_text(f), format_percent(f.self_share), format_percent(f.inclusive_share)});
  t.caption = fmt::format("The {} threads' functions with the most on-CPU samples (of {}, {} thread{}): self, the "
                          "function running; inclusive, on the stack.",
                          role_profile_name(role), format_count(role.samples), role.threads,
                          role.threads == 1 ? "" : "s");
  return t;
}

// A DDP job's ranks: one row each, as the terminal's Ranks section.
Table ranks_table(const RankAnalysis& r) {
  Table t;
  t.header = {"rank", "epoch median", "waiting", "verdict", "step p50", "waited for the straggler", "top cause"};
  if (r.job) t.header.insert(t.header.begin() + 1, "node");
  const auto ns = [](int64_t v) { return format_duration_ns(static_cast<double>(v)); };
  for (const RankRow& row : r.ranks) {
    const RunMetrics& m = row.metrics;
    std::vector<std::string> cells = {std::to_string(row.rank),
                                      m.epoch_median_s ? format_seconds(*m.epoch_median_s) : kDash,
                                      m.wait_fraction ? format_percent(*m.wait_fraction) : kDash,
                                      input_bound_name(m.verdict),
                                      ns(m.batch_compute.p50_ns),
                                      r.straggler ? ns(row.waits_for_straggler_ns) : kDash,
                                      row.top_chain ? top_cause_text(row) : kDash};
    if (r.job) cells.insert(cells.begin() + 1, row.node);
    t.rows.push_back(std::move(cells));
  }
  t.caption = "Each rank's own main loop and workers; the step is the time from a batch's arrival to the next wait.";
  return t;
}

// Each rank's NCCL calls; no rows when the job made none.
Table nccl_table(const RankAnalysis& r) {
  Table t;
  t.header = {"rank", "function", "calls", "bytes", "total", "mean", "max"};
  const auto ns = [](int64_t v) { return format_duration_ns(static_cast<double>(v)); };
  for (const RankRow& row : r.ranks)
    for (const NcclCallRow& call : row.nccl)
      t.rows.push_back({rank_name(r, row), call.op, (call.estimated ? "≈ " : "") + format_count(call.calls), format_bytes(static_cast<double>(call.bytes)),
                        ns(call.total_ns), call.mean_ns ? ns(*call.mean_ns) : kDash, ns(call.max_ns)});
  t.caption = "NCCL calls per rank: counts exact, ≈ where estimated from duty-cycled probes; mean and max over the "
              "calls that returned while probed.";
  return t;
}

// The job, the straggler, each rank's change and each node's cores, in the terminal's words.
std::vector<std::string> rank_lines(const RankAnalysis& r) {
  std::vector<std::string> lines;
  if (r.job) lines = job_sentences(*r.job);
  lines.push_back(straggler_sentence(r));
  for (const RankRow& row : r.ranks)
    if (const auto words = rank_chain_words(row))
      lines.push_back(fmt::format("{}: change: {}", rank_name(r, row), words->recommendation));
  for (const NodeCores& node : r.nodes)
    for (auto& line : node_cores_sentences(r, node)) lines.push_back(std::move(line));
  return lines;
}

std::string ranks_title(const RankAnalysis& r) {
  return r.job ? fmt::format("Ranks: {} DDP ranks on {} nodes", r.ranks.size(), r.nodes.size())
               : fmt::format("Ranks: {} DDP ranks", r.ranks.size());
}

std::vector<std::string> diagnosis_lines(const ExplainReport& r) {
  std::vector<std::string> lines;
  const RunMetrics& m = r.metrics;
  std::string timing = m.epoch_median_s ? fmt::format("median epoch {}", format_seconds(*m.epoch_median_s)) : "";
  if (m.wait_fraction)
    timing += fmt::format("{}waited for data {} of the time: {}", timing.empty() ? "" : "; ",
                          format_percent(*m.wait_fraction), verdict_words(m));
  else if (m.verdict == InputBound::run_failed || m.verdict == InputBound::nothing_measured)
    timing += fmt::format("{}verdict {}", timing.empty() ? "" : "; ", verdict_words(m));
  if (!timing.empty()) lines.push_back(fmt::format("Run {} ({}): {}.", r.run.run_id, r.run.label, timing));
  for (std::string line : tracing_cost_lines(r.tracing_cost)) {
    line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
    lines.push_back(line + ".");
  }
  for (size_t i = 0; i < r.health.findings.size(); ++i) {
    const HealthWords& w = r.health_words[i];
    lines.push_back(fmt::format("[{}] {}: {} — change: {}.", severity_name(r.health.findings[i].severity), w.title,
                                w.summary, w.change));
  }
  if (r.chains.chains.empty()) lines.push_back("No causal chain stood out in this run's trace.");
  for (size_t i = 0; i < r.chains.chains.size(); ++i) {
    const ChainWords& w = r.chain_words[i];
    lines.push_back(fmt::format("[{}] {} — {} {}", severity_name(r.chains.chains[i].severity), w.summary, w.root_cause,
                                w.recommendation));
  }
  return lines;
}

std::string timeline_title(const RunTimeline& t) {
  return fmt::format("Run {} ({}): main thread and workers over {}", t.run_id, t.run_label,
                     format_duration_ns(static_cast<double>(t.end_ns - t.start_ns)));
}

std::string timeline_caption(const RunTimeline& t) {
  std::string caption =
      fmt::format("The run drawn is {}. Each lane is one thread, each band in it one kind of span.", t.why);
  if (t.lanes_left_out > 0) caption += fmt::format(" {} more worker threads are left out.", t.lanes_left_out);
  return caption;
}

// ---- Markdown

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out.empty() ? " " : out;
}

// Right-aligned columns: as given, else those whose cells all read as numbers (as the HTML page decides).
std::vector<bool> numeric_columns(const Table& t) {
  if (!t.numeric.empty()) return t.numeric;
  std::vector<bool> numeric(t.header.size(), true);
  for (size_t c = 0; c < numeric.size(); ++c) {
    bool seen = false;
    for (const auto& row : t.rows) {
      if (c >= row.size() || row[c].empty() || row[c] == kDash) continue;
      seen = true;
      numeric[c] = numeric[c] && render::looks_numeric(row[c]);
    }
    numeric[c] = numeric[c] && seen;
  }
  return numeric;
}

void markdown_table(const Table& t, std::string& out) {
  if (t.rows.empty()) return;
  auto line = [&](const std::vector<std::string>& cells) {
    out += "|";
    for (const auto& c : cells) out += " " + markdown_cell(c) + " |";
    out += "\n";
  };
  line(t.header);
  out += "|";
  const std::vector<bool> numeric = numeric_columns(t);
  for (size_t i = 0; i < t.header.size(); ++i) out += numeric[i] ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) line(row);
  if (!t.caption.empty()) out += "\n" + t.caption + "\n";
  out += "\n";
}

void markdown_heading(const std::string& text, int level, std::string& out) {
  out += std::string(static_cast<size_t>(level), '#') + " " + text + "\n\n";
}

void markdown_list(const std::vector<std::string>& items, std::string& out) {
  for (const auto& item : items) out += "- " + item + "\n";
  if (!items.empty()) out += "\n";
}

// ---- HTML charts

render::HeatMap heat_map_of(const EpochGrid& grid) {
  render::HeatMap h;
  h.title = "Median epoch time, " + grid.mode;
  h.x_title = "prefetch_factor";
  h.y_title = "num_workers";
  h.value_title = "median epoch time";
  h.unit = "s";
  for (const auto& p : grid.prefetch) h.x_labels.push_back(prefetch_label(p));
  for (int w : grid.num_workers) h.y_labels.push_back(std::to_string(w));
  h.values = grid.median_s;
  for (const auto& [cell, mark] : grid.marks) h.marks[cell] = mark;
  h.caption = "Configurations " + grid.family + ", over num_workers × prefetch_factor. Lower is better. n/a: with "
              "no workers prefetch_factor does not apply; a hatched cell was not measured.";
  return h;
}

// Epoch time per configuration, for the measured configurations no heat map shows.
std::optional<render::IntervalBars> epoch_bars(const ReportDoc& doc) {
  render::IntervalBars b;
  b.title = doc.grids.empty() ? "Median epoch time per configuration" : "Median epoch time, other configurations";
  b.value_title = "median epoch time";
  b.unit = "s";
  b.interval_label = fmt::format("interval of the median (≥ {:g} % where 5+ epochs)", kMedianConfidence * 100);
  b.highlight_label = "recommended";
  for (const auto& row : doc.configs) {
    if (!row.measured() || row.in_grid) continue;
    render::IntervalBar bar{row.label, *row.median_s, std::nullopt, std::nullopt, row.recommended, ""};
    if (row.interval && !std::isnan(row.interval->low)) {
      bar.low = row.interval->low;
      bar.high = row.interval->high;
    }
    bar.note = fmt::format("{}{} epochs", row.baseline ? "baseline, " : "", row.epoch_seconds.size());
    b.bars.push_back(std::move(bar));
  }
  if (b.bars.empty()) return std::nullopt;
  b.caption = "Lower is better; the whiskers bound the median of each configuration's measured epochs.";
  return b;
}

std::optional<render::IntervalBars> speedup_bars(const ReportDoc& doc) {
  if (!doc.recommendation) return std::nullopt;
  const ConfigRow* base = nullptr;
  for (const auto& row : doc.configs)
    if (row.baseline) base = &row;
  render::IntervalBars b;
  b.title = fmt::format("Speed-up over the baseline ({})", base ? base->label : "?");
  b.value_title = "speed-up over the baseline";
  b.unit = "×";
  b.interval_label = fmt::format("{:g} % bootstrap interval", kSpeedupConfidence * 100);
  b.highlight_label = "recommended";
  b.reference = render::ReferenceLine{1.0, "baseline (1.0×)"};
  for (const auto& row : doc.configs) {
    if (!row.speedup) continue;
    const Interval& i = row.speedup->interval;
    render::IntervalBar bar{row.label, row.speedup->ratio, std::nullopt, std::nullopt, row.recommended,
                            row.speedup_verified ? "verified by re-runs" : ""};
    if (!std::isnan(i.low)) {
      bar.low = i.low;
      bar.high = i.high;
    }
    b.bars.push_back(std::move(bar));
  }
  if (b.bars.empty()) return std::nullopt;
  b.caption = "Median epoch time of the baseline over that of each configuration; above 1 is faster. The interval "
              "resamples both configurations' epochs.";
  return b;
}

// One colour per role in every panel, whichever roles a run has.
const std::vector<std::string> kRoleColourOrder = {"main", "pin", "worker", "other"};

std::vector<render::BarChart> counter_charts(const std::vector<std::pair<std::string, const ProcessRow*>>& rows) {
  render::BarChart sw{"context switches", "count", {}};
  render::BarChart off{"off-CPU time", "ms", {}};
  render::BarChart rq{"run-queue time", "ms", {}};
  render::BarChart pages{"page allocations", "pages", {}};
  for (const auto& [label, row] : rows) {
    const ThreadCounters& c = row->counters;
    sw.rows.push_back({label, static_cast<double>(switches(c)), row->role});
    off.rows.push_back({label, millis(c.offcpu_ns), row->role});
    rq.rows.push_back({label, millis(c.runq_ns), row->role});
    pages.rows.push_back({label, static_cast<double>(c.page_allocs), row->role});
  }
  return {sw, off, rq, pages};
}

render::BarPanel process_panel(const ProcessPanel& panel) {
  std::vector<std::pair<std::string, const ProcessRow*>> rows;
  for (const auto& row : panel.rows) rows.push_back({process_label(row), &row});
  render::BarPanel p;
  p.group_order = kRoleColourOrder;
  p.title = fmt::format("Per process: run {} ({})", panel.run_id, panel.run_label);
  p.charts = counter_charts(rows);
  p.caption = std::string("Totals over the whole run from the kernel's per-thread counters; the main process is "
                          "split by thread role. ") + kOtherRole;
  return p;
}

render::BarPanel role_panel(const std::vector<RoleRow>& roles) {
  std::vector<std::pair<std::string, const ProcessRow*>> rows;
  for (const auto& r : roles)
    rows.push_back({fmt::format("{} {} · {}", r.run_id, r.run_label, r.totals.role), &r.totals});
  render::BarPanel p;
  p.group_order = kRoleColourOrder;
  p.title = "Per role, every run";
  p.charts = counter_charts(rows);
  p.caption = std::string("Each run's threads summed by role. ") + kOtherRole;
  return p;
}

// The main thread's split in words, also the flame graph's colours.
std::string part_group(CpuPart part) {
  switch (part) {
    case CpuPart::loader: return "batch building";
    case CpuPart::model: return "model compute";
    case CpuPart::other: break;
  }
  return "other";
}

render::FlameFrame flame_frame(const FlameNode& node) {
  render::FlameFrame frame{node.name, static_cast<double>(node.samples), part_group(node.part), {}};
  frame.children.reserve(node.children.size());
  for (const FlameNode& child : node.children) frame.children.push_back(flame_frame(child));
  return frame;
}

render::FlameGraph flame_chart(const FlameNode& tree, int64_t run_id) {
  render::FlameGraph chart;
  chart.title = fmt::format("Where the CPU went: {} threads of run {} ({} samples)", tree.name, run_id,
                            format_count(tree.samples));
  chart.root = flame_frame(tree);
  chart.root.name = fmt::format("all {} samples", tree.name);
  chart.group_order = {part_group(CpuPart::loader), part_group(CpuPart::model), part_group(CpuPart::other)};
  chart.caption = "On-CPU samples, stacks merged: the root at the bottom, each frame as wide as the samples "
                  "through it, its callees above it, siblings by name. Colours: DataLoader, dataset, collate, "
                  "transforms and image decoding; torch.nn, autograd, optimizers and torch ops; the rest.";
  return chart;
}

render::Timeline timeline_chart(const RunTimeline& t) {
  render::Timeline chart;
  chart.title = timeline_title(t);
  chart.start_ns = t.start_ns;
  chart.end_ns = t.end_ns;
  for (const auto& kind : kTimelineKinds) chart.categories.push_back({kind.name, kind.description});
  for (const auto& lane : t.lanes) {
    render::Lane l{lane_label(lane), fmt::format("{}, pid {}", lane.comm, lane.pid), {}};
    l.spans.reserve(lane.spans.size());
    for (const auto& s : lane.spans) l.spans.push_back({s.start_ns, s.end_ns, s.kind, s.what});
    chart.lanes.push_back(std::move(l));
  }
  chart.caption = timeline_caption(t);
  return chart;
}

}  // namespace

// ---- the pages

std::string render_report_markdown(const ReportDoc& doc) {
  std::string out;
  markdown_heading(title_of(doc), 1, out);
  for (const auto& [key, value] : overview(doc)) out += fmt::format("- **{}:** {}\n", key, value);
  out += "\n";
  markdown_heading("Recommendation", 2, out);
  const auto lines = recommendation_lines(doc);
  out += "**" + lines.front() + "**\n\n";
  markdown_list(std::vector<std::string>(lines.begin() + 1, lines.end()), out);
  if (!doc.configs.empty()) {
    markdown_heading("Configurations", 2, out);
    markdown_table(results_table(doc), out);
    out += "(" + noise_rule_text(doc.recommendation->noise_rule) + ")\n\n";
  }
  for (const auto& grid : doc.grids) {
    markdown_heading("Epoch time over num_workers × prefetch_factor: " + grid.family, 3, out);
    markdown_table(grid_table(grid), out);
  }
  if (Table t = speedup_table(doc); !t.rows.empty()) {
    markdown_heading("Speed-up over the baseline", 2, out);
    markdown_table(t, out);
  }
  if (!doc.processes.empty() || !doc.roles.empty()) markdown_heading("Where the time went", 2, out);
  for (const auto& panel : doc.processes) {
    markdown_heading(fmt::format("Per process: run {} ({})", panel.run_id, panel.run_label), 3, out);
    markdown_table(process_table_of(panel), out);
  }
  if (!doc.roles.empty()) {
    markdown_heading("Per role, every run", 3, out);
    markdown_table(role_table(doc.roles), out);
  }
  if (doc.timeline) {
    markdown_heading(timeline_title(*doc.timeline), 2, out);
    out += timeline_caption(*doc.timeline) + " The HTML report draws it.\n\n";
    markdown_table(lane_table(*doc.timeline), out);
  }
  if (doc.diagnosis) {
    markdown_heading(fmt::format("Diagnosis of run {}", doc.diagnosis->run.run_id), 2, out);
    markdown_list(diagnosis_lines(*doc.diagnosis), out);
    markdown_table(calls_table(*doc.diagnosis), out);
    markdown_list(doc.diagnosis->notes, out);
    if (const auto& ranks = doc.diagnosis->ranks) {
      markdown_heading(ranks_title(*ranks), 3, out);
      markdown_table(ranks_table(*ranks), out);
      markdown_list(rank_lines(*ranks), out);
      if (Table t = nccl_table(*ranks); !t.rows.empty()) markdown_table(t, out);
    }
    markdown_heading(fmt::format("Where the CPU went in run {}", doc.diagnosis->run.run_id), 3, out);
    markdown_list({profile_status_text(doc.diagnosis->profile, doc.diagnosis->profile_taken)}, out);
    if (const auto& profile = doc.diagnosis->profile)
      for (const RoleProfile& role : profile->roles) markdown_table(role_frames_table(role), out);
  }
  if (!doc.notes.empty()) {
    markdown_heading("Notes", 2, out);
    markdown_list(doc.notes, out);
  }
  return out;
}

std::string render_profiles_markdown(const std::vector<RunProfileSection>& sections) {
  std::string out;
  for (const RunProfileSection& section : sections) {
    markdown_heading(fmt::format("Where the CPU went in run {} ({})", section.run_id, section.label), 2, out);
    markdown_list({profile_status_text(section.profile, true)}, out);
    if (section.profile)
      for (const RoleProfile& role : section.profile->roles) markdown_table(role_frames_table(role), out);
  }
  return out;
}

std::string render_report_html(const ReportDoc& doc) {
  render::HtmlPage page(title_of(doc), doc.machine);
  page.add_key_values(overview(doc));
  page.add_heading("Recommendation");
  const auto lines = recommendation_lines(doc);
  page.add_note(lines.front());
  for (size_t i = 1; i < lines.size(); ++i) page.add_paragraph(lines[i]);
  if (!doc.configs.empty()) {
    page.add_heading("Configurations");
    page.add_table(results_table(doc));
    page.add_paragraph("(" + noise_rule_text(doc.recommendation->noise_rule) + ")");
    page.add_heading("Epoch time");
    for (const auto& grid : doc.grids) page.add_svg(render::heat_map(heat_map_of(grid)));
    if (auto bars = epoch_bars(doc)) page.add_svg(render::interval_bars(*bars));
  }
  if (auto bars = speedup_bars(doc)) {
    page.add_heading("Speed-up over the baseline");
    page.add_svg(render::interval_bars(*bars));
  }
  if (!doc.processes.empty() || !doc.roles.empty()) page.add_heading("Where the time went");
  for (const auto& panel : doc.processes) page.add_svg(render::bar_panel(process_panel(panel)));
  if (!doc.roles.empty()) page.add_svg(render::bar_panel(role_panel(doc.roles)));
  if (doc.timeline) {
    page.add_heading(fmt::format("Timeline of run {}", doc.timeline->run_id));
    page.add_svg(render::timeline(timeline_chart(*doc.timeline)));
  }
  if (doc.diagnosis) {
    page.add_heading(fmt::format("Diagnosis of run {}", doc.diagnosis->run.run_id));
    for (const auto& line : diagnosis_lines(*doc.diagnosis)) page.add_paragraph(line);
    if (!doc.diagnosis->calls.empty()) page.add_table(calls_table(*doc.diagnosis));
    for (const auto& note : doc.diagnosis->notes) page.add_note(note);
    if (const auto& ranks = doc.diagnosis->ranks) {
      page.add_heading(ranks_title(*ranks));
      page.add_table(ranks_table(*ranks));
      for (const auto& line : rank_lines(*ranks)) page.add_paragraph(line);
      if (Table t = nccl_table(*ranks); !t.rows.empty()) page.add_table(t);
    }
    page.add_heading(fmt::format("Where the CPU went in run {}", doc.diagnosis->run.run_id));
    page.add_paragraph(profile_status_text(doc.diagnosis->profile, doc.diagnosis->profile_taken));
    for (const FlameNode& tree : doc.flame_graphs)
      page.add_svg(render::flame_graph(flame_chart(tree, doc.diagnosis->run.run_id)));
  }
  if (!doc.notes.empty()) {
    page.add_heading("Notes");
    for (const auto& note : doc.notes) page.add_note(note);
  }
  return page.render();
}

std::string render_report(const ReportDoc& doc, ReportFormat format) {
  switch (format) {
    case ReportFormat::markdown:
      return render_report_markdown(doc);
    case ReportFormat::html:
      return render_report_html(doc);
    case ReportFormat::json:
      break;
  }
  return to_json(doc).dump(2) + "\n";
}

Result<ReportFormat> parse_report_format(const std::string& format, const std::string& out_path) {
  std::string name = format;
  if (name.empty()) {
    const std::string ext = std::filesystem::path(out_path).extension().string();
    name = ext.empty() ? "" : ext.substr(1);
    if (name.empty())
      return Error::bad_input(fmt::format("--format is missing and --out '{}' has no extension to tell it", out_path),
                              "pass --format md, --format html or --format json");
  }
  if (name == "md" || name == "markdown") return ReportFormat::markdown;
  if (name == "html" || name == "htm") return ReportFormat::html;
  if (name == "json") return ReportFormat::json;
  return Error::bad_input(format.empty()
                              ? fmt::format("--format is missing and --out '{}' is not .md, .html or .json", out_path)
                              : fmt::format("--format {}: not a report format", format),
                          "pass --format md, --format html or --format json");
}

Status write_report(const ReportOptions& options) {
  auto format = parse_report_format(options.format, options.out);
  if (!format) return format.error();
  if (options.out.empty())
    return Error::bad_input("--out is missing", "pass --out FILE, e.g. --out report.html");
  if (Status writable = check_writable_path("--out", options.out); !writable) return writable;
  std::error_code ec;
  if (std::filesystem::equivalent(options.out, options.db, ec))
    return Error::bad_input(fmt::format("--out '{}' is the trace DB itself", options.out),
                            "write the report to another file, e.g. --out report.html");
  const ReportSelection selection{options.sweep, options.runs};
  if (Status s = check_selection(selection); !s) return s;
  auto trace = TraceFile::open(options.db);
  if (!trace) return with_flag("--db", trace.error());
  auto doc = make_report_doc(**trace, selection);
  if (!doc) return doc.error();
  return write_file_atomically(options.out, render_report(*doc, *format));
}

}  // namespace ingero::reports
