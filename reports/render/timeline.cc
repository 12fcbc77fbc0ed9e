// The thread timeline: one lane per thread, one band per category inside each lane, so that spans
// of different categories (a CUDA call inside a batch wait) never hide each other.
#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "reports/format.h"
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

constexpr double kWidth = 960;
constexpr double kLabelW = 170;
constexpr double kLeft = 12 + kLabelW + 12;
constexpr double kRight = kWidth - 20;

// One shape to draw: a span as given, or several spans of one category merged.
struct Shape {
  int64_t start = 0;
  int64_t end = 0;
  size_t category = 0;
  size_t count = 1;      // spans it stands for
  int64_t sum_ns = 0;    // their summed durations
  std::string tooltip;   // of the first span
};

struct LaneShapes {
  std::vector<Shape> shapes;
  size_t spans = 0;    // inside the window
  size_t outside = 0;  // left out: entirely outside the window or inverted
  int64_t gap_ns = 0;  // the merge gap that was needed
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

// Joins shapes of one category whose gap is below gap_ns; the input is sorted by category, then start.
std::vector<Shape> merge(const std::vector<Shape>& sorted, int64_t gap_ns) {
  std::vector<Shape> out;
  for (const Shape& s : sorted) {
    if (!out.empty() && out.back().category == s.category && s.start - out.back().end < gap_ns) {
      Shape& last = out.back();
      last.end = std::max(last.end, s.end);
      last.count += s.count;
      last.sum_ns += s.sum_ns;
    } else {
      out.push_back(s);
    }
  }
  return out;
}

LaneShapes lane_shapes(const Lane& lane, const Timeline& t, const std::vector<Category>& cats, double ns_per_px) {
  LaneShapes out;
  std::vector<Shape> clipped;
  for (const Span& span : lane.spans) {
    if (span.end_ns < span.start_ns || span.end_ns < t.start_ns || span.start_ns > t.end_ns) {
      ++out.outside;
      continue;
    }
    Shape s;
    s.start = std::max(span.start_ns, t.start_ns);
    s.end = std::min(span.end_ns, t.end_ns);
    s.category = category_index(cats, span.category);
    s.sum_ns = s.end - s.start;
    s.tooltip = span.tooltip;
    clipped.push_back(std::move(s));
  }
  out.spans = clipped.size();
  std::stable_sort(clipped.begin(), clipped.end(), [](const Shape& a, const Shape& b) {
    return std::tie(a.category, a.start, a.end) < std::tie(b.category, b.start, b.end);
  });
  // "Closer than one pixel" is invisible anyway; merging it loses nothing a reader could see.
  out.gap_ns = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ns_per_px)));
  out.shapes = merge(clipped, out.gap_ns);
  const size_t cap = std::max(t.max_spans_per_lane, cats.size());
  const int64_t range = t.end_ns - t.start_ns;
  while (out.shapes.size() > cap && out.gap_ns <= range) {
    out.gap_ns *= 2;
    out.shapes = merge(out.shapes, out.gap_ns);
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
  const std::string at = " from " + format_duration_ns(static_cast<double>(s.start - origin));
  if (s.count == 1) {
    const std::string what = s.tooltip.empty() ? category : category + ": " + s.tooltip;
    return what + " — " + format_duration_ns(static_cast<double>(s.end - s.start)) + at;
  }
  return category + " — " + format_count(static_cast<int64_t>(s.count)) + " spans merged over " +
         format_duration_ns(static_cast<double>(s.end - s.start)) + " (" +
         format_duration_ns(static_cast<double>(s.sum_ns)) + " in spans)" + at;
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
  group.add(label(kLeft - 12, two_lines ? middle - 2 : middle + 4, lane.label, kLabelW, kLabelPx, "end")
                .attr("font-weight", "bold"));
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
    r.add(tooltip(shape_tooltip(s, cats, origin)));
    group.add(std::move(r));
  }
  root.add(std::move(group));
}

std::string merge_note(size_t spans, size_t shapes, size_t outside, int64_t max_gap_ns, double ns_per_px) {
  std::string note;
  if (shapes < spans) {
    note = fmt::format("{} spans drawn as {} shapes: spans of one category less than {} apart are merged",
                       format_count(static_cast<int64_t>(spans)), format_count(static_cast<int64_t>(shapes)),
                       format_duration_ns(static_cast<double>(max_gap_ns)));
    note += static_cast<double>(max_gap_ns) > ns_per_px * 1.5 ? " (to keep the drawing small)." : " (one pixel).";
  }
  if (outside > 0) {
    if (!note.empty()) note += " ";
    note += fmt::format("{} spans outside the time window are left out.", format_count(static_cast<int64_t>(outside)));
  }
  return note;
}

}  // namespace

std::string timeline(const Timeline& t) {
  const std::vector<Category> cats = all_categories(t);
  const int64_t origin = t.start_ns;
  const int64_t range = std::max<int64_t>(t.end_ns - t.start_ns, 1);
  const double plot_w = kRight - kLeft;
  const double ns_per_px = static_cast<double>(range) / plot_w;

  Element content("g");
  std::vector<parts::LegendItem> legend;
  const auto& palette = categorical_palette();
  for (size_t i = 0; i < cats.size(); ++i) {
    const std::string text = cats[i].description.empty() ? cats[i].name : cats[i].name + " — " + cats[i].description;
    legend.push_back({parts::Swatch::kFill, palette[i % palette.size()], text});
  }
  const double plot_top = (legend.empty() ? 40 : parts::add_legend(content, legend, 12, 46, kWidth - 12)) + 18;

  const double band_h = 9;
  const double lane_h = std::max(28.0, 8 + band_h * static_cast<double>(cats.size()));
  const double plot_bottom = plot_top + lane_h * static_cast<double>(t.lanes.size());
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    // Every other lane shaded, so that a lane's label and its spans are read together.
    const double top = plot_top + lane_h * static_cast<double>(i);
    content.add(rect(8, top, kWidth - 16, lane_h, i % 2 == 0 ? "#f6f6f6" : "#ffffff"));
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
  int64_t max_gap = 0;
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const LaneShapes s = lane_shapes(t.lanes[i], t, cats, ns_per_px);
    spans += s.spans;
    shapes += s.shapes.size();
    outside += s.outside;
    max_gap = std::max(max_gap, s.gap_ns);
    const LaneGeometry g{plot_top + lane_h * static_cast<double>(i), lane_h, band_h};
    add_lane(content, t.lanes[i], s, g, x, cats, origin);
  }

  double bottom = plot_bottom + 2 + 52;
  const std::string note = merge_note(spans, shapes, outside, max_gap, ns_per_px);
  if (!note.empty()) {
    for (const auto& l : parts::wrap_text(note, kWidth - 24, kSmallPx)) {
      content.add(text(12, bottom, l).attr("font-size", kSmallPx).attr("fill", kMuted).attr("data-role", "note"));
      bottom += 15;
    }
    bottom += 4;
  }
  const double caption_h = t.caption.empty() ? 0 : 15.0 * parts::wrap_text(t.caption, kWidth - 24, kSmallPx).size();
  Element root = parts::chart_root("timeline", kWidth, bottom + caption_h, t.title, t.caption);
  root.add(std::move(content));
  parts::add_caption(root, t.caption, 12, bottom, kWidth - 24);
  return root.str();
}

}  // namespace ingero::reports::render
