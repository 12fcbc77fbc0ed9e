// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reports/render/charts.h"
#include "reports/render/html_page.h"
#include "reports/render/svg.h"

namespace ingero::reports::render {
namespace {

const std::string kHostile = "<script>alert(\"x\")</script> & 'q'";

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

// Every start tag is closed in order: the markup is well-formed as far as elements go.
::testing::AssertionResult balanced(const std::string& markup) {
  std::vector<std::string> open;
  for (size_t at = markup.find('<'); at != std::string::npos; at = markup.find('<', at + 1)) {
    if (markup.compare(at, 2, "<!") == 0) continue;
    const size_t end = markup.find('>', at);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unterminated tag at " << at;
    const std::string tag = markup.substr(at + 1, end - at - 1);
    if (tag.empty()) return ::testing::AssertionFailure() << "empty tag at " << at;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) {
        return ::testing::AssertionFailure() << "</" << tag.substr(1) << "> closes " << (open.empty() ? "nothing" : open.back());
      }
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> never closed";
  return ::testing::AssertionSuccess();
}

// Markup for an HTML page: void elements such as <meta> have no end tag there.
std::string without_void_elements(std::string html) {
  for (size_t at = html.find("<meta"); at != std::string::npos; at = html.find("<meta", at)) {
    html.erase(at, html.find('>', at) - at + 1);
  }
  return html;
}

void expect_no_raw_hostile_text(const std::string& svg) {
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("\"x\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("&amp;"), std::string::npos);
  EXPECT_TRUE(balanced(svg));
}

void expect_chart_root(const std::string& svg, const std::string& kind) {
  EXPECT_EQ(svg.rfind("<svg data-chart=\"" + kind + "\" role=\"img\"", 0), 0u) << svg.substr(0, 80);
  EXPECT_NE(svg.find("<title>"), std::string::npos);
  EXPECT_TRUE(balanced(svg));
}

// ---- svg.h

TEST(Svg, EscapesTextAndAttributes) {
  EXPECT_EQ(escape_xml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(escape_xml(std::string("bell\x07") + "tab\t"), "bell tab\t");
  Element e("text");
  e.attr("data-x", "\"><script>").text("<b>");
  EXPECT_EQ(e.str(), "<text data-x=\"&quot;&gt;&lt;script&gt;\">&lt;b&gt;</text>");
}

TEST(Svg, NumbersAreShortAndLocaleFree) {
  EXPECT_EQ(svg_number(12.5), "12.5");
  EXPECT_EQ(svg_number(3.0), "3");
  EXPECT_EQ(svg_number(-0.001), "0");
  EXPECT_EQ(svg_number(1234567.891), "1234567.89");
  EXPECT_EQ(svg_number(0.105), "0.1");  // 0.105 is 0.10499… as a double
  EXPECT_EQ(svg_number(std::nan("")), "0");
  EXPECT_EQ(svg_number(INFINITY), "0");
}

TEST(Svg, NestsChildrenAndClosesEmptyElements) {
  Element g("g");
  g.add(rect(1, 2, 3, 4, "#fff")).add(Element("title").text("t"));
  EXPECT_EQ(g.str(), "<g><rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"#fff\"/><title>t</title></g>");
}

TEST(Svg, Utf8AwarePrefix) {
  EXPECT_EQ(utf8_length("µs×—"), 4u);
  EXPECT_EQ(utf8_prefix("µs×—", 3), "µs×");
  EXPECT_EQ(utf8_prefix("ab", 5), "ab");
}

TEST(Svg, NamespaceOnlyWhenAskedFor) {
  EXPECT_EQ(with_xml_namespace("<svg a=\"1\"/>"), "<svg xmlns=\"http://www.w3.org/2000/svg\" a=\"1\"/>");
  EXPECT_EQ(heat_map({}).find("xmlns"), std::string::npos);
}

// ---- Ticks, labels, colours

void expect_ticks(double lo, double hi, int max_count, double step, double first, double last) {
  const Ticks t = nice_ticks(lo, hi, max_count);
  SCOPED_TRACE(testing::Message() << "[" << lo << ", " << hi << "] max " << max_count);
  EXPECT_DOUBLE_EQ(t.step, step);
  ASSERT_FALSE(t.values.empty());
  EXPECT_DOUBLE_EQ(t.values.front(), first);
  EXPECT_DOUBLE_EQ(t.values.back(), last);
}

TEST(Ticks, ChoosesOneTwoFiveSteps) {
  expect_ticks(0, 10, 6, 2, 0, 10);
  expect_ticks(0, 1, 6, 0.2, 0, 1);
  expect_ticks(0.83, 2.41, 6, 0.5, 0.5, 2.5);
  expect_ticks(0, 1234567, 5, 500000, 0, 1500000);
  expect_ticks(-3, 7, 6, 5, -5, 10);
  expect_ticks(0, 3, 10, 0.5, 0, 3);
  expect_ticks(7.93, 41.5, 6, 10, 0, 50);
  expect_ticks(0.0021, 0.0094, 5, 0.002, 0.002, 0.01);
}

TEST(Ticks, DegenerateRanges) {
  const Ticks same = nice_ticks(5, 5, 5);
  EXPECT_LE(same.values.front(), 5);
  EXPECT_GE(same.values.back(), 5);
  const Ticks zero = nice_ticks(0, 0, 5);
  EXPECT_LT(zero.values.front(), zero.values.back());
  const Ticks nan = nice_ticks(std::nan(""), 1, 5);
  EXPECT_FALSE(nan.values.empty());
  const Ticks reversed = nice_ticks(10, 0, 6);
  EXPECT_DOUBLE_EQ(reversed.values.front(), 0);
}

TEST(Ticks, AlwaysCoverTheRangeWithinTheCount) {
  for (double lo : {-1234.5, -1.0, 0.0, 0.013, 3.3, 999.0}) {
    for (double width : {0.004, 0.7, 9.0, 55.5, 12345.0, 9.9e8}) {
      for (int max_count : {2, 4, 6, 10}) {
        const Ticks t = nice_ticks(lo, lo + width, max_count);
        SCOPED_TRACE(testing::Message() << lo << " + " << width << " max " << max_count);
        EXPECT_LE(static_cast<int>(t.values.size()), std::max(max_count, 3));
        EXPECT_LE(t.values.front(), lo + 1e-6 * width);  // within rounding of the step
        EXPECT_GE(t.values.back(), lo + width - 1e-6 * width);
        const double exponent = std::floor(std::log10(t.step));
        const double mantissa = t.step / std::pow(10, exponent);
        EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 || std::fabs(mantissa - 5) < 1e-9)
            << t.step;
      }
    }
  }
}

TEST(Ticks, LabelsUseTheStepsDecimalsAndSuffixes) {
  EXPECT_EQ(tick_labels(nice_ticks(0, 1, 6)), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  EXPECT_EQ(tick_labels(nice_ticks(0, 1234567, 5)), (std::vector<std::string>{"0", "0.5M", "1.0M", "1.5M"}));
  EXPECT_EQ(tick_labels(nice_ticks(0, 50000, 6)), (std::vector<std::string>{"0", "10k", "20k", "30k", "40k", "50k"}));
  EXPECT_EQ(tick_labels(nice_ticks(-3, 7, 6)), (std::vector<std::string>{"-5", "0", "5", "10"}));
}

TEST(Values, ThreeSignificantDigits) {
  EXPECT_EQ(format_value(1880), "1880");
  EXPECT_EQ(format_value(12.34), "12.3");
  EXPECT_EQ(format_value(7.93), "7.93");
  EXPECT_EQ(format_value(0.41), "0.41");
  EXPECT_EQ(format_value(0.92), "0.92");
  EXPECT_EQ(format_value(0.0412), "0.041");
  EXPECT_EQ(format_value(22.0), "22");
  EXPECT_EQ(format_value(22.0, false), "22.0");
  EXPECT_EQ(format_value(412.3), "412");
  EXPECT_EQ(format_value(14500), "14.5k");
  EXPECT_EQ(format_value(1048576), "1.05M");
  EXPECT_EQ(format_value(-0.0001), "-0.0001");
  EXPECT_EQ(format_value(-0.0), "0");
  EXPECT_EQ(format_value(0.0, false), "0");
  EXPECT_EQ(format_value(std::nan("")), "—");
}

TEST(Text, FitsWithAnEllipsis) {
  const std::string long_label = "ib-worker-12 (pid 424242, a very long process name)";
  const std::string fitted = fit_text(long_label, 100, 12);
  EXPECT_NE(fitted, long_label);
  EXPECT_EQ(fitted.substr(fitted.size() - std::string("…").size()), "…");
  EXPECT_LE(text_width(fitted, 12), 100);
  EXPECT_EQ(fit_text("main", 100, 12), "main");
  EXPECT_EQ(fit_text("µµµµµµµµµµ", 30, 12).find('\xC2', std::string("µ").size() * 2 + 1), std::string::npos);
}

TEST(Colours, PaletteScaleAndContrast) {
  EXPECT_EQ(categorical_palette().size(), 8u);
  EXPECT_EQ(sequential_colour(0), "#440154");
  EXPECT_EQ(sequential_colour(1), "#fde725");
  EXPECT_EQ(sequential_colour(-3), "#440154");
  EXPECT_EQ(text_colour_on("#440154"), "#ffffff");
  EXPECT_EQ(text_colour_on("#fde725"), "#111111");
  EXPECT_EQ(text_colour_on("#ffffff"), "#111111");
}

// ---- Heat map

HeatMap sweep() {
  HeatMap h;
  h.title = "Epoch time";
  h.x_title = "prefetch_factor";
  h.y_title = "num_workers";
  h.value_title = "epoch time";
  h.unit = "s";
  h.x_labels = {"2", "4", "12"};
  h.y_labels = {"0", "1", "2", "4", "8"};
  h.values = {{38.2, std::nullopt, std::nullopt}, {41.5, 40.9, 41.2}, {22.3, 21.8, 22.0}, {12.6, 11.9, 12.1}, {8.4, 7.9, 8.1}};
  h.marks[{0, 0}] = "baseline";
  h.caption = "median of 3 epochs";
  return h;
}

TEST(HeatMap, OneCellPerConfigurationWithValuesAndMissingCells) {
  const std::string svg = heat_map(sweep());
  expect_chart_root(svg, "heat-map");
  EXPECT_EQ(count(svg, "data-role=\"cell\""), 15u);
  EXPECT_EQ(count(svg, "data-missing=\"true\""), 2u);
  EXPECT_GE(count(svg, ">—<"), 2u);
  EXPECT_EQ(count(svg, "data-role=\"best\""), 1u);
  EXPECT_NE(svg.find(">7.90<"), std::string::npos);
  EXPECT_NE(svg.find(">22.0<"), std::string::npos);  // not a count among 21.8 and 22.3
  EXPECT_NE(svg.find(">41.5<"), std::string::npos);
  EXPECT_NE(svg.find(">baseline<"), std::string::npos);
  EXPECT_NE(svg.find("<desc>median of 3 epochs</desc>"), std::string::npos);
}

TEST(HeatMap, AxisTitlesLegendAndDirection) {
  HeatMap h = sweep();
  std::string svg = heat_map(h);
  EXPECT_NE(svg.find(">prefetch_factor<"), std::string::npos);
  EXPECT_NE(svg.find(">num_workers<"), std::string::npos);
  EXPECT_NE(svg.find(">epoch time (s)<"), std::string::npos);
  EXPECT_NE(svg.find("lower is better"), std::string::npos);
  EXPECT_NE(svg.find("best (lowest)"), std::string::npos);
  EXPECT_NE(svg.find(">no data<"), std::string::npos);
  EXPECT_EQ(count(svg, "data-role=\"colour-scale\""), 1u);
  h.lower_is_better = false;
  svg = heat_map(h);
  EXPECT_NE(svg.find("higher is better"), std::string::npos);
  EXPECT_NE(svg.find("best (highest)"), std::string::npos);
}

TEST(HeatMap, BestCellFollowsTheDirection) {
  HeatMap h;
  h.x_labels = {"a", "b"};
  h.y_labels = {"r"};
  h.values = {{1.0, 2.0}};
  // The outline is drawn at the best cell's x: the first column starts where the grid starts.
  auto best_x = [](const std::string& svg) {
    const size_t at = svg.find("data-role=\"best\"><rect x=\"");
    return std::stod(svg.substr(at + std::string("data-role=\"best\"><rect x=\"").size()));
  };
  h.lower_is_better = true;
  const double low = best_x(heat_map(h));
  h.lower_is_better = false;
  const double high = best_x(heat_map(h));
  EXPECT_LT(low, high);
}

TEST(HeatMap, TextColourContrastsWithEachCell) {
  HeatMap h;
  h.x_labels = {"low", "high"};
  h.y_labels = {"r"};
  h.values = {{0.0, 100.0}};
  const std::string svg = heat_map(h);
  // The darkest cell takes white text, the brightest dark text.
  EXPECT_NE(svg.find("fill=\"#440154\"/><title>"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#ffffff\">0<"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#111111\">100<"), std::string::npos);
}

TEST(HeatMap, HostileLabelsAreEscaped) {
  HeatMap h = sweep();
  h.title = kHostile;
  h.x_labels[0] = kHostile;
  h.y_title = kHostile;
  h.marks[{1, 1}] = kHostile;
  expect_no_raw_hostile_text(heat_map(h));
}

TEST(HeatMap, EmptyAndRaggedInputStillDraws) {
  EXPECT_TRUE(balanced(heat_map({})));
  HeatMap h = sweep();
  h.values.resize(2);
  h.values[1].resize(1);
  const std::string svg = heat_map(h);
  EXPECT_EQ(count(svg, "data-role=\"cell\""), 15u);
  EXPECT_EQ(count(svg, "data-missing=\"true\""), 2u + 2u + 9u);
}

// ---- Interval bars

IntervalBars speedups() {
  IntervalBars b;
  b.title = "Speed-up";
  b.value_title = "speed-up over the baseline";
  b.unit = "×";
  b.interval_label = "95 % interval";
  b.highlight_label = "recommended";
  b.reference = ReferenceLine{1.0, "baseline (1.0×)"};
  b.bars = {{"nw 1", 0.92, 0.88, 0.97, false, ""},
            {"nw 2", 1.75, 1.66, 1.83, false, ""},
            {"nw 8", 4.82, 4.51, 5.12, true, "best"},
            {"nw 8 pf 2", 4.54, std::nullopt, std::nullopt, false, "one run"}};
  return b;
}

TEST(IntervalBars, BarsIntervalsReferenceAndLegend) {
  const std::string svg = interval_bars(speedups());
  expect_chart_root(svg, "interval-bars");
  EXPECT_EQ(count(svg, "data-role=\"bar\""), 4u);
  EXPECT_EQ(count(svg, "data-role=\"interval\""), 3u);
  EXPECT_EQ(count(svg, "data-role=\"reference\""), 1u);
  EXPECT_NE(svg.find(">speed-up over the baseline (×)<"), std::string::npos);
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 3u);  // recommended, others, interval; the line has its label
  EXPECT_NE(svg.find(">95 % interval<"), std::string::npos);
  EXPECT_NE(svg.find(">baseline (1.0×)<"), std::string::npos);
  EXPECT_NE(svg.find("4.82×  [4.51, 5.12]"), std::string::npos);
  EXPECT_NE(svg.find(">one run<"), std::string::npos);
}

TEST(IntervalBars, NoLegendWhereColoursMeanNothing) {
  IntervalBars b;
  b.title = "plain";
  b.bars = {{"a", 1, std::nullopt, std::nullopt, false, ""}, {"b", 2, std::nullopt, std::nullopt, false, ""}};
  const std::string svg = interval_bars(b);
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 0u);
  EXPECT_EQ(count(svg, "data-role=\"bar\""), 2u);
}

TEST(IntervalBars, HostileLabelsAreEscaped) {
  IntervalBars b = speedups();
  b.bars[0].label = kHostile;
  b.bars[1].note = kHostile;
  b.reference->label = kHostile;
  b.value_title = kHostile;
  expect_no_raw_hostile_text(interval_bars(b));
}

TEST(IntervalBars, LongLabelsAreCutWithTheFullTextAsTooltip) {
  IntervalBars b = speedups();
  b.bars[0].label = std::string(120, 'w');
  const std::string svg = interval_bars(b);
  EXPECT_NE(svg.find("…<title>" + std::string(120, 'w') + "</title>"), std::string::npos);
}

// ---- Bar panel

BarPanel processes() {
  BarPanel p;
  p.title = "Per process";
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"main", "main"}, {"ib-pin", "pin"}, {"ib-worker-0", "worker"}, {"ib-worker-1", "worker"}, {"other", "other"}};
  for (const auto& [metric, unit] : std::vector<std::pair<std::string, std::string>>{
           {"context switches", "count"}, {"off-CPU time", "ms"}, {"run-queue time", "ms"}, {"page allocations", "pages"}}) {
    BarChart chart{metric, unit, {}};
    double v = 10;
    for (const auto& [label, group] : rows) chart.rows.push_back({label, v *= 3, group});
    p.charts.push_back(chart);
  }
  return p;
}

TEST(BarPanel, OneBarPerRowAndChartWithSharedLabelsAndOneLegend) {
  BarPanel p = processes();
  p.charts[1].rows.pop_back();               // "other" has no off-CPU row: drawn as "—"
  p.charts[2].rows[0].value = std::nullopt;  // and main no run-queue value
  const std::string svg = bar_panel(p);
  expect_chart_root(svg, "bar-panel");
  EXPECT_EQ(count(svg, "data-role=\"small-chart\""), 4u);
  EXPECT_EQ(count(svg, "data-role=\"bar\""), 4u * 5u - 2u);
  EXPECT_EQ(count(svg, "data-role=\"legend\""), 1u);
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 4u);  // main, pin, worker, other
  EXPECT_EQ(count(svg, ">ib-worker-1<"), 1u);               // one label column for one row of charts
  EXPECT_EQ(count(svg, ">ms<"), 2u);                        // axis titles in each chart's unit
  EXPECT_EQ(count(svg, ">pages<"), 1u);
  EXPECT_EQ(count(svg, ">—<"), 2u);
}

TEST(BarPanel, BarsOfOneGroupShareAColour) {
  const std::string svg = bar_panel(processes());
  const std::string worker = categorical_palette()[2];
  EXPECT_EQ(count(svg, "fill=\"" + worker + "\" data-role=\"bar\">"), 2u * 4u);  // two workers in four charts
}

TEST(BarPanel, GroupOrderKeepsColoursFromPanelToPanel) {
  BarPanel p = processes();
  for (auto& chart : p.charts) chart.rows.erase(chart.rows.begin() + 1);  // no pin thread here
  p.group_order = {"main", "pin", "worker", "other"};
  const std::string svg = bar_panel(p);
  const std::string worker = categorical_palette()[2];
  EXPECT_EQ(count(svg, "fill=\"" + worker + "\" data-role=\"bar\">"), 2u * 4u);  // as with the pin thread present
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 3u);                        // pin is absent from the legend
}

TEST(BarPanel, WrapsMoreThanFourCharts) {
  BarPanel p = processes();
  p.charts.push_back(p.charts[0]);
  const std::string svg = bar_panel(p);
  EXPECT_EQ(count(svg, "data-role=\"small-chart\""), 5u);
  EXPECT_EQ(count(svg, ">ib-worker-1<"), 2u);  // the labels repeat for the second row of charts
}

TEST(BarPanel, HostileLabelsAreEscaped) {
  BarPanel p = processes();
  p.charts[0].rows[0].label = kHostile;
  p.charts[0].rows[1].group = kHostile;
  p.charts[1].title = kHostile;
  p.charts[2].unit = kHostile;
  expect_no_raw_hostile_text(bar_panel(p));
}

// ---- Timeline

Timeline small_timeline() {
  Timeline t;
  t.title = "Run 17";
  t.start_ns = 1'000'000'000;
  t.end_ns = t.start_ns + 3'000'000'000;
  t.categories = {{"CUDA call", "inside a CUDA call"}, {"batch wait", "waiting for a batch"}, {"off-CPU", "sleeping"}};
  Lane main{"main", "pid 1", {}};
  for (int i = 0; i < 10; ++i) {
    const int64_t s = t.start_ns + i * 300'000'000LL;
    main.spans.push_back({s, s + 100'000'000, "batch wait", "next()"});
    main.spans.push_back({s + 20'000'000, s + 60'000'000, "off-CPU", ""});
    main.spans.push_back({s + 120'000'000, s + 130'000'000, "CUDA call", "cudaMemcpyAsync"});
  }
  Lane worker{"ib-worker-0", "", {{t.start_ns + 5'000'000, t.start_ns + 900'000'000, "off-CPU", ""}}};
  t.lanes = {main, worker};
  return t;
}

TEST(Timeline, OneShapePerSpanWhenNothingNeedsMerging) {
  const std::string svg = timeline(small_timeline());
  expect_chart_root(svg, "timeline");
  EXPECT_EQ(count(svg, "data-role=\"lane\""), 2u);
  EXPECT_EQ(count(svg, "data-role=\"span\""), 31u);
  EXPECT_EQ(count(svg, "data-role=\"note\""), 0u);
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 3u);
  EXPECT_NE(svg.find(">time since start (s)<"), std::string::npos);
  EXPECT_NE(svg.find(">CUDA call — inside a CUDA call<"), std::string::npos);
  EXPECT_NE(svg.find("cudaMemcpyAsync — 10 ms from"), std::string::npos);
}

TEST(Timeline, AxisUnitFollowsTheRangeAndStartsAtZero) {
  Timeline t = small_timeline();
  t.end_ns = t.start_ns + 500'000'000;
  std::string svg = timeline(t);
  EXPECT_NE(svg.find(">time since start (ms)<"), std::string::npos);
  EXPECT_NE(svg.find(">0<"), std::string::npos);
  EXPECT_NE(svg.find(">500<"), std::string::npos);
  t.end_ns = t.start_ns + 800'000;
  svg = timeline(t);
  EXPECT_NE(svg.find(">time since start (µs)<"), std::string::npos);
}

TEST(Timeline, ManySpansAreMergedAndBounded) {
  Timeline t = small_timeline();
  Lane busy{"ib-worker-1", "", {}};
  // 200,000 spans of 2 µs, 13 µs apart: far below a pixel at 3 s over ~750 px.
  for (int64_t i = 0; i < 200'000; ++i) {
    const int64_t s = t.start_ns + i * 13'000;
    busy.spans.push_back({s, s + 2'000, i % 2 ? "off-CPU" : "CUDA call", ""});
  }
  t.lanes.push_back(busy);
  t.max_spans_per_lane = 50;
  const std::string svg = timeline(t);
  EXPECT_TRUE(balanced(svg));
  EXPECT_LE(count(svg, "data-role=\"span\""), 3u * 50u);
  EXPECT_EQ(count(svg, "data-role=\"note\""), 1u);
  EXPECT_NE(svg.find("200,031 spans drawn as"), std::string::npos);
  EXPECT_NE(svg.find("spans cover 7.7 % of"), std::string::npos);  // 2 µs in every 26 µs, per category
  EXPECT_LT(svg.size(), 200'000u);
}

TEST(Timeline, CapForcesWiderMerges) {
  Timeline t = small_timeline();
  Lane sparse{"sparse", "", {}};
  // Spans 10 ms apart are several pixels apart: only the cap makes them merge.
  for (int64_t i = 0; i < 300; ++i) sparse.spans.push_back({t.start_ns + i * 10'000'000, t.start_ns + i * 10'000'000 + 1'000'000, "off-CPU", ""});
  t.lanes = {sparse};
  t.max_spans_per_lane = 1000;
  EXPECT_EQ(count(timeline(t), "data-role=\"span\""), 300u);
  t.max_spans_per_lane = 40;
  const std::string svg = timeline(t);
  EXPECT_LE(count(svg, "data-role=\"span\""), 40u);
  EXPECT_NE(svg.find("to keep the drawing small"), std::string::npos);
}

TEST(Timeline, SparseStretchesArePalerThanBusyOnes) {
  Timeline t = small_timeline();
  Lane worker{"ib-worker-0", "", {}};
  // A second asleep, then a second of 20 µs page faults every 500 µs: merged, but not alike.
  worker.spans.push_back({t.start_ns, t.start_ns + 1'000'000'000, "off-CPU", "idle"});
  for (int64_t s = t.start_ns + 1'000'000'000; s < t.start_ns + 2'000'000'000; s += 500'000) {
    worker.spans.push_back({s, s + 20'000, "off-CPU", "page fault"});
  }
  // Long overlapping spans of one category count once per column, never above 100 %.
  for (int i = 0; i < 1000; ++i) worker.spans.push_back({t.start_ns + 2'000'000'000 + i, t.end_ns, "batch wait", ""});
  t.lanes = {worker};
  const std::string svg = timeline(t);
  EXPECT_LE(count(svg, "data-role=\"span\""), 6u);
  EXPECT_NE(svg.find("spans cover 4.0 % of"), std::string::npos);
  EXPECT_NE(svg.find("fill-opacity=\"0.3\""), std::string::npos);
  EXPECT_NE(svg.find("1,000 spans starting here; spans cover 100.0 % of"), std::string::npos);
}

TEST(Timeline, SpansOutsideTheWindowAndUnknownCategories) {
  Timeline t = small_timeline();
  t.lanes[1].spans.push_back({t.start_ns - 50, t.start_ns - 10, "off-CPU", ""});
  t.lanes[1].spans.push_back({t.end_ns - 10, t.end_ns + 1'000'000'000, "page fault", ""});
  const std::string svg = timeline(t);
  EXPECT_EQ(count(svg, "data-role=\"span\""), 32u);
  EXPECT_NE(svg.find("1 span outside the time window is left out."), std::string::npos);
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 4u);
  EXPECT_NE(svg.find(">page fault<"), std::string::npos);
}

TEST(Timeline, HostileLabelsAreEscaped) {
  Timeline t = small_timeline();
  t.lanes[0].label = kHostile;
  t.lanes[0].sublabel = kHostile;
  t.lanes[0].spans[0].tooltip = kHostile;
  t.categories[0].description = kHostile;
  expect_no_raw_hostile_text(timeline(t));
}

// ---- Flame graph

FlameGraph small_flame_graph() {
  FlameGraph f;
  f.title = "Where the CPU went: main threads";
  f.group_order = {"batch building", "model compute", "other"};
  FlameFrame conv{"at::native::_convolution [libtorch_cpu.so]", 60, "model compute", {}};
  FlameFrame forward{"Module._call_impl (modules/module.py:1501)", 60, "model compute", {conv}};
  FlameFrame collate{"default_collate", 30, "batch building", {}};
  FlameFrame train{"train", 100, "other", {collate, forward, {"log_step", 10, "other", {}}}};
  f.root = {"all main samples", 100, "", {{"<module> & <script>", 100, "other", {train}}}};
  return f;
}

TEST(FlameGraph, OneBoxPerFrameWidthBySamplesRootAtTheBottom) {
  const std::string svg = flame_graph(small_flame_graph());
  expect_chart_root(svg, "flame-graph");
  EXPECT_EQ(count(svg, "data-frame=\""), 7u);  // root, <module>, train, its three callees, the convolution
  EXPECT_EQ(count(svg, "data-role=\"legend-entry\""), 3u);
  EXPECT_NE(svg.find("default_collate: 30 samples (30.0 %), batch building"), std::string::npos);
  EXPECT_NE(svg.find("&lt;module&gt; &amp; &lt;script&gt;"), std::string::npos);  // names are escaped
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  // The root spans the plot (936 px) at the bottom row; a callee is above its caller.
  const size_t root = svg.find("data-frame=\"all main samples\"");
  const size_t conv = svg.find("data-frame=\"at::native::_convolution");
  ASSERT_NE(root, std::string::npos);
  ASSERT_NE(conv, std::string::npos);
  auto attr_after = [&](size_t at, const std::string& name) {
    const size_t start = svg.find(" " + name + "=\"", at) + name.size() + 3;
    return std::stod(svg.substr(start, svg.find('"', start) - start));
  };
  EXPECT_GT(attr_after(root, "y"), attr_after(conv, "y"));
  EXPECT_NEAR(attr_after(root, "width"), 936 - 0.5, 0.01);
  EXPECT_NEAR(attr_after(conv, "width"), 936 * 0.6 - 0.5, 0.01);
}

TEST(FlameGraph, FramesTooThinToDrawAreCountedInTheCaption) {
  FlameGraph f = small_flame_graph();
  for (int i = 0; i < 100; ++i) f.root.children[0].children.push_back({"thin", 0.05, "other", {}});
  const std::string svg = flame_graph(f);
  EXPECT_EQ(count(svg, "data-frame=\"thin\""), 0u);
  EXPECT_NE(svg.find("5 samples in frames narrower than 0.5 px are not drawn."), std::string::npos);
}

// ---- Empty input

TEST(EmptyInput, EveryChartSaysNoData) {
  EXPECT_NE(flame_graph(FlameGraph{}).find("no data"), std::string::npos);
  for (const std::string& svg : {heat_map({}), interval_bars({}), bar_panel({}), timeline({})}) {
    EXPECT_TRUE(balanced(svg));
    EXPECT_EQ(count(svg, "data-role=\"empty\""), 1u) << svg.substr(0, 40);
  }
  BarPanel zeros = processes();
  for (auto& row : zeros.charts[0].rows) row.value = 0;
  EXPECT_NE(bar_panel(zeros).find(">1.0<"), std::string::npos);  // an axis from 0 to 1, not -1 to 1
}

// ---- Determinism

TEST(Determinism, SameInputSameBytes) {
  EXPECT_EQ(heat_map(sweep()), heat_map(sweep()));
  EXPECT_EQ(interval_bars(speedups()), interval_bars(speedups()));
  EXPECT_EQ(bar_panel(processes()), bar_panel(processes()));
  EXPECT_EQ(timeline(small_timeline()), timeline(small_timeline()));
}

// ---- HTML page

HtmlPage full_page() {
  HtmlPage page("Report " + kHostile, "subtitle & more");
  page.add_heading("Section <1>");
  page.add_paragraph(kHostile);
  page.add_key_values({{"machine", "16 cores"}, {"key <k>", "value & v"}});
  page.add_table({{"configuration", "epoch time", "samples/s"},
                  {{"nw 0", "38.2 s", "183,246"}, {"nw 8 <x>", "—", "−4"}, {"nw 4", "12.1 s", ""}},
                  "caption",
                  {}});
  page.add_svg(heat_map(sweep()), "figure caption");
  page.add_svg(interval_bars(speedups()));
  page.add_svg(bar_panel(processes()));
  page.add_svg(timeline(small_timeline()));
  page.add_note("note & warning");
  return page;
}

TEST(HtmlPage, CompleteSelfContainedDocument) {
  const std::string html = full_page().render();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("<meta name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  for (const char* external : {"http://", "https://", "src=", "@import", "url(", "<script", "<link"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_EQ(count(html, "<svg data-chart="), 4u);
  EXPECT_EQ(count(html, "<figure>"), 4u);
  EXPECT_NE(html.find("<figcaption>figure caption</figcaption>"), std::string::npos);
  EXPECT_TRUE(balanced(without_void_elements(html)));
}

TEST(HtmlPage, EscapesEveryText) {
  const std::string html = full_page().render();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<title>Report &lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<h2>Section &lt;1&gt;</h2>"), std::string::npos);
  EXPECT_NE(html.find("<dt>key &lt;k&gt;</dt><dd>value &amp; v</dd>"), std::string::npos);
  EXPECT_NE(html.find("<aside class=\"note\">note &amp; warning</aside>"), std::string::npos);
}

TEST(HtmlPage, NumericColumnsAreRightAligned) {
  const std::string html = full_page().render();
  EXPECT_NE(html.find("<th>configuration</th><th class=\"num\">epoch time</th><th class=\"num\">samples/s</th>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>nw 8 &lt;x&gt;</td><td class=\"num\">—</td><td class=\"num\">−4</td>"), std::string::npos);
  EXPECT_TRUE(looks_numeric("−4 %"));
  EXPECT_TRUE(looks_numeric(".5"));
  EXPECT_FALSE(looks_numeric("nw 8"));
  EXPECT_FALSE(looks_numeric("-"));
}

TEST(HtmlPage, ExplicitAlignmentWins) {
  HtmlPage page("t");
  page.add_table({{"a", "b"}, {{"1", "x"}}, "", {false, true}});
  const std::string html = page.render();
  EXPECT_NE(html.find("<td>1</td><td class=\"num\">x</td>"), std::string::npos);
}

TEST(HtmlPage, Deterministic) { EXPECT_EQ(full_page().render(), full_page().render()); }

}  // namespace
}  // namespace ingero::reports::render
