// SPDX-License-Identifier: Apache-2.0
// The thread timeline: one lane per thread, one band per category inside each lane, so that spans
// of different categories (a CUDA call inside a batch wait) never hide each other.
#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "reports/text/format.h"
#include "reports/render/chart_parts.h"
#include "reports/render/charts.h"
#include "reports/render/svg.h"

namespace ingero::reports::render {
namespace {

using parts::kLabelPx;
using parts::kMuted;
using parts::kSmallPx;
using parts::label;
using parts::Scale;

constexpr double kTimelineWidth = 960;
constexpr double kLabelW = 170;
constexpr double kLeft = 12 + kLabelW + 12;
constexpr double kRight = kTimelineWidth - 20;

// One shape to draw: a span as given, or the spans of one category over a run of pixel columns
// that they cover to a similar degree.
struct Shape {
  int64_t start = 0;
  int64_t end = 0;
  size_t category = 0;
  int level = 4;                         // coverage level, 4 = solid (see coverage_level)
  size_t spans = 1;                      // spans that start inside the shape
  int64_t covered_ns = 0;                // time inside spans
  const std::string* tooltip = nullptr;  // a single span's own text
};

struct Clipped {
  int64_t start;
  int64_t end;
  const std::string* tooltip;
};

struct LaneShapes {
  std::vector<Shape> shapes;
  size_t spans = 0;    // inside the window
  size_t outside = 0;  // left out: entirely outside the window or inverted
  double bin_ns = 0;   // a pixel column, or wider where the cap needed it
};

// The given categories, then any name a span uses that is not among them, in order of first use.
std::vector<Category> all_categories(const Timeline& t) {
  std::vector<Category> cats = t.categories;
  for (const auto& lane : t.lanes) {
    for (const auto& span : lane.spans) {
      auto same = [&](const Category& c) { return c.name == span.category; };
      if (std::find_if(cats.begin(), cats.end(), same) == cats.end()) cats.push_back({span.category, ""});
    }
  }
  return cats;
}

size_t category_index(const std::vector<Category>& cats, const std::string& name) {
  for (size_t i = 0; i < cats.size(); ++i) {
    if (cats[i].name == name) return i;
  }
  return 0;
}

// Four steps from "a trace of a span" to solid: enough to tell a busy stretch from a sprinkle of
// short events, few enough that equal neighbours join into one shape.
int coverage_level(double share, bool any_span) {
  if (share >= 0.999) return 4;
  if (share >= 0.5) return 3;
  if (share >= 0.15) return 2;
  return share > 0 || any_span ? 1 : 0;
}

double level_opacity(int level) {
  static constexpr double kOpacity[] = {0, 0.3, 0.55, 0.8, 1};
  return kOpacity[std::clamp(level, 0, 4)];
}

// Time is binned in columns of bin_ns from the window's start.
struct Bins {
  int64_t origin;
  double bin_ns;
  int64_t of(int64_t t) const { return static_cast<int64_t>(std::floor(static_cast<double>(t - origin) / bin_ns)); }
  int64_t start_of(int64_t bin) const { return origin + static_cast<int64_t>(std::llround(static_cast<double>(bin) * bin_ns)); }
  int64_t last_of(const Clipped& s) const { return of(std::max(s.end - 1, s.start)); }
};

// Spans of one category closer together than a column, drawn column by column as runs of equal
// coverage: 1,000 page faults of 20 µs over a second are a pale strip, a second asleep a solid one.
void add_density_runs(const Clipped* first, const Clipped* last, const Bins& bins, size_t category,
                      std::vector<Shape>& out) {
  const int64_t b0 = bins.of(first->start);
  int64_t b1 = b0;
  int64_t group_end = first->end;
  for (const Clipped* s = first; s != last; ++s) {
    b1 = std::max(b1, bins.last_of(*s));
    group_end = std::max(group_end, s->end);
  }
  const size_t n = static_cast<size_t>(b1 - b0 + 1);
  std::vector<int64_t> covered(n, 0);
  std::vector<size_t> starts(n, 0);
  // Spans that fill whole columns are counted with a difference array, so that long, overlapping
  // spans cost O(1) each rather than a loop over every column they cross.
  std::vector<int64_t> full(n + 1, 0);
  for (const Clipped* s = first; s != last; ++s) {
    const auto i = static_cast<size_t>(bins.of(s->start) - b0);
    const auto j = static_cast<size_t>(bins.last_of(*s) - b0);
    ++starts[i];
    if (i == j) {
      covered[i] += s->end - s->start;
      continue;
    }
    covered[i] += bins.start_of(b0 + static_cast<int64_t>(i) + 1) - s->start;
    covered[j] += s->end - bins.start_of(b0 + static_cast<int64_t>(j));
    ++full[i + 1];
    --full[j];
  }
  int64_t spanning = 0;
  for (size_t i = 0; i < n; ++i) {
    spanning += full[i];
    const int64_t b = b0 + static_cast<int64_t>(i);
    covered[i] += spanning * (bins.start_of(b + 1) - bins.start_of(b));
  }
  std::optional<Shape> run;
  auto close = [&] {
    if (run) out.push_back(*run);
    run.reset();
  };
  for (int64_t b = b0; b <= b1; ++b) {
    const size_t i = static_cast<size_t>(b - b0);
    const int64_t column_start = std::max(first->start, bins.start_of(b));
    const int64_t column_end = std::min(group_end, bins.start_of(b + 1));
    const double share = static_cast<double>(covered[i]) / static_cast<double>(std::max<int64_t>(column_end - column_start, 1));
    const int level = coverage_level(share, starts[i] > 0);
    if (level == 0 || !run || run->level != level) close();
    if (level == 0) continue;
    if (!run) run = Shape{column_start, column_end, category, level, 0, 0, nullptr};
    run->end = column_end;
    run->spans += starts[i];
    run->covered_ns += covered[i];
  }
  close();
}

// Shapes for one category's spans, sorted by start: a span alone stays itself (with its tooltip),
// spans closer than a column to each other become density runs.
void add_category_shapes(const std::vector<Clipped>& sorted, const Bins& bins, size_t category, std::vector<Shape>& out) {
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    int64_t end = sorted[i].end;
    while (j < sorted.size() && static_cast<double>(sorted[j].start - end) < bins.bin_ns) end = std::max(end, sorted[j++].end);
    if (j == i + 1) {
      const Clipped& s = sorted[i];
      out.push_back(Shape{s.start, s.end, category, 4, 1, s.end - s.start, s.tooltip});
    } else {
      add_density_runs(&sorted[i], sorted.data() + j, bins, category, out);
    }
    i = j;
  }
}

LaneShapes lane_shapes(const Lane& lane, const Timeline& t, const std::vector<Category>& cats, double ns_per_px) {
  LaneShapes out;
  std::vector<std::vector<Clipped>> by_category(cats.size());
  for (const Span& span : lane.spans) {
    if (span.end_ns < span.start_ns || span.end_ns < t.start_ns || span.start_ns > t.end_ns) {
      ++out.outside;
      continue;
    }
    by_category[category_index(cats, span.category)].push_back(
        {std::max(span.start_ns, t.start_ns), std::min(span.end_ns, t.end_ns), &span.tooltip});
    ++out.spans;
  }
  for (auto& spans : by_category) {
    std::stable_sort(spans.begin(), spans.end(), [](const Clipped& a, const Clipped& b) {
      return std::tie(a.start, a.end) < std::tie(b.start, b.end);
    });
  }
  // Columns of one pixel lose nothing a reader could see; wider ones only when the cap asks for them.
  const size_t cap = std::max(t.max_spans_per_lane, cats.size());
  const double range = static_cast<double>(t.end_ns - t.start_ns);
  for (out.bin_ns = std::max(ns_per_px, 1.0);; out.bin_ns *= 2) {
    out.shapes.clear();
    const Bins bins{t.start_ns, out.bin_ns};
    for (size_t c = 0; c < by_category.size(); ++c) add_category_shapes(by_category[c], bins, c, out.shapes);
    if (out.shapes.size() <= cap || out.bin_ns >= range) break;
  }
  return out;
}

struct TimeUnit {
  double ns;
  const char* name;
};

// Seconds for runs of a few seconds and more, milliseconds below, microseconds for tiny windows.
TimeUnit time_unit(int64_t range_ns) {
  if (range_ns >= 2'000'000'000) return {1e9, "s"};
  if (range_ns >= 2'000'000) return {1e6, "ms"};
  return {1e3, "µs"};
}

std::string shape_tooltip(const Shape& s, const std::vector<Category>& cats, int64_t origin) {
  const std::string& category = cats[s.category].name;
  const std::string length = format_duration_ns(static_cast<double>(s.end - s.start));
  const std::string at = " from " + format_duration_ns(static_cast<double>(s.start - origin));
  if (s.tooltip != nullptr) {
    return (s.tooltip->empty() ? category : category + ": " + *s.tooltip) + " — " + length + at;
  }
  const double share = static_cast<double>(s.covered_ns) / static_cast<double>(std::max<int64_t>(s.end - s.start, 1));
  const std::string starting = s.spans > 0 ? format_count(static_cast<int64_t>(s.spans)) + " spans starting here; " : "";
  return category + " — " + starting + "spans cover " + format_percent(std::min(share, 1.0)) + " of " + length + at;
}

struct LaneGeometry {
  double top;
  double height;
  double band_h;
};

void add_lane(Element& root, const Lane& lane, const LaneShapes& shapes, const LaneGeometry& g,
              const Scale& x, const std::vector<Category>& cats, int64_t origin) {
  Element group("g");
  group.attr("data-role", "lane");
  const double middle = g.top + g.height / 2;
  const bool two_lines = !lane.sublabel.empty();
  group.add(label(kLeft - 12, two_lines ? middle - 2 : middle + 4, lane.label, kLabelW, kLabelPx, "end", true));
  if (two_lines) {
    group.add(label(kLeft - 12, middle + 11, lane.sublabel, kLabelW, 10, "end").attr("fill", kMuted));
  }
  const auto& palette = categorical_palette();
  for (const Shape& s : shapes.shapes) {
    const double x0 = x(static_cast<double>(s.start - origin));
    // At least a pixel wide, or short calls would vanish at the scale of a whole run.
    const double w = std::max(x(static_cast<double>(s.end - origin)) - x0, 1.0);
    const double y = g.top + 4 + g.band_h * static_cast<double>(s.category);
    Element r = rect(x0, y, w, g.band_h - 1, palette[s.category % palette.size()]);
    r.attr("data-role", "span");
    if (s.level < 4) r.attr("fill-opacity", level_opacity(s.level));
    r.add(tooltip(shape_tooltip(s, cats, origin)));
    group.add(std::move(r));
  }
  root.add(std::move(group));
}

std::string merge_note(size_t spans, size_t shapes, size_t outside, double bin_ns, double ns_per_px) {
  std::string note;
  if (shapes < spans) {
    const double columns = std::round(bin_ns / ns_per_px);
    note = fmt::format(
        "{} spans drawn as {} shapes: where spans of one category are less than {} ({}) apart, they are "
        "drawn column by column, paler where they cover less of the column's time.",
        format_count(static_cast<int64_t>(spans)), format_count(static_cast<int64_t>(shapes)), format_duration_ns(bin_ns),
        columns <= 1 ? std::string("a pixel") : fmt::format("{:.0f} pixels, to keep the drawing small", columns));
  }
  if (outside > 0) {
    if (!note.empty()) note += " ";
    note += format_count(static_cast<int64_t>(outside)) +
            (outside == 1 ? " span outside the time window is left out." : " spans outside the time window are left out.");
  }
  return note;
}

}  // namespace

std::string timeline(const Timeline& t) {
  const std::vector<Category> cats = all_categories(t);
  const int64_t origin = t.start_ns;
  // An empty or inverted window still gets an axis (of a second) so that the chart keeps its shape.
  const int64_t range = t.end_ns > t.start_ns ? t.end_ns - t.start_ns : 1'000'000'000;
  const double plot_w = kRight - kLeft;
  const double ns_per_px = static_cast<double>(range) / plot_w;

  Element content("g");
  std::vector<parts::LegendItem> legend;
  const auto& palette = categorical_palette();
  for (size_t i = 0; i < cats.size(); ++i) {
    const std::string text = cats[i].description.empty() ? cats[i].name : cats[i].name + " — " + cats[i].description;
    legend.push_back({parts::Swatch::fill, palette[i % palette.size()], text});
  }
  const double plot_top = (legend.empty() ? 40 : parts::add_legend(content, legend, 12, 46, kTimelineWidth - 12)) + 18;

  const double band_h = 9;
  const double lane_h = std::max(28.0, 8 + band_h * static_cast<double>(cats.size()));
  const double plot_bottom = plot_top + (t.lanes.empty() ? 28 : lane_h * static_cast<double>(t.lanes.size()));
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    // Every other lane shaded, so that a lane's label and its spans are read together.
    const double top = plot_top + lane_h * static_cast<double>(i);
    content.add(rect(8, top, kTimelineWidth - 16, lane_h, i % 2 == 0 ? "#f6f6f6" : "#ffffff"));
  }

  const TimeUnit unit = time_unit(range);
  const double range_in_unit = static_cast<double>(range) / unit.ns;
  Ticks ticks = nice_ticks(0, range_in_unit, std::clamp(static_cast<int>(plot_w / 80), 2, 10));
  // The axis ends where the window ends; ticks past it would stretch the plot into empty time.
  ticks.values.erase(std::remove_if(ticks.values.begin(), ticks.values.end(),
                                    [&](double v) { return v > range_in_unit * (1 + 1e-9); }),
                     ticks.values.end());
  parts::add_x_axis(content, Scale{0, range_in_unit, kLeft, kRight}, ticks, plot_bottom + 2, plot_top,
                    std::string("time since start (") + unit.name + ")");

  const Scale x{0, static_cast<double>(range), kLeft, kRight};
  size_t spans = 0, shapes = 0, outside = 0;
  double widest_bin = 0;
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const LaneShapes s = lane_shapes(t.lanes[i], t, cats, ns_per_px);
    spans += s.spans;
    shapes += s.shapes.size();
    outside += s.outside;
    widest_bin = std::max(widest_bin, s.bin_ns);
    const LaneGeometry g{plot_top + lane_h * static_cast<double>(i), lane_h, band_h};
    add_lane(content, t.lanes[i], s, g, x, cats, origin);
  }

  if (shapes == 0) content.add(parts::empty_notice((kLeft + kRight) / 2, plot_top + 18));
  double bottom = plot_bottom + 2 + 52;
  const std::string note = merge_note(spans, shapes, outside, widest_bin, ns_per_px);
  if (!note.empty()) {
    Element lines("g");
    lines.attr("data-role", "note");
    for (const auto& l : parts::wrap_text(note, kTimelineWidth - 24, kSmallPx)) {
      lines.add(text(12, bottom, l).attr("font-size", kSmallPx).attr("fill", kMuted));
      bottom += 15;
    }
    content.add(std::move(lines));
    bottom += 4;
  }
  const double caption_h = t.caption.empty() ? 0 : 15.0 * parts::wrap_text(t.caption, kTimelineWidth - 24, kSmallPx).size();
  Element root = parts::chart_root("timeline", kTimelineWidth, bottom + caption_h, t.title, t.caption);
  root.add(std::move(content));
  parts::add_caption(root, t.caption, 12, bottom, kTimelineWidth - 24);
  return root.str();
}

}  // namespace ingero::reports::render
