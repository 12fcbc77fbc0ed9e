// SPDX-License-Identifier: Apache-2.0
// Building blocks shared by the charts: the root element, fitted labels, scales, axes and legends.
// Internal to reports/render; the public choices (ticks, colours, text fitting) are in charts.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/render/charts.h"
#include "reports/render/svg.h"

namespace ingero::reports::render::parts {

// One look for every chart; the page's CSS does not need to know about them.
inline constexpr const char* kFontFamily =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', "
    "'DejaVu Sans', sans-serif";
inline constexpr const char* kInk = "#1a1a1a";
inline constexpr const char* kMuted = "#555555";
inline constexpr const char* kAxis = "#8a8a8a";
inline constexpr const char* kGrid = "#e4e4e4";
inline constexpr const char* kMissingFill = "#eeeeee";
inline constexpr const char* kMissingHatch = "#b8b8b8";
inline constexpr double kTitlePx = 15;
inline constexpr double kLabelPx = 12;
inline constexpr double kSmallPx = 11;
inline constexpr double kTitleBaseline = 22;
// Bold glyphs run about a tenth wider than the regular ones text_width estimates.
inline constexpr double kBoldWidth = 1.12;

// "epoch time (s)"; the title alone when there is no unit.
std::string with_unit(const std::string& title, const std::string& unit);

// Text cut to max_px; the full text becomes its tooltip when it had to be cut.
Element label(double x, double y, const std::string& full, double max_px, double font_px,
              std::string_view anchor = "start", bool bold = false);

// Greedy word wrap on estimated widths; a word longer than a line is cut.
std::vector<std::string> wrap_text(const std::string& text, double max_px, double font_px);

// Root <svg> with kind, accessible name, size and font; the chart title drawn at the top left.
Element chart_root(std::string_view kind, double width, double height, const std::string& title,
                   const std::string& caption);

// Wrapped caption lines from y (baseline of the first line); returns the y after the last line.
double add_caption(Element& root, const std::string& caption, double x, double y, double max_px);

// Maps a domain interval onto pixels.
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  double operator()(double v) const { return d1 == d0 ? r0 : r0 + (v - d0) / (d1 - d0) * (r1 - r0); }
};

// Horizontal axis at y with tick marks and labels below, and vertical grid lines from grid_top to y.
void add_x_axis(Element& root, const Scale& x, const Ticks& ticks, double y, double grid_top,
                const std::string& title, double font_px = kSmallPx);

// Legend swatch kinds.
enum class Swatch { fill, whisker, outline, hatched, dashed };

struct LegendItem {
  Swatch swatch = Swatch::fill;
  std::string colour;
  std::string text;
};

// Items in a row starting at (x, y baseline), wrapping at max_x; returns the baseline of the last row.
double add_legend(Element& root, const std::vector<LegendItem>& items, double x, double y, double max_x);

// "no data" centred at (x, y), for a chart drawn from empty input.
Element empty_notice(double x, double y);

// Diagonal lines filling a rectangle, clipped by hand so that no <pattern> id can clash with another
// chart on the same page.
void add_hatch(Element& group, double x, double y, double width, double height, double spacing,
               std::string_view colour);

}  // namespace ingero::reports::render::parts
