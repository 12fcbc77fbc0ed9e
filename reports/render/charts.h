// SPDX-License-Identifier: Apache-2.0
// Charts for the HTML report, drawn as inline SVG from plain data: a heat map over two
// configuration axes, bars with intervals, small multiples of bar charts, and a thread timeline.
// Each function returns one "<svg ...>" element with data-chart="<kind>", role="img" and a <title>;
// the same input always gives the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ingero::reports::render {

// ---- Heat map: one value per (y, x) configuration, e.g. epoch time over num_workers × prefetch_factor.

using Cell = std::pair<size_t, size_t>;  // (row = index into y_labels, column = index into x_labels)

struct HeatMap {
  std::string title;
  std::string x_title;      // "prefetch_factor"
  std::string y_title;      // "num_workers"
  std::string value_title;  // "epoch time"
  std::string unit;         // "s"
  std::vector<std::string> x_labels;
  std::vector<std::string> y_labels;
  std::vector<std::vector<std::optional<double>>> values;  // values[row][column]; missing: no run
  bool lower_is_better = true;
  std::map<Cell, std::string> marks;  // short tags drawn in the cell: "baseline", "default"
  std::string caption;
};

std::string heat_map(const HeatMap& chart);

// ---- Horizontal bars with intervals, e.g. speed-up over a baseline with a confidence interval.

struct IntervalBar {
  std::string label;
  double value = 0;
  std::optional<double> low;   // the interval, when known
  std::optional<double> high;
  bool highlight = false;      // drawn in the accent colour, e.g. the recommended configuration
  std::string note;            // short text after the value: "n = 5", "not significant"
};

struct ReferenceLine {
  double value = 1.0;
  std::string label;  // "baseline (1.0×)"
};

struct IntervalBars {
  std::string title;
  std::string value_title;  // "speed-up over the baseline"
  std::string unit;         // "×"
  std::vector<IntervalBar> bars;
  std::optional<ReferenceLine> reference;
  std::string interval_label = "interval";    // legend text for the whiskers: "95 % interval"
  std::string highlight_label = "highlighted";  // legend text for highlighted bars: "recommended"
  std::string caption;
};

std::string interval_bars(const IntervalBars& chart);

// ---- Small multiples: one horizontal bar chart per metric, rows shared by label, bars coloured by group.

struct BarRow {
  std::string label;             // "ib-worker-0 (pid 4242)"
  std::optional<double> value;   // missing: drawn as "—"
  std::string group;             // "main", "worker", "pin", "other": one colour each
};

struct BarChart {
  std::string title;  // "context switches"
  std::string unit;   // "count", "ms", "pages"
  std::vector<BarRow> rows;
};

struct BarPanel {
  std::string title;
  std::vector<BarChart> charts;
  std::string caption;
  // Groups in colour and legend order, so that a group keeps its colour from panel to panel even where
  // another is absent; groups not listed follow in order of first use. Only groups present are in the legend.
  std::vector<std::string> group_order;
};

std::string bar_panel(const BarPanel& chart);

// ---- Timeline: one lane per thread, spans coloured by category, time from start_ns as 0.

struct Span {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string category;  // a Category::name; unknown names get a colour and a legend entry of their own
  std::string tooltip;   // "cudaMemcpyAsync 4.1 MB"; the duration and start are appended
};

struct Lane {
  std::string label;     // "main (tid 4242)"
  std::string sublabel;  // "python3, pid 4242"
  std::vector<Span> spans;
};

struct Category {
  std::string name;         // "CUDA call"
  std::string description;  // "time inside a CUDA runtime or driver call"
};

struct Timeline {
  std::string title;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<Lane> lanes;
  std::vector<Category> categories;  // legend order and colour order
  std::string caption;
  // Spans of one category closer than a pixel are merged and drawn pixel column by column, paler
  // where they cover less of the column; if a lane still needs more shapes than this, the columns
  // widen until it fits, so a trace of millions of events stays drawable. A note says how many merged.
  size_t max_spans_per_lane = 1500;
};

std::string timeline(const Timeline& chart);

// ---- Flame graph: stacks merged into a tree, the root at the bottom, each frame as wide as its share
// of the samples, children left to right in the order given; coloured by group.

struct FlameFrame {
  std::string name;
  double value = 0;    // samples through this frame (at least its children's sum)
  std::string group;   // colour and legend: "batch building", "model", "other"
  std::vector<FlameFrame> children;
};

struct FlameGraph {
  std::string title;
  std::string unit = "samples";
  FlameFrame root;                      // its name labels the bottom bar ("all main-thread samples")
  std::vector<std::string> group_order;  // legend and colour order
  std::string caption;
  double min_width_px = 0.5;  // narrower frames are left out, and a note counts their samples
};

std::string flame_graph(const FlameGraph& chart);

// ---- Pieces shared by the charts, public so that their choices can be tested.

struct Ticks {
  double step = 1;
  std::vector<double> values;  // from a multiple of step at or below lo to one at or above hi
};

// Steps of 1, 2 or 5 × 10^k, the smallest that needs at most max_count (at least 3) ticks to cover
// [lo, hi].
Ticks nice_ticks(double lo, double hi, int max_count = 6);

// Tick text with as many decimals as the step needs, large values as "250k", "1.5M".
std::vector<std::string> tick_labels(const Ticks& ticks);

// A value for a cell or bar label: three significant digits with at most two decimals ("0.92",
// "7.93", "22.0", "412"), from 10,000 on with a suffix ("12.3k", "1.05M"), below 0.1 two significant
// digits ("0.041"). With whole_numbers, integral values have no decimals ("1880"): pass false
// when a chart's values are not all counts, so that 22.0 does not read as a count among 21.8 and 22.3.
std::string format_value(double value, bool whole_numbers = true);

// Estimated width of text in a sans-serif font; errs on the wide side so that labels fit.
double text_width(const std::string& text, double font_px);

// Cuts text to max_px with a trailing "…"; returns the text unchanged when it fits.
std::string fit_text(const std::string& text, double max_px, double font_px);

// Colour-blind safe categorical colours (Okabe–Ito), in a fixed order.
const std::vector<std::string>& categorical_palette();

// Sequential scale (viridis) for t in [0, 1], "#rrggbb".
std::string sequential_colour(double t);

// "#111111" or "#ffffff", whichever contrasts more with the fill "#rrggbb".
std::string text_colour_on(const std::string& fill);

}  // namespace ingero::reports::render
