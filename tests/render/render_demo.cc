// SPDX-License-Identifier: Apache-2.0
// Writes an HTML page with one chart of each kind, from numbers shaped like a real sweep of the
// loader over num_workers × prefetch_factor, for the browser check and for looking at by eye; and,
// when asked, a second page of edge cases (long labels, wide sweeps, negative values, empty input).
// Usage: render_demo OUT.html [EDGE_CASES.html]
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "reports/render/charts.h"
#include "reports/render/html_page.h"

namespace render = ingero::reports::render;

namespace {

// Deterministic pseudo-random numbers (xorshift64*), the same on every platform and library.
class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed) {}
  // Uniform in [lo, hi).
  int64_t between(int64_t lo, int64_t hi) {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const uint64_t r = state_ * 0x2545F4914F6CDD1DULL;
    return lo + static_cast<int64_t>(r % static_cast<uint64_t>(hi - lo));
  }

 private:
  uint64_t state_;
};

render::HeatMap epoch_heat_map() {
  render::HeatMap h;
  h.title = "Epoch time over num_workers × prefetch_factor";
  h.x_title = "prefetch_factor";
  h.y_title = "num_workers";
  h.value_title = "median epoch time";
  h.unit = "s";
  h.x_labels = {"2", "4", "12"};
  h.y_labels = {"0", "1", "2", "4", "8"};
  // num_workers = 0 loads in the main process: prefetch_factor does not apply there.
  h.values = {{38.2, std::nullopt, std::nullopt},
              {41.5, 40.9, 41.2},
              {22.3, 21.8, 22.0},
              {12.6, 11.9, 12.1},
              {8.41, 7.93, std::nullopt}};
  h.marks[{0, 0}] = "baseline";
  h.marks[{4, 2}] = "failed";
  h.caption = "Loader mode, 7,000,000 × 100 float32 samples, batch 1,048,576, median of 3 measured epochs. "
              "num_workers = 0 takes no prefetch_factor; the run with 8 workers and prefetch_factor 12 ran out of memory.";
  return h;
}

render::IntervalBars speedup_bars() {
  render::IntervalBars b;
  b.title = "Speed-up over the baseline (num_workers = 0)";
  b.value_title = "speed-up over the baseline";
  b.unit = "×";
  b.interval_label = "95 % bootstrap interval";
  b.highlight_label = "recommended";
  b.reference = render::ReferenceLine{1.0, "baseline (1.0×)"};
  b.bars = {{"num_workers 1, prefetch 2", 0.92, 0.88, 0.97, false, "slower"},
            {"num_workers 2, prefetch 4", 1.75, 1.66, 1.83, false, ""},
            {"num_workers 4, prefetch 4", 3.21, 3.05, 3.38, false, ""},
            {"num_workers 8, prefetch 4", 4.82, 4.51, 5.12, true, "best, 3 epochs"},
            {"num_workers 8, prefetch 2", 4.54, std::nullopt, std::nullopt, false, "1 epoch, no interval"}};
  b.caption = "Ratio of median epoch times; the interval resamples the measured epochs of both runs.";
  return b;
}

render::BarPanel process_panel() {
  render::BarPanel p;
  p.title = "Per process: scheduling and memory (num_workers 4, prefetch 4)";
  struct Proc {
    const char* label;
    const char* group;
    double switches, off_cpu_ms, runq_ms, pages;
  };
  const Proc procs[] = {{"python3 (main, pid 4242)", "main", 1880, 1420.5, 12.4, 212000},
                        {"ib-pin (tid 4250)", "pin", 920, 2610, 3.1, 1048576},
                        {"ib-worker-0 (pid 4251)", "worker", 14500, 851, 238, 52300},
                        {"ib-worker-1 (pid 4252)", "worker", 13210, 874, 221, 51800},
                        {"ib-worker-2 (pid 4253)", "worker", 12987, 902, 187, 52050},
                        {"ib-worker-3 (pid 4254)", "worker", 13894, 866, 205, 51990},
                        {"other traced threads", "other", 310, 40.2, 2.2, 0}};
  render::BarChart switches{"context switches", "count", {}};
  render::BarChart off_cpu{"off-CPU time", "ms", {}};
  render::BarChart runq{"run-queue time", "ms", {}};
  render::BarChart pages{"page allocations", "pages", {}};
  for (const Proc& proc : procs) {
    switches.rows.push_back({proc.label, proc.switches, proc.group});
    off_cpu.rows.push_back({proc.label, proc.off_cpu_ms, proc.group});
    runq.rows.push_back({proc.label, proc.runq_ms, proc.group});
    pages.rows.push_back({proc.label, proc.pages, proc.group});
  }
  p.charts = {switches, off_cpu, runq, pages};
  p.caption = "Totals over the measured epochs; the pin thread allocates pinned pages for every batch.";
  return p;
}

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

// The main thread: wait for a batch (partly off-CPU), copy it to the device, run the model.
render::Lane main_lane(int64_t t0, int64_t t1, Noise& noise) {
  render::Lane lane{"python3 main", "pid 4242, tid 4242", {}};
  for (int64_t t = t0 + 3 * kMs; t < t1 - 70 * kMs;) {
    const int64_t wait = noise.between(20, 45) * kMs;
    lane.spans.push_back({t, t + wait, "batch wait", "next(loader)"});
    for (int64_t s = t + kMs; s < t + wait - 2 * kMs;) {
      const int64_t off = noise.between(2, 9) * kMs;
      lane.spans.push_back({s, std::min(s + off, t + wait), "off-CPU", "futex wait"});
      s += off + noise.between(300, 900) * kUs;
    }
    t += wait;
    const int64_t copy = noise.between(3500, 4500) * kUs;
    lane.spans.push_back({t, t + copy, "CUDA call", "cudaMemcpyAsync 419 MB"});
    t += copy + 200 * kUs;
    for (int k = 0; k < 6; ++k) {
      lane.spans.push_back({t, t + 18 * kUs, "CUDA call", "cudaLaunchKernel"});
      t += 60 * kUs;
    }
    const int64_t sync = noise.between(9, 16) * kMs;
    lane.spans.push_back({t, t + sync, "CUDA call", "cudaStreamSynchronize"});
    t += sync + noise.between(1, 3) * kMs;
  }
  return lane;
}

// A worker: fetch a batch (often preempted), then sleep until the next index arrives. Worker 0
// also takes thousands of short page-fault sleeps, which the timeline must merge to stay small.
render::Lane worker_lane(int index, int64_t t0, int64_t t1, Noise& noise) {
  render::Lane lane{"ib-worker-" + std::to_string(index), "pid " + std::to_string(4251 + index), {}};
  for (int64_t t = t0 + noise.between(5, 60) * kMs; t < t1;) {
    const int64_t fetch = noise.between(150, 230) * kMs;
    lane.spans.push_back({t, std::min(t + fetch, t1), "fetch", "fetch + collate batch"});
    for (int64_t s = t + noise.between(1, 4) * kMs; s < t + fetch;) {
      const int64_t rq = noise.between(50, 400) * kUs;
      lane.spans.push_back({s, s + rq, "run-queue wait", "preempted"});
      s += rq + noise.between(2, 8) * kMs;
    }
    t += fetch;
    const int64_t idle = noise.between(20, 80) * kMs;
    lane.spans.push_back({t, t + idle, "off-CPU", "waiting for an index"});
    t += idle;
  }
  if (index == 0) {
    for (int64_t s = t0 + kMs; s < t1; s += noise.between(300, 700) * kUs) {
      lane.spans.push_back({s, s + noise.between(10, 40) * kUs, "off-CPU", "page fault"});
    }
  }
  return lane;
}

render::Timeline run_timeline() {
  render::Timeline t;
  t.title = "Main thread and workers, 3 s of run 17";
  t.start_ns = 812'345'000'000;
  t.end_ns = t.start_ns + 3'000 * kMs;
  t.categories = {{"CUDA call", "time inside a CUDA runtime or driver call"},
                  {"batch wait", "main loop waiting for the next batch"},
                  {"fetch", "worker producing a batch"},
                  {"off-CPU", "blocked or sleeping"},
                  {"run-queue wait", "runnable, waiting for a CPU"}};
  Noise noise(0x1b873593);
  t.lanes.push_back(main_lane(t.start_ns, t.end_ns, noise));
  for (int w = 0; w < 4; ++w) t.lanes.push_back(worker_lane(w, t.start_ns, t.end_ns, noise));
  t.caption = "Each lane is one thread; each band inside a lane one category, so that nested spans stay visible.";
  return t;
}

// Long labels, wide sweeps, negative values, empty input: the layouts must stay readable, and the
// browser check finds what text-width estimates miss (bold text, real font metrics).
render::HeatMap wide_heat_map() {
  render::HeatMap h;
  h.title = "Throughput over num_workers × prefetch_factor with persistent workers and pinned memory enabled for every run";
  h.x_title = "num_workers";
  h.y_title = "prefetch_factor (persistent workers)";
  h.value_title = "throughput, higher is better, median of all measured epochs";
  h.unit = "samples/s";
  h.lower_is_better = false;
  for (int x : {0, 1, 2, 3, 4, 6, 8, 12, 16}) h.x_labels.push_back("nw=" + std::to_string(x) + " long label");
  h.y_labels = {"2", "4", "12 (persistent, pinned)"};
  for (int r = 0; r < 3; ++r) {
    h.values.emplace_back();
    for (int c = 0; c < 9; ++c) {
      const bool failed = c == 3 && r == 1;
      h.values.back().push_back(failed ? std::nullopt : std::optional<double>(123456.0 * (c + 1) * (r + 1)));
    }
  }
  h.marks[{0, 0}] = "baseline configuration";
  h.marks[{2, 8}] = "recommended";
  return h;
}

render::IntervalBars signed_bars() {
  render::IntervalBars b;
  b.title = "Change in epoch time";
  b.value_title = "change";
  b.unit = "%";
  b.reference = render::ReferenceLine{0, "no change"};
  b.bars = {{"a very long configuration label that does not fit in the label column at all", -12.5, -15.0, -9.0, false,
             "a long note that is cut before it leaves the chart on the right side"},
            {"b", 30.2, 25.0, 36.0, true, "n = 3"},
            {"c", 0.0, -1.0, 1.0, false, ""},
            {"d", 3, std::nullopt, std::nullopt, false, "x"}};
  return b;
}

render::BarPanel many_charts() {
  render::BarPanel p;
  p.title = "Six metrics over twelve threads";
  for (int k = 0; k < 6; ++k) {
    render::BarChart chart{"metric number " + std::to_string(k) + " with a long title", k == 2 ? "" : "ms", {}};
    for (int r = 0; r < 12; ++r) {
      std::optional<double> value = r * 1234.5 * (k + 1);
      if (k == 1) value = 0.0;
      if (r == 5) value = std::nullopt;
      chart.rows.push_back({"thread " + std::to_string(r) + (r == 3 ? " with an extremely long name" : ""), value,
                            r < 2 ? "main" : r < 10 ? "worker" : ""});
    }
    p.charts.push_back(chart);
  }
  return p;
}

render::Timeline tiny_window() {
  render::Timeline t;
  t.title = "800 µs, twelve threads";
  t.start_ns = 100;
  t.end_ns = t.start_ns + 800'000;
  t.categories = {{"CUDA call", ""}};
  for (int l = 0; l < 12; ++l) {
    render::Lane lane{"thread with a long name number " + std::to_string(l), "pid 1, and a long sublabel text", {}};
    const int64_t s = t.start_ns + l * 50'000;
    lane.spans.push_back({s, s + 30'000, l % 3 ? "CUDA call" : "category not in the list", "x"});
    lane.spans.push_back({t.end_ns - 10, t.end_ns + 10, "CUDA call", "at the window's end"});
    t.lanes.push_back(lane);
  }
  return t;
}

// A worker's samples: decoding JPEGs under PIL, ToTensor, collate; a long name and many thin frames.
render::FlameGraph worker_flame_graph() {
  using F = render::FlameFrame;
  render::FlameGraph f;
  f.title = "Where the CPU went: worker threads (1,000 samples)";
  f.group_order = {"batch building", "model compute", "other"};
  F decode{"decode_mcu [libjpeg.so.62.3.0]", 410, "batch building", {}};
  F load{"ImageFile.load (PIL/ImageFile.py:255)", 470, "batch building", {decode}};
  F to_tensor{"ToTensor.__call__ (transforms/transforms.py:134)", 220, "batch building",
              {{"at::native::copy_ [libtorch_cpu.so]", 150, "model compute", {}}}};
  F getitem{"ImageFolder.__getitem__ (datasets/folder.py:229)", 740, "batch building", {load, to_tensor}};
  F collate{"default_collate (_utils/collate.py:265)", 200, "batch building",
            {{"at::native::cat_out_cpu [libtorch_cpu.so]", 180, "model compute", {}}}};
  F fetch{"_MapDatasetFetcher.fetch (_utils/fetch.py:51)", 940, "batch building", {collate, getitem}};
  F thin{"_worker_loop (_utils/worker.py:308)", 1000, "batch building", {fetch}};
  for (int i = 0; i < 30; ++i) thin.children.push_back({"tiny_" + std::to_string(i), 2, "other", {}});
  f.root = {"all worker samples", 1000, "", {thin}};
  f.caption = "On-CPU samples, stacks merged, the root at the bottom.";
  return f;
}

render::HtmlPage edge_case_page() {
  render::HtmlPage page("Edge cases: a long title that goes on and on, to see how the page header wraps", "");
  page.add_svg(render::heat_map(wide_heat_map()));
  render::HeatMap one;
  one.title = "One cell";
  one.x_title = "x";
  one.y_title = "y";
  one.value_title = "v";
  one.x_labels = {"a"};
  one.y_labels = {"b"};
  one.values = {{5.0}};
  page.add_svg(render::heat_map(one));
  page.add_svg(render::interval_bars(signed_bars()));
  page.add_svg(render::bar_panel(many_charts()));
  page.add_svg(render::timeline(tiny_window()));
  render::Timeline empty_timeline;
  empty_timeline.title = "Empty timeline";
  page.add_svg(render::timeline(empty_timeline));
  render::BarPanel empty_panel;
  empty_panel.title = "Empty panel";
  page.add_svg(render::bar_panel(empty_panel));
  render::IntervalBars empty_bars;
  empty_bars.title = "Empty bars";
  page.add_svg(render::interval_bars(empty_bars));
  render::FlameGraph empty_flame;
  empty_flame.title = "Empty flame graph";
  page.add_svg(render::flame_graph(empty_flame));
  return page;
}

render::HtmlPage demo_page() {
  render::HtmlPage page("ingero-bench report (demo data)",
                        "Loader sweep on 1 × NVIDIA H200, 16 cores; numbers are made up for the look of the page.");
  page.add_key_values({{"machine", "16 cores, 128 GiB, NVIDIA H200 (driver 550.90)"},
                       {"workload", "dataloader, loader mode, 7,000,000 × 100 float32"},
                       {"runs", "14 (13 finished, 1 failed)"}});
  page.add_heading("Configurations");
  page.add_svg(render::heat_map(epoch_heat_map()));
  page.add_svg(render::interval_bars(speedup_bars()));
  page.add_table({{"configuration", "epoch time", "samples/s", "waiting for data"},
                  {{"num_workers 0", "38.2 s", "183,246", "71.3 %"},
                   {"num_workers 8, prefetch 4", "7.93 s", "882,723", "4.1 %"},
                   {"num_workers 8, prefetch 12", "—", "—", "—"}},
                  "Baseline and recommendation",
                  {}});
  page.add_heading("Where the time went");
  page.add_svg(render::bar_panel(process_panel()));
  page.add_svg(render::timeline(run_timeline()));
  page.add_svg(render::flame_graph(worker_flame_graph()));
  page.add_note("The recommendation holds for this machine; rerun the sweep after changing the batch size.");
  return page;
}

bool write(const char* path, const render::HtmlPage& page) {
  std::ofstream out(path, std::ios::binary);
  out << page.render();
  if (out.flush()) return true;
  std::cerr << "render_demo: cannot write " << path << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: render_demo OUT.html [EDGE_CASES.html]\n";
    return 2;
  }
  if (!write(argv[1], demo_page())) return 1;
  if (argc == 3 && !write(argv[2], edge_case_page())) return 1;
  return 0;
}
