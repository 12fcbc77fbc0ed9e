// SPDX-License-Identifier: Apache-2.0
#include "reports/render/chart_parts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace ingero::reports::render {
namespace {

// 10^n for a small n >= 0, exact in a double up to 10^22.
double power_of_ten(int n) {
  double p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// i × mantissa × 10^exponent computed so that 0.1-steps come out as the nearest double to the
// decimal value (3 × 0.1 would give 0.30000000000000004).
double tick_value(int64_t i, int mantissa, int exponent) {
  const double whole = static_cast<double>(i) * mantissa;
  return exponent >= 0 ? whole * power_of_ten(exponent) : whole / power_of_ten(-exponent);
}

// A formatted number that rounds to zero must not keep its minus sign ("-0.0").
std::string drop_negative_zero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_of("123456789") == std::string::npos) s.erase(0, 1);
  return s;
}

struct Magnitude {
  double scale;
  const char* suffix;
};

// Large values are written with a suffix so that axis and bar labels stay short.
Magnitude magnitude_of(double largest) {
  if (largest >= 1e9) return {1e9, "G"};
  if (largest >= 1e6) return {1e6, "M"};
  if (largest >= 1e4) return {1e3, "k"};
  return {1, ""};
}

struct Rgb {
  double r, g, b;
};

Rgb parse_hex(const std::string& hex) {
  auto channel = [&](size_t at) {
    if (hex.size() < at + 2) return 0.0;
    return static_cast<double>(std::stoi(hex.substr(at, 2), nullptr, 16));
  };
  return {channel(1), channel(3), channel(5)};
}

// WCAG relative luminance of an sRGB colour.
double luminance(const Rgb& c) {
  auto linear = [](double v) {
    v /= 255.0;
    return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

double contrast(double l1, double l2) {
  return (std::max(l1, l2) + 0.05) / (std::min(l1, l2) + 0.05);
}

// Approximate advance widths in em of a wide sans-serif (DejaVu Sans is the widest common one, and
// the one a bare Linux has); overestimating only cuts a label earlier than needed.
double char_em(uint32_t c) {
  if (c == ' ' || c == '.' || c == ',' || c == ':' || c == ';' || c == '\'' || c == '|' || c == '!' ||
      c == 'i' || c == 'j' || c == 'l' || c == '(' || c == ')' || c == '[' || c == ']') {
    return 0.36;
  }
  if (c == 'f' || c == 't' || c == 'r' || c == 'I' || c == '-' || c == '/') return 0.45;
  if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '@' || c == '%') return 0.95;
  if (c >= 'A' && c <= 'Z') return 0.74;
  if (c >= '0' && c <= '9') return 0.64;
  if (c < 0x80) return 0.62;
  return 0.8;  // "µ", "×", "—", "…" and letters of other scripts
}

}  // namespace

Ticks nice_ticks(double lo, double hi, int max_count) {
  // A range across zero needs three ticks (-s, 0, s) whatever the step; fewer could never fit.
  max_count = std::max(max_count, 3);
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    lo = 0;
    hi = 1;
  }
  if (lo > hi) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  static constexpr std::array<int, 3> kMantissas = {1, 2, 5};
  int exponent = static_cast<int>(std::floor(std::log10((hi - lo) / max_count))) - 1;
  for (;; ++exponent) {
    for (int mantissa : kMantissas) {
      const double step = tick_value(1, mantissa, exponent);
      // The epsilon keeps a bound that is a multiple of the step (up to rounding) from adding a tick.
      const auto first = static_cast<int64_t>(std::floor(lo / step + 1e-9));
      const auto last = static_cast<int64_t>(std::ceil(hi / step - 1e-9));
      if (last - first + 1 > max_count) continue;
      Ticks ticks;
      ticks.step = step;
      for (int64_t i = first; i <= last; ++i) ticks.values.push_back(tick_value(i, mantissa, exponent));
      return ticks;
    }
  }
}

std::vector<std::string> tick_labels(const Ticks& ticks) {
  double largest = 0;
  for (double v : ticks.values) largest = std::max(largest, std::fabs(v));
  const Magnitude m = magnitude_of(largest);
  const double scaled_step = ticks.step / m.scale;
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(scaled_step) - 1e-9)));
  std::vector<std::string> labels;
  for (double v : ticks.values) {
    // A bare "0" reads better than "0.0M" at the origin.
    labels.push_back(v == 0 ? "0" : drop_negative_zero(fmt::format("{:.{}f}", v / m.scale, decimals)) + m.suffix);
  }
  return labels;
}

std::string format_value(double value, bool whole_numbers) {
  if (!std::isfinite(value)) return "—";
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e4) {
    const Magnitude m = magnitude_of(magnitude);
    const double scaled = magnitude / m.scale;
    const int decimals = scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2;
    return drop_negative_zero(fmt::format("{:.{}f}", value / m.scale, decimals)) + m.suffix;
  }
  // Counts read best without decimals; a measured 22.0 s among 21.8 s and 22.3 s keeps its decimal.
  if (whole_numbers && value == std::floor(value)) return drop_negative_zero(fmt::format("{:.0f}", value));
  if (magnitude < 0.1 && magnitude > 0) return drop_negative_zero(fmt::format("{:.2g}", value));
  // Three significant digits, but no more than two decimals: "0.92", "7.93", "22.0", "412".
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(magnitude))), 0, 2);
  return drop_negative_zero(fmt::format("{:.{}f}", value, decimals));
}

double text_width(const std::string& text, double font_px) {
  double em = 0;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    em += char_em(lead < 0x80 ? lead : 0x80);
    i += length;
  }
  return em * font_px;
}

std::string fit_text(const std::string& text, double max_px, double font_px) {
  if (text_width(text, font_px) <= max_px) return text;
  static const std::string kEllipsis = "…";
  for (size_t keep = utf8_length(text); keep > 0; --keep) {
    std::string candidate = utf8_prefix(text, keep - 1);
    while (!candidate.empty() && candidate.back() == ' ') candidate.pop_back();
    candidate += kEllipsis;
    if (text_width(candidate, font_px) <= max_px) return candidate;
  }
  return kEllipsis;
}

const std::vector<std::string>& categorical_palette() {
  // Okabe & Ito, ordered so that the first five are the most distinct from each other and from a
  // white background: vermillion comes after orange's look-alikes are used up, yellow late because
  // it is faint on white.
  static const std::vector<std::string> kPalette = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                                    "#56b4e9", "#d55e00", "#f0e442", "#7f7f7f"};
  return kPalette;
}

std::string sequential_colour(double t) {
  // viridis: perceptually uniform, readable in grey and by the common colour-vision deficiencies.
  static const std::vector<Rgb> kStops = {{68, 1, 84},    {72, 40, 120},  {62, 74, 137},
                                          {49, 104, 142}, {38, 130, 142}, {31, 158, 137},
                                          {53, 183, 121}, {109, 205, 89}, {180, 222, 44},
                                          {253, 231, 37}};
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0);
  const double position = t * static_cast<double>(kStops.size() - 1);
  const size_t index = std::min(static_cast<size_t>(position), kStops.size() - 2);
  const double f = position - static_cast<double>(index);
  const Rgb& a = kStops[index];
  const Rgb& b = kStops[index + 1];
  auto mix = [f](double x, double y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
}

std::string text_colour_on(const std::string& fill) {
  const double l = luminance(parse_hex(fill));
  const double dark = luminance({17, 17, 17});
  return contrast(l, 1.0) >= contrast(l, dark) ? "#ffffff" : "#111111";
}

namespace parts {

std::string with_unit(const std::string& title, const std::string& unit) {
  return unit.empty() ? title : title + " (" + unit + ")";
}

Element label(double x, double y, const std::string& full, double max_px, double font_px, std::string_view anchor,
              bool bold) {
  const std::string shown = fit_text(full, bold ? max_px / kBoldWidth : max_px, font_px);
  Element e = text(x, y, shown, anchor);
  if (font_px != kLabelPx) e.attr("font-size", font_px);
  if (bold) e.attr("font-weight", "bold");
  if (shown != full) e.add(tooltip(full));
  return e;
}

std::vector<std::string> wrap_text(const std::string& text, double max_px, double font_px) {
  std::vector<std::string> lines;
  std::string current;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    const std::string joined = current.empty() ? word : current + " " + word;
    if (text_width(joined, font_px) <= max_px || current.empty()) {
      current = joined;
    } else {
      lines.push_back(current);
      current = word;
    }
  }
  if (!current.empty()) lines.push_back(current);
  for (auto& l : lines) l = fit_text(l, max_px, font_px);
  return lines;
}

Element chart_root(std::string_view kind, double width, double height, const std::string& title,
                   const std::string& caption) {
  Element root("svg");
  root.attr("data-chart", kind).attr("role", "img");
  root.attr("width", std::ceil(width)).attr("height", std::ceil(height));
  root.attr("viewBox", "0 0 " + svg_number(std::ceil(width)) + " " + svg_number(std::ceil(height)));
  // Scales down with the page instead of overflowing a narrow window.
  root.attr("style", "max-width:100%;height:auto");
  root.attr("font-family", kFontFamily).attr("font-size", kLabelPx).attr("fill", kInk);
  root.add(tooltip(title));
  if (!caption.empty()) root.add(Element("desc").text(caption));
  root.add(rect(0, 0, std::ceil(width), std::ceil(height), "#ffffff"));
  root.add(label(12, kTitleBaseline, title, width - 24, kTitlePx, "start", true));
  return root;
}

double add_caption(Element& root, const std::string& caption, double x, double y, double max_px) {
  if (caption.empty()) return y;
  double baseline = y;
  for (const std::string& l : wrap_text(caption, max_px, kSmallPx)) {
    root.add(text(x, baseline, l).attr("font-size", kSmallPx).attr("fill", kMuted));
    baseline += 15;
  }
  return baseline;
}

void add_x_axis(Element& root, const Scale& x, const Ticks& ticks, double y, double grid_top,
                const std::string& title, double font_px) {
  Element axis("g");
  axis.attr("data-role", "x-axis");
  const std::vector<std::string> labels = tick_labels(ticks);
  for (size_t i = 0; i < ticks.values.size(); ++i) {
    const double px = x(ticks.values[i]);
    axis.add(line(px, grid_top, px, y, kGrid));
    axis.add(line(px, y, px, y + 4, kAxis));
    axis.add(text(px, y + 16, labels[i], "middle").attr("font-size", font_px).attr("fill", kMuted));
  }
  axis.add(line(x.r0, y, x.r1, y, kAxis));
  const double middle = (x.r0 + x.r1) / 2;
  axis.add(label(middle, y + 34, title, std::fabs(x.r1 - x.r0) + 40, kLabelPx, "middle").attr("data-role", "axis-title"));
  root.add(std::move(axis));
}

namespace {

Element swatch(const LegendItem& item, double x, double y) {
  Element g("g");
  switch (item.swatch) {
    case Swatch::fill:
      g.add(rect(x, y, 12, 12, item.colour));
      break;
    case Swatch::whisker:
      g.add(line(x, y + 6, x + 14, y + 6, item.colour, 1.5));
      g.add(line(x, y + 2, x, y + 10, item.colour, 1.5));
      g.add(line(x + 14, y + 2, x + 14, y + 10, item.colour, 1.5));
      break;
    case Swatch::outline:
      g.add(rect(x + 1, y + 1, 11, 11, "none").attr("stroke", item.colour).attr("stroke-width", 2.5));
      break;
    case Swatch::hatched:
      g.add(rect(x, y, 12, 12, kMissingFill));
      add_hatch(g, x, y, 12, 12, 4, kMissingHatch);
      break;
    case Swatch::dashed:
      g.add(line(x + 6, y - 2, x + 6, y + 14, item.colour, 1.5).attr("stroke-dasharray", "4 3"));
      break;
  }
  return g;
}

}  // namespace

double add_legend(Element& root, const std::vector<LegendItem>& items, double x, double y, double max_x) {
  Element legend("g");
  legend.attr("data-role", "legend");
  double cursor = x;
  double baseline = y;
  for (const LegendItem& item : items) {
    const double text_px = std::min(text_width(item.text, kLabelPx), max_x - x - 20);
    const double advance = 18 + text_px + 18;
    if (cursor > x && cursor + advance - 18 > max_x) {
      cursor = x;
      baseline += 18;
    }
    Element entry = swatch(item, cursor, baseline - 10);
    entry.attr("data-role", "legend-entry");
    entry.add(label(cursor + 18, baseline, item.text, text_px, kLabelPx));
    legend.add(std::move(entry));
    cursor += advance;
  }
  root.add(std::move(legend));
  return baseline;
}

Element empty_notice(double x, double y) {
  return text(x, y, "no data", "middle").attr("fill", kMuted).attr("font-style", "italic").attr("data-role", "empty");
}

void add_hatch(Element& group, double x, double y, double width, double height, double spacing,
               std::string_view colour) {
  // Lines u + v = c in cell coordinates, from the top or right edge to the left or bottom edge.
  for (double c = spacing; c < width + height; c += spacing) {
    const double u1 = std::min(c, width);
    const double v1 = c - u1;
    const double v2 = std::min(c, height);
    const double u2 = c - v2;
    group.add(line(x + u1, y + v1, x + u2, y + v2, colour));
  }
}

}  // namespace parts
}  // namespace ingero::reports::render
