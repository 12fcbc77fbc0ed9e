// SPDX-License-Identifier: Apache-2.0
// The report behind `ingero-bench report`: what a sweep (or a set of runs) measured and what to use,
// computed once from the trace DB and then only formatted (report_render.h: Markdown, HTML; JSON in
// report_json.h). The analysis is the one the terminal commands print: the recommendation is
// make_recommend_report's, the diagnosis make_explain_report's, the per-process numbers process_table's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "reports/documents/explain.h"
#include "reports/analysis/recommend.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// Which runs to report on: --sweep ID, or --run ID ...; with neither, the DB's last sweep, else every run.
struct ReportSelection {
  std::optional<int64_t> sweep;
  std::vector<int64_t> runs;
};

// One configuration: a row of the results table and a bar of the charts.
struct ConfigRow {
  std::string label;
  std::string mode;
  int num_workers = 0;
  std::optional<int> prefetch_factor;  // empty where it does not apply (no workers) or was not set
  bool pin_memory = false;
  bool persistent_workers = false;
  std::vector<int64_t> run_ids;
  std::vector<double> epoch_seconds;
  std::optional<double> median_s;       // of the measured epochs
  std::optional<Interval> interval;     // of the median (kMedianConfidence)
  std::optional<double> samples_per_s;  // samples per epoch / median epoch time
  std::optional<double> wait_fraction;  // share of the time the main loop waited for data
  std::string state;                    // measured | pruned | failed | skipped | pending
  std::string reason;                   // why not measured
  std::vector<ConfigFlag> flags;        // oversubscribed, high run-queue latency, no shuffle
  bool baseline = false;
  bool recommended = false;
  // median(baseline) / median(this) with its interval; empty for the baseline and unmeasured rows.
  std::optional<RatioEstimate> speedup;
  bool speedup_verified = false;  // from the sweep's interleaved re-runs rather than the search's epochs
  bool in_grid = false;           // drawn in an EpochGrid
  bool measured() const { return median_s.has_value(); }
};

// Median epoch time over num_workers × prefetch_factor, for configurations that differ in those two only.
struct EpochGrid {
  std::string mode;
  std::string family;                            // what they share: "loader, pin_memory off, persistent_workers off"
  std::vector<int> num_workers;                  // rows, ascending
  std::vector<std::optional<int>> prefetch;      // columns, ascending; empty first: does not apply
  std::vector<std::vector<std::optional<double>>> median_s;  // [row][column]; empty: not measured
  std::map<std::pair<size_t, size_t>, std::string> marks;    // (row, column) -> "baseline", "recommended"
};

// One run's processes (process_table: the main process split by role, each worker process).
struct ProcessPanel {
  int64_t run_id = 0;
  std::string run_label;
  std::vector<ProcessRow> rows;
};

// One role's totals in one run, to compare runs.
struct RoleRow {
  int64_t run_id = 0;
  std::string run_label;
  ProcessRow totals;
};

// What one thread did over the run, as the timeline draws it.
struct TimelineSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string kind;  // one of kTimelineKinds
  std::string what;  // "cudaMemcpyAsync 4.2 MB", "batch 12"
};

struct SpanTotal {
  int64_t spans = 0;
  int64_t ns = 0;  // summed durations (spans of one kind may overlap)
};

struct TimelineLane {
  std::string role;
  int64_t pid = 0;
  int64_t tid = 0;
  std::string comm;
  std::vector<TimelineSpan> spans;
  std::map<std::string, SpanTotal> totals;  // per kind
};

struct TimelineKind {
  const char* name;
  const char* description;
};
// The span kinds, in legend order.
extern const std::vector<TimelineKind> kTimelineKinds;

struct RunTimeline {
  int64_t run_id = 0;
  std::string run_label;
  std::string why;  // why this run: "the baseline", "the first run given with --run"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<TimelineLane> lanes;  // main threads, pin threads, then workers by start
  int lanes_left_out = 0;           // workers beyond kMaxTimelineLanes
};
inline constexpr size_t kMaxTimelineLanes = 20;

struct ReportRun {
  int64_t run_id = 0;
  std::string label;
  std::string status;
  std::string sweep_phase;
};

struct ReportDoc {
  std::string db_path;
  std::string scope;  // "sweep 3", "every run in the file", "runs 5, 7"
  std::optional<SweepRecord> sweep;
  std::vector<ReportRun> runs;  // the chosen runs
  std::string machine;          // of the first chosen run
  std::string workload;         // the configurations' shared data shape: "7,000,000 × 100 samples, batch 1,048,576"
  std::optional<RecommendReport> recommendation;
  std::string no_recommendation;  // why there is none
  std::vector<ConfigRow> configs;  // measured fastest first, then the others (the recommendation's order)
  std::vector<EpochGrid> grids;
  std::vector<ProcessPanel> processes;  // the runs given with --run (up to kMaxProcessPanels), else the timeline's
  std::vector<RoleRow> roles;           // every chosen run, when there are several
  std::optional<RunTimeline> timeline;  // the baseline's run, or the first given with --run
  std::optional<ExplainReport> diagnosis;  // of the timeline's run
  std::vector<FlameNode> flame_graphs;      // the timeline's run's CPU profile, one tree per role sampled
  std::vector<std::string> notes;
};
inline constexpr size_t kMaxProcessPanels = 6;

// A profiled run's CPU profile over the whole run, for the Markdown of a table of runs (`--report`,
// `runs --report`).
struct RunProfileSection {
  int64_t run_id = 0;
  std::string label;
  std::optional<ProfileAnalysis> profile;  // none: profiled, but no sample was stored
};
inline constexpr size_t kMaxProfileSections = 10;
// The sections of those runs that were profiled, the last kMaxProfileSections of them.
Result<std::vector<RunProfileSection>> run_profiles(const TraceFile& trace, const std::vector<int64_t>& run_ids);

// --sweep and --run together are bad input.
Status check_selection(const ReportSelection& selection);

// Bad input names the flag: --sweep (not in the file), --run (not in the file, or empty), both at once.
Result<ReportDoc> make_report_doc(const TraceFile& trace, const ReportSelection& selection);

}  // namespace ingero::reports
