// SPDX-License-Identifier: Apache-2.0
// The flame graph (charts.h): one row of frames per stack depth, the root at the bottom.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/render/chart_parts.h"
#include "reports/render/charts.h"

namespace ingero::reports::render {

namespace {

using namespace parts;

constexpr double kFlameWidth = 960;
constexpr double kSide = 12;
constexpr double kRowH = 18;
constexpr double kFramePx = 11;

size_t depth_of(const FlameFrame& frame) {
  size_t deepest = 0;
  for (const FlameFrame& c : frame.children) deepest = std::max(deepest, depth_of(c));
  return deepest + 1;
}

struct Layout {
  const FlameGraph& chart;
  double total = 0;
  double plot_w = 0;
  double base_y = 0;  // the top of the root's row
  std::vector<std::string> colours;
  double hidden = 0;   // samples in frames too narrow to draw
  size_t drawn = 0;
};

std::string colour_of(const Layout& l, const std::string& group) {
  const auto& order = l.chart.group_order;
  const auto it = std::find(order.begin(), order.end(), group);
  const size_t i = it == order.end() ? order.size() : static_cast<size_t>(it - order.begin());
  return l.colours[i % l.colours.size()];
}

void draw(Element& g, Layout& l, const FlameFrame& frame, double x, size_t level) {
  const double w = frame.value / l.total * l.plot_w;
  if (w < l.chart.min_width_px) {
    l.hidden += frame.value;
    return;
  }
  const double y = l.base_y - static_cast<double>(level) * kRowH;
  const std::string fill = level == 0 ? "#d9d9d9" : colour_of(l, frame.group);
  Element cell("g");
  cell.attr("data-frame", frame.name);
  Element box = rect(x, y, std::max(w - 0.5, 0.25), kRowH - 1, fill);
  box.add(tooltip(fmt::format("{}: {} {} ({:.1f} %){}", frame.name, format_value(frame.value), l.chart.unit,
                              100.0 * frame.value / l.total, frame.group.empty() ? "" : ", " + frame.group)));
  cell.add(std::move(box));
  if (w >= 28) {
    const std::string shown = fit_text(frame.name, w - 6, kFramePx);
    if (shown != "…" && !shown.empty())
      cell.add(text(x + 3, y + kRowH - 5, shown).attr("font-size", kFramePx).attr("fill", text_colour_on(fill)));
  }
  g.add(std::move(cell));
  ++l.drawn;
  double child_x = x;
  for (const FlameFrame& c : frame.children) {
    draw(g, l, c, child_x, level + 1);
    child_x += c.value / l.total * l.plot_w;
  }
}

}  // namespace

std::string flame_graph(const FlameGraph& c) {
  Layout l{c, 0, 0, 0, {}, 0, 0};
  l.total = c.root.value;
  l.plot_w = kFlameWidth - 2 * kSide;
  l.colours = categorical_palette();
  Element content("g");
  std::vector<LegendItem> legend;
  for (const std::string& g : c.group_order) legend.push_back({Swatch::fill, colour_of(l, g), g});
  double top = 40;
  if (!legend.empty()) top = add_legend(content, legend, kSide, 46, kFlameWidth - kSide) + 12;
  const size_t depth = l.total > 0 ? depth_of(c.root) : 0;
  l.base_y = top + static_cast<double>(depth > 0 ? depth - 1 : 0) * kRowH;
  double bottom = top;
  if (l.total > 0) {
    Element frames("g");
    frames.attr("data-role", "frames");
    draw(frames, l, c.root, kSide, 0);
    content.add(std::move(frames));
    bottom = l.base_y + kRowH + 16;
  } else {
    content.add(empty_notice(kFlameWidth / 2, top + 20));
    bottom = top + 36;
  }
  std::string caption = c.caption;
  if (l.hidden > 0) {
    // Sums of sample counts are whole; floating-point sums of them are whole again after rounding.
    const double hidden = std::abs(l.hidden - std::round(l.hidden)) < 1e-6 ? std::round(l.hidden) : l.hidden;
    caption += fmt::format("{}{} {} in frames narrower than {} px are not drawn.", caption.empty() ? "" : " ",
                           format_value(hidden), c.unit, svg_number(c.min_width_px));
  }
  const double caption_h = caption.empty() ? 0 : 15.0 * wrap_text(caption, kFlameWidth - 2 * kSide, kSmallPx).size();
  Element root = chart_root("flame-graph", kFlameWidth, bottom + caption_h + 4, c.title, caption);
  root.add(std::move(content));
  add_caption(root, caption, kSide, bottom, kFlameWidth - 2 * kSide);
  return root.str();
}

}  // namespace ingero::reports::render
