// SPDX-License-Identifier: Apache-2.0
// Heat map, interval bars and bar panel; the timeline is in timeline.cc.
#include "reports/render/charts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/render/chart_parts.h"
#include "reports/render/svg.h"

namespace ingero::reports::render {
namespace {

using parts::add_caption;
using parts::add_legend;
using parts::add_x_axis;
using parts::chart_root;
using parts::kInk;
using parts::kLabelPx;
using parts::kMuted;
using parts::kSmallPx;
using parts::label;
using parts::LegendItem;
using parts::Scale;
using parts::Swatch;
using parts::with_unit;

double widest(const std::vector<std::string>& texts, double font_px) {
  double w = 0;
  for (const auto& t : texts) w = std::max(w, text_width(t, font_px));
  return w;
}

// "1.82×", "12.3 s", "1880": symbols that read as part of the number take no space.
std::string value_with_unit(double value, const std::string& unit, bool whole_numbers) {
  const std::string number = format_value(value, whole_numbers);
  if (unit.empty()) return number;
  if (unit == "×" || unit == "x") return number + "×";
  return number + " " + unit;
}

// Enough ticks for the width, with room for labels such as "1.5M" between them.
int tick_count_for(double plot_width) { return std::clamp(static_cast<int>(plot_width / 75), 2, 8); }

// Whether every value of a chart is a whole number, i.e. the chart shows counts.
bool all_whole(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return v == std::floor(v); });
}

// ---- Heat map

struct HeatLayout {
  double left, grid_top, cell_w, cell_h, legend_x, width;
  bool whole_numbers;
};

std::optional<double> heat_value(const HeatMap& c, size_t row, size_t col) {
  if (row >= c.values.size() || col >= c.values[row].size()) return std::nullopt;
  const auto& v = c.values[row][col];
  return v && std::isfinite(*v) ? v : std::nullopt;
}

std::optional<Cell> best_cell(const HeatMap& c) {
  std::optional<Cell> best;
  std::optional<double> best_value;
  for (size_t r = 0; r < c.y_labels.size(); ++r) {
    for (size_t col = 0; col < c.x_labels.size(); ++col) {
      const auto v = heat_value(c, r, col);
      if (!v) continue;
      const bool better = !best_value || (c.lower_is_better ? *v < *best_value : *v > *best_value);
      if (better) {
        best = Cell{r, col};
        best_value = v;
      }
    }
  }
  return best;
}

HeatLayout heat_layout(const HeatMap& c, bool any_mark) {
  HeatLayout l{};
  // The y title is drawn bold above the row labels, in the same column.
  const double title_w = text_width(c.y_title, kLabelPx) * parts::kBoldWidth;
  const double label_w = std::clamp(std::max(widest(c.y_labels, kLabelPx), title_w), 24.0, 200.0);
  l.left = 12 + label_w + 10;
  l.grid_top = 74;
  std::vector<double> values;
  for (size_t r = 0; r < c.y_labels.size(); ++r) {
    for (size_t col = 0; col < c.x_labels.size(); ++col) {
      if (auto v = heat_value(c, r, col)) values.push_back(*v);
    }
  }
  l.whole_numbers = all_whole(values);
  std::vector<std::string> texts;
  for (double v : values) texts.push_back(format_value(v, l.whole_numbers));
  const double wanted = std::max(widest(c.x_labels, kLabelPx) + 10, widest(texts, 13) + 14);
  // Wide sweeps shrink their cells (labels are cut, with tooltips) rather than the whole chart,
  // which the page would scale down until every text is too small to read.
  constexpr double kMaxWidth = 960;
  const double columns = std::max<double>(1, static_cast<double>(c.x_labels.size()));
  const double room = (kMaxWidth - l.left - 28 - 150) / columns;
  l.cell_w = std::clamp(wanted, std::min(64.0, std::max(room, 48.0)), std::clamp(room, 48.0, 120.0));
  l.cell_h = any_mark ? 46 : 38;
  l.legend_x = l.left + l.cell_w * static_cast<double>(c.x_labels.size()) + 28;
  l.width = std::max(l.legend_x + 150, 480.0);
  return l;
}

void add_heat_cell(Element& grid, const HeatMap& c, const HeatLayout& l, const Scale& colour, size_t r, size_t col) {
  const double x = l.left + l.cell_w * static_cast<double>(col);
  const double y = l.grid_top + l.cell_h * static_cast<double>(r);
  const auto v = heat_value(c, r, col);
  const auto mark = c.marks.find(Cell{r, col});
  const bool marked = mark != c.marks.end() && !mark->second.empty();
  Element cell("g");
  cell.attr("data-role", "cell");
  std::string tip = c.y_title + " " + c.y_labels[r] + ", " + c.x_title + " " + c.x_labels[col] + ": ";
  std::string ink = parts::kMuted;
  if (v) {
    const std::string fill = sequential_colour(colour(*v));
    ink = text_colour_on(fill);
    cell.add(rect(x + 1, y + 1, l.cell_w - 2, l.cell_h - 2, fill));
    tip += value_with_unit(*v, c.unit, l.whole_numbers);
  } else {
    cell.attr("data-missing", "true");
    cell.add(rect(x + 1, y + 1, l.cell_w - 2, l.cell_h - 2, parts::kMissingFill));
    parts::add_hatch(cell, x + 1, y + 1, l.cell_w - 2, l.cell_h - 2, 7, parts::kMissingHatch);
    tip += "no data";
  }
  if (marked) tip += " (" + mark->second + ")";
  cell.add(tooltip(tip));
  const double centre = x + l.cell_w / 2;
  const double value_y = y + l.cell_h / 2 + (marked ? 0 : 5);
  Element value = label(centre, value_y, v ? format_value(*v, l.whole_numbers) : "—", l.cell_w - 8, 13, "middle");
  cell.add(std::move(value.attr("fill", ink)));
  if (marked) {
    cell.add(label(centre, y + l.cell_h - 8, mark->second, l.cell_w - 8, 10, "middle").attr("fill", ink));
  }
  grid.add(std::move(cell));
}

// Two strokes, dark outside and white inside, so the outline shows on light and dark cells alike.
void add_best_outline(Element& root, const HeatLayout& l, const Cell& best) {
  const double x = l.left + l.cell_w * static_cast<double>(best.second);
  const double y = l.grid_top + l.cell_h * static_cast<double>(best.first);
  Element outline("g");
  outline.attr("data-role", "best");
  outline.add(rect(x, y, l.cell_w, l.cell_h, "none").attr("stroke", "#000000").attr("stroke-width", 3));
  outline.add(rect(x + 2.5, y + 2.5, l.cell_w - 5, l.cell_h - 5, "none").attr("stroke", "#ffffff").attr("stroke-width", 1.5));
  root.add(std::move(outline));
}

// The colour bar: value ticks beside a stack of thin rects (no gradient, so no id to clash).
double add_colour_legend(Element& root, const HeatMap& c, const HeatLayout& l, const Ticks& ticks, double bar_h) {
  Element legend("g");
  legend.attr("data-role", "colour-scale");
  // Up to two lines above the bar, in the rows of the axis titles; the rest is cut, with a tooltip.
  const std::string title = with_unit(c.value_title, c.unit);
  const double title_w = l.width - l.legend_x - 8;
  std::vector<std::string> lines = parts::wrap_text(title, title_w, kLabelPx);
  if (lines.size() > 2) {
    std::string rest;
    for (size_t i = 1; i < lines.size(); ++i) rest += (i > 1 ? " " : "") + lines[i];
    lines = {lines[0], fit_text(rest, title_w, kLabelPx)};
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    Element line_text = text(l.legend_x, l.grid_top - 8 - 18.0 * static_cast<double>(lines.size() - 1 - i), lines[i]);
    if (lines.size() > 1 || lines[0] != title) line_text.add(tooltip(title));
    legend.add(std::move(line_text));
  }
  constexpr int kSteps = 48;
  const double top = l.grid_top;
  for (int i = 0; i < kSteps; ++i) {
    const double t = (i + 0.5) / kSteps;
    legend.add(rect(l.legend_x, top + bar_h * (1 - (i + 1.0) / kSteps), 14, bar_h / kSteps + 0.5, sequential_colour(t)));
  }
  const Scale to_y{ticks.values.front(), ticks.values.back(), top + bar_h, top};
  const auto labels = tick_labels(ticks);
  for (size_t i = 0; i < ticks.values.size(); ++i) {
    const double y = to_y(ticks.values[i]);
    legend.add(line(l.legend_x + 14, y, l.legend_x + 18, y, parts::kAxis));
    legend.add(text(l.legend_x + 22, y + 4, labels[i]).attr("font-size", kSmallPx).attr("fill", kMuted));
  }
  legend.add(text(l.legend_x, top + bar_h + 18, c.lower_is_better ? "lower is better" : "higher is better")
                 .attr("font-size", kSmallPx).attr("fill", kMuted));
  root.add(std::move(legend));
  return top + bar_h + 18;
}

}  // namespace

std::string heat_map(const HeatMap& c) {
  bool any_mark = false;
  bool any_missing = false;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (size_t r = 0; r < c.y_labels.size(); ++r) {
    for (size_t col = 0; col < c.x_labels.size(); ++col) {
      const auto v = heat_value(c, r, col);
      any_missing = any_missing || !v;
      if (v) {
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
      }
    }
  }
  for (const auto& [cell, tag] : c.marks) any_mark = any_mark || !tag.empty();
  if (!(lo <= hi)) lo = hi = 0;
  const HeatLayout l = heat_layout(c, any_mark);
  const double grid_h = l.cell_h * static_cast<double>(c.y_labels.size());
  const double bar_h = std::max(grid_h, 120.0);
  const Ticks ticks = nice_ticks(lo, hi, std::clamp(static_cast<int>(bar_h / 30), 3, 6));
  const Scale colour{ticks.values.front(), ticks.values.back(), 0, 1};

  // Height: the grid or the colour legend with its entries, whichever is taller, then the caption.
  const double legend_bottom = l.grid_top + bar_h + 18 + 22 + (any_missing ? 20 : 0);
  const double body_bottom = std::max(l.grid_top + grid_h, legend_bottom) + 24;
  const double caption_px = l.width - 24;
  const double caption_h = c.caption.empty() ? 0 : 15.0 * parts::wrap_text(c.caption, caption_px, kSmallPx).size();
  Element root = chart_root("heat-map", l.width, body_bottom + caption_h + 8, c.title, c.caption);

  const double grid_w = l.cell_w * static_cast<double>(c.x_labels.size());
  root.add(label(l.left + grid_w / 2, 48, c.x_title, grid_w + 40, kLabelPx, "middle", true)
               .attr("data-role", "axis-title"));
  root.add(label(l.left - 10, 66, c.y_title, l.left - 22, kLabelPx, "end", true).attr("data-role", "axis-title"));
  for (size_t col = 0; col < c.x_labels.size(); ++col) {
    const double centre = l.left + l.cell_w * (static_cast<double>(col) + 0.5);
    root.add(label(centre, 66, c.x_labels[col], l.cell_w - 6, kLabelPx, "middle"));
  }
  for (size_t r = 0; r < c.y_labels.size(); ++r) {
    const double baseline = l.grid_top + l.cell_h * (static_cast<double>(r) + 0.5) + 4;
    root.add(label(l.left - 10, baseline, c.y_labels[r], l.left - 22, kLabelPx, "end"));
  }
  Element grid("g");
  grid.attr("data-role", "cells");
  for (size_t r = 0; r < c.y_labels.size(); ++r) {
    for (size_t col = 0; col < c.x_labels.size(); ++col) add_heat_cell(grid, c, l, colour, r, col);
  }
  root.add(std::move(grid));
  const auto best = best_cell(c);
  if (best) add_best_outline(root, l, *best);
  if (c.x_labels.empty() || c.y_labels.empty()) root.add(parts::empty_notice(l.left + 40, l.grid_top + 24));

  const double below_bar = add_colour_legend(root, c, l, ticks, bar_h);
  std::vector<LegendItem> entries;
  if (best) entries.push_back({Swatch::outline, "#000000", c.lower_is_better ? "best (lowest)" : "best (highest)"});
  if (any_missing) entries.push_back({Swatch::hatched, "", "no data"});
  double y = below_bar + 22;
  for (const auto& entry : entries) {
    add_legend(root, {entry}, l.legend_x, y, l.width - 8);
    y += 20;
  }
  add_caption(root, c.caption, 12, body_bottom + 4, caption_px);
  return root.str();
}

// ---- Interval bars

namespace {

constexpr const char* kBarColour = "#56b4e9";
constexpr const char* kHighlightColour = "#e69f00";
constexpr const char* kWhiskerColour = "#1a1a1a";

struct Domain {
  double lo = 0, hi = 0;
  void include(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Bars start at zero; with nothing but zeros the axis still needs a length.
  Ticks ticks(int max_count) const { return nice_ticks(lo, hi == lo ? lo + 1 : hi, max_count); }
};

std::string interval_text(const IntervalBar& b, const std::string& unit, bool whole) {
  std::string s = value_with_unit(b.value, unit, whole);
  if (b.low && b.high) s += "  [" + format_value(*b.low, whole) + ", " + format_value(*b.high, whole) + "]";
  return s;
}

void add_interval_row(Element& root, const IntervalBars& c, const IntervalBar& b, const Scale& x, double row_top,
                      double row_h, double right_edge, bool whole) {
  constexpr double kBarH = 16;
  const double cy = row_top + row_h / 2;
  const double x0 = x(0);
  const double x1 = x(b.value);
  Element bar = rect(std::min(x0, x1), cy - kBarH / 2, std::fabs(x1 - x0), kBarH, b.highlight ? kHighlightColour : kBarColour);
  bar.attr("data-role", "bar");
  std::string tip = b.label + ": " + interval_text(b, c.unit, whole);
  if (!b.note.empty()) tip += " — " + b.note;
  bar.add(tooltip(tip));
  root.add(std::move(bar));
  double text_x = std::max(x0, x1);
  if (b.low && b.high) {
    const double lo = x(*b.low);
    const double hi = x(*b.high);
    Element whisker("g");
    whisker.attr("data-role", "interval");
    whisker.add(line(lo, cy, hi, cy, kWhiskerColour, 1.5));
    whisker.add(line(lo, cy - 6, lo, cy + 6, kWhiskerColour, 1.5));
    whisker.add(line(hi, cy - 6, hi, cy + 6, kWhiskerColour, 1.5));
    whisker.add(tooltip(tip));
    root.add(std::move(whisker));
    text_x = std::max(text_x, std::max(lo, hi));
  }
  text_x += 8;
  const std::string value_text = interval_text(b, c.unit, whole);
  const double room = right_edge - text_x;
  root.add(label(text_x, cy + 4, value_text, room, kSmallPx, "start", b.highlight));
  const double used = text_width(value_text, kSmallPx) + 10;
  if (!b.note.empty() && room - used > 30) {
    root.add(label(text_x + used, cy + 4, b.note, room - used, kSmallPx).attr("fill", kMuted));
  }
}

}  // namespace

std::string interval_bars(const IntervalBars& c) {
  constexpr double kWidth = 800;
  constexpr double kRowH = 28;
  std::vector<std::string> labels;
  std::vector<double> values;
  Domain d;
  bool any_interval = false;
  bool any_highlight = false;
  for (const auto& b : c.bars) {
    labels.push_back(b.label);
    values.push_back(b.value);
    if (b.low) values.push_back(*b.low);
    if (b.high) values.push_back(*b.high);
    any_interval = any_interval || (b.low && b.high);
    any_highlight = any_highlight || b.highlight;
  }
  for (double v : values) d.include(v);
  if (c.reference) d.include(c.reference->value);
  const bool whole = all_whole(values);
  const double left = 12 + std::clamp(widest(labels, kLabelPx), 40.0, 220.0) + 10;
  const double plot_right = kWidth - 190;

  Element content("g");
  std::vector<LegendItem> legend;
  if (any_highlight) {
    legend.push_back({Swatch::fill, kHighlightColour, c.highlight_label});
    legend.push_back({Swatch::fill, kBarColour, "others"});
  }
  if (any_interval) legend.push_back({Swatch::whisker, kWhiskerColour, c.interval_label});
  // The reference line carries its own label; a legend entry would only repeat it.
  if (c.reference && c.reference->label.empty()) legend.push_back({Swatch::dashed, kInk, "reference"});
  double plot_top = 48;
  if (!legend.empty()) plot_top = add_legend(content, legend, 12, 46, kWidth - 12) + 20;
  if (c.reference && !c.reference->label.empty()) plot_top += 16;

  const Ticks ticks = d.ticks(tick_count_for(plot_right - left));
  const Scale x{ticks.values.front(), ticks.values.back(), left, plot_right};
  // One empty row for no bars, so that the "no data" notice sits above the axis.
  const double plot_bottom = plot_top + kRowH * static_cast<double>(std::max<size_t>(c.bars.size(), 1));
  add_x_axis(content, x, ticks, plot_bottom + 4, plot_top - 4, with_unit(c.value_title, c.unit));
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const double row_top = plot_top + kRowH * static_cast<double>(i);
    content.add(label(left - 10, row_top + kRowH / 2 + 4, c.bars[i].label, left - 22, kLabelPx, "end",
                      c.bars[i].highlight));
    add_interval_row(content, c, c.bars[i], x, row_top, kRowH, kWidth - 12, whole);
  }
  if (c.reference) {
    const double rx = x(c.reference->value);
    Element ref("g");
    ref.attr("data-role", "reference");
    ref.add(line(rx, plot_top - 8, rx, plot_bottom + 4, kInk, 1.5).attr("stroke-dasharray", "5 4"));
    // Centred over the line, but kept inside the plot so that it is never cut at the chart's edge.
    const double half = text_width(c.reference->label, kSmallPx) / 2;
    const double lx = std::clamp(rx, left + half, kWidth - 12 - half);
    ref.add(label(lx, plot_top - 12, c.reference->label, kWidth - 24, kSmallPx, "middle"));
    content.add(std::move(ref));
  }
  if (c.bars.empty()) content.add(parts::empty_notice((left + plot_right) / 2, plot_top + 16));
  const double caption_top = plot_bottom + 4 + 56;
  const double caption_h = c.caption.empty() ? 0 : 15.0 * parts::wrap_text(c.caption, kWidth - 24, kSmallPx).size();
  Element root = chart_root("interval-bars", kWidth, caption_top + caption_h, c.title, c.caption);
  root.add(std::move(content));
  add_caption(root, c.caption, 12, caption_top, kWidth - 24);
  return root.str();
}

// ---- Bar panel

namespace {

constexpr double kPanelW = 170;
constexpr double kPanelGap = 22;
constexpr double kPanelRowH = 20;

struct SharedRows {
  std::vector<std::string> labels;  // in order of first appearance over all charts
  std::vector<std::string> groups;  // group of each label, from its first row that names one
  std::vector<std::string> group_order;   // the legend: groups present, the panel's order first
  std::vector<std::string> colour_order;  // the panel's groups, present or not, then the others
};

SharedRows shared_rows(const BarPanel& c) {
  SharedRows s;
  for (const auto& chart : c.charts) {
    for (const auto& row : chart.rows) {
      auto it = std::find(s.labels.begin(), s.labels.end(), row.label);
      if (it == s.labels.end()) {
        s.labels.push_back(row.label);
        s.groups.push_back(row.group);
      } else if (s.groups[static_cast<size_t>(it - s.labels.begin())].empty()) {
        s.groups[static_cast<size_t>(it - s.labels.begin())] = row.group;
      }
    }
  }
  const auto add_once = [](std::vector<std::string>& list, const std::string& g) {
    if (std::find(list.begin(), list.end(), g) == list.end()) list.push_back(g);
  };
  for (const auto& g : c.group_order) {
    add_once(s.colour_order, g);
    if (std::find(s.groups.begin(), s.groups.end(), g) != s.groups.end()) add_once(s.group_order, g);
  }
  for (const auto& g : s.groups) {
    add_once(s.group_order, g);
    add_once(s.colour_order, g);
  }
  return s;
}

std::string group_colour(const SharedRows& s, const std::string& group) {
  const auto& palette = categorical_palette();
  const auto it = std::find(s.colour_order.begin(), s.colour_order.end(), group);
  return palette[static_cast<size_t>(it - s.colour_order.begin()) % palette.size()];
}

std::optional<double> chart_value(const BarChart& chart, const std::string& label) {
  for (const auto& row : chart.rows) {
    if (row.label == label) return row.value && std::isfinite(*row.value) ? row.value : std::nullopt;
  }
  return std::nullopt;
}

// One small chart: title, bars for every shared row, an axis in the chart's unit.
void add_small_chart(Element& root, const BarChart& chart, const SharedRows& s, double x0, double top) {
  Element g("g");
  g.attr("data-role", "small-chart");
  g.add(label(x0, top + 14, chart.title, kPanelW, kLabelPx, "start", true));
  const double plot_top = top + 26;
  const double plot_w = kPanelW - 46;
  Domain d;
  std::vector<double> values;
  for (const auto& l : s.labels) {
    if (auto v = chart_value(chart, l)) values.push_back(*v);
  }
  for (double v : values) d.include(v);
  const bool whole = all_whole(values);
  const Ticks ticks = d.ticks(4);
  const Scale x{ticks.values.front(), ticks.values.back(), x0, x0 + plot_w};
  const double axis_y = plot_top + kPanelRowH * static_cast<double>(s.labels.size()) + 2;
  add_x_axis(g, x, ticks, axis_y, plot_top - 2, chart.unit.empty() ? "value" : chart.unit, 10);
  for (size_t i = 0; i < s.labels.size(); ++i) {
    const double cy = plot_top + kPanelRowH * (static_cast<double>(i) + 0.5);
    const auto v = chart_value(chart, s.labels[i]);
    if (!v) {
      g.add(text(x(0) + 4, cy + 4, "—").attr("font-size", kSmallPx).attr("fill", kMuted));
      continue;
    }
    const double a = x(0);
    const double b = x(*v);
    Element bar = rect(std::min(a, b), cy - 6.5, std::fabs(b - a), 13, group_colour(s, s.groups[i]));
    bar.attr("data-role", "bar");
    bar.add(tooltip(s.labels[i] + " — " + chart.title + ": " + value_with_unit(*v, chart.unit, whole)));
    g.add(std::move(bar));
    g.add(label(std::max(a, b) + 4, cy + 4, format_value(*v, whole), x0 + kPanelW - std::max(a, b) - 4, kSmallPx));
  }
  root.add(std::move(g));
}

}  // namespace

std::string bar_panel(const BarPanel& c) {
  const SharedRows s = shared_rows(c);
  const size_t n = c.charts.size();
  const size_t cols = std::clamp<size_t>(n, 1, 4);
  const size_t panel_rows = (n + cols - 1) / cols;
  const double label_w = std::clamp(widest(s.labels, kLabelPx), 40.0, 200.0);
  const double first_x = 12 + label_w + 12;
  const double width = std::max(first_x + static_cast<double>(cols) * (kPanelW + kPanelGap) - kPanelGap + 12, 480.0);
  const double rows_h = kPanelRowH * static_cast<double>(s.labels.size());
  const double panel_h = 26 + rows_h + 2 + 48;

  Element content("g");
  std::vector<LegendItem> legend;
  for (const auto& g : s.group_order) legend.push_back({Swatch::fill, group_colour(s, g), g.empty() ? "other" : g});
  double top = 40;
  if (!legend.empty()) top = add_legend(content, legend, 12, 46, width - 12) + 10;
  for (size_t pr = 0; pr < panel_rows; ++pr) {
    const double plot_top = top + 26;
    // Shaded every other row so that a row can be followed across the charts.
    for (size_t i = 0; i < s.labels.size(); ++i) {
      const double row_top = plot_top + kPanelRowH * static_cast<double>(i);
      if (i % 2 == 1) content.add(rect(8, row_top, width - 16, kPanelRowH, "#f5f5f5"));
      content.add(label(first_x - 12, row_top + kPanelRowH / 2 + 4, s.labels[i], label_w, kLabelPx, "end"));
    }
    for (size_t k = 0; k < cols && pr * cols + k < n; ++k) {
      add_small_chart(content, c.charts[pr * cols + k], s, first_x + static_cast<double>(k) * (kPanelW + kPanelGap), top);
    }
    top += panel_h;
  }
  if (s.labels.empty()) {
    content.add(parts::empty_notice(width / 2, top + 20));
    top += 36;
  }
  const double caption_h = c.caption.empty() ? 0 : 15.0 * parts::wrap_text(c.caption, width - 24, kSmallPx).size();
  Element root = chart_root("bar-panel", width, top + caption_h + 4, c.title, c.caption);
  root.add(std::move(content));
  add_caption(root, c.caption, 12, top, width - 24);
  return root.str();
}

}  // namespace ingero::reports::render
