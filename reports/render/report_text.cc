// SPDX-License-Identifier: Apache-2.0
#include "reports/render/report_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "reports/text/compare_text.h"
#include "reports/text/format.h"
#include "reports/text/interval_text.h"
#include "reports/text/profile_text.h"
#include "reports/text/recommend_text.h"
#include "reports/text/run_text.h"
#include "reports/text/summary_text.h"
#include "reports/text/tracing_cost_text.h"
#include "reports/text/verdict_text.h"
#include "reports/text/rank_text.h"

namespace ingero::reports {
namespace {

std::string or_dash(const std::optional<double>& value, std::string (*format)(double)) {
  return value ? format(*value) : "—";
}

std::string ns_text(int64_t ns) { return format_duration_ns(static_cast<double>(ns)); }

std::string bucket_text(const std::optional<BucketBounds>& b) {
  return b ? fmt::format("[{:g},{:g})", b->lower, b->upper) : "—";
}

void heading(std::ostream& out, const std::string& title) { fmt::print(out, "\n{}\n{}\n", title, std::string(title.size(), '-')); }

// A titled list of lines; nothing, not even the title, when there are none.
void print_list(const std::string& title, const std::vector<std::string>& lines, std::ostream& out) {
  if (!lines.empty()) heading(out, title);
  for (const auto& line : lines) fmt::print(out, "- {}\n", line);
}

void render_header(const RunHeader& h, std::ostream& out) {
  fmt::print(out, "run {} — {} ({}, mode {}, status {})\n", h.run_id, h.label, h.kind,
             h.mode.empty() ? "—" : h.mode, h.status);
  fmt::print(out, "machine: {}\n", machine_text(h.machine));
  if (h.since_s) fmt::print(out, "window: last {} of the run\n", format_seconds(*h.since_s));
}

void render_metrics(const RunMetrics& m, const std::string& gpu_sampler, std::ostream& out) {
  heading(out, "Metrics");
  fmt::print(out, "epoch time         median {}  min {}  max {}  ({} measured epochs)\n",
             or_dash(m.epoch_median_s, format_seconds), or_dash(m.epoch_min_s, format_seconds),
             or_dash(m.epoch_max_s, format_seconds), m.epoch_seconds.size());
  if (m.epoch_seconds.empty() && m.batch_source == BatchSource::observer && m.window_s > 0)
    fmt::print(out, "steps              {} batches taken by the job, {:.1f} per second\n", format_count(m.batch_wait.count),
               static_cast<double>(m.batch_wait.count) / m.window_s);
  fmt::print(out, "throughput         {} samples/s\n",
             m.samples_per_s ? format_count(static_cast<int64_t>(*m.samples_per_s)) : "—");
  fmt::print(out, "host→device        {} per epoch, {}\n", or_dash(m.h2d_bytes_per_epoch, format_bytes),
             m.h2d_gbps ? fmt::format("{:.2f} GB/s", *m.h2d_gbps) : "—");
  fmt::print(out, "waiting for data   {} of the time (from {})\n", or_dash(m.wait_fraction, format_percent),
             wait_basis_text(m));
  fmt::print(out, "batch_wait         {} waits, p50 {}, p99 {}, max {}, total {}\n", format_count(m.batch_wait.count),
             ns_text(m.batch_wait.p50_ns), ns_text(m.batch_wait.p99_ns), ns_text(m.batch_wait.max_ns),
             ns_text(m.batch_wait.total_ns));
  if (m.cpu_busy_share && m.cores) {
    fmt::print(out, "CPU                {} of {} cores busy with the traced processes\n",
               format_percent(*m.cpu_busy_share), *m.cores);
  }
  if (m.io.requests > 0) {
    fmt::print(out, "block I/O          {} requests, {} read or written, {} in flight in total{}\n",
               format_count(m.io.requests), format_bytes(static_cast<double>(m.io.bytes)),
               ns_text(m.io.total_ns),
               m.io.p99_us ? fmt::format(", p99 in [{:g}, {:g}) µs", m.io.p99_us->lower, m.io.p99_us->upper) : "");
  }
  if (m.io.iowait_ns > 0 || m.io.cache_pages_added > 0) {
    std::string rate = m.io.read_mb_s ? fmt::format(", {:.1f} MB/s over the run", *m.io.read_mb_s) : "";
    if (m.io.read_mb_s && m.io.device_read_mb_s)
      rate += fmt::format(" ({} of the device's measured sequential {:.0f} MB/s)",
                          format_percent(*m.io.read_mb_s / *m.io.device_read_mb_s), *m.io.device_read_mb_s);
    fmt::print(out, "storage reads      {} in I/O wait, {} pages read into the page cache{}\n", ns_text(m.io.iowait_ns),
               format_count(m.io.cache_pages_added), rate);
  }
  for (const std::string& line : evidence_lines(m, gpu_sampler)) fmt::print(out, "{}\n", line);
  fmt::print(out, "events             {} in the window, {} lost\n", format_count(m.events_in_window),
             m.events_lost ? format_count(*m.events_lost) : "unknown (never recorded)");
  // The verdict as the main job's diagnosis and every MCP answer say it, then what the levels mean.
  if (m.verdict == InputBound::run_failed || m.verdict == InputBound::nothing_measured)
    fmt::print(out, "VERDICT: {}\n", verdict_summary(m));
  else
    fmt::print(out, "VERDICT: {}; HIGHLY ≥ {:g} % waiting, MODERATELY ≥ {:g} %\n", verdict_summary(m),
               kHighlyInputBoundShare * 100, kModeratelyInputBoundShare * 100);
}

void render_loaders(const std::vector<LoaderRecord>& loaders, std::ostream& out) {
  if (loaders.empty()) return;
  heading(out, "DataLoaders (the observer, in the job)");
  for (const LoaderRecord& l : loaders) {
    fmt::print(out, "pid {} loader {}: {} batches in {} epochs, waited {}; {}\n", l.pid, l.loader, format_count(l.batches),
               l.epochs, ns_text(l.wait_ns), l.knobs.dump());
    if (l.overrides.is_object()) fmt::print(out, "    override: {}\n", l.overrides.dump());
  }
}

void render_calls(const std::vector<CallLatencyRow>& rows, std::ostream& out) {
  if (rows.empty()) return;
  heading(out, "CUDA / NCCL call latency (counts exact, ≈ estimated from duty-cycled probes; ≤: log2 bucket upper bound)");
  fmt::print(out, "{:<26} {:>10} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "function", "calls", "errors", "p50", "p90",
             "p99", "max", "total");
  for (const auto& r : rows) {
    auto pct = [&](int64_t ns) { return (r.exact ? "" : "≤") + ns_text(ns); };
    fmt::print(out, "{:<26} {:>10} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9}\n", r.function, format_calls(r.calls, r.estimate, false),
               format_count(r.errors), pct(r.stats.p50_ns), pct(r.stats.p90_ns), pct(r.stats.p99_ns),
               ns_text(r.stats.max_ns), ns_text(r.stats.total_ns));
  }
}

void render_process_rows(const std::vector<ProcessRow>& rows, const std::string& title, std::ostream& out) {
  if (rows.empty()) return;
  heading(out, title);
  const bool any_io = std::any_of(rows.begin(), rows.end(), [](const ProcessRow& r) { return r.counters.io_count; });
  fmt::print(out, "{:<26} {:>4} {:>9} {:>9} {:>9} {:>9} {:>15} {:>13} {:>13} {:>9} {:>9} {:>9} {:>9}{}\n", "who",
             "thr", "vol sw", "invol sw", "off-CPU", "worst", "off-CPU p99 µs", "runq p50 µs", "runq p99 µs",
             "pg alloc", "alloc B", "faults", "on-CPU", any_io ? "   block I/O" : "");
  for (const auto& r : rows) {
    std::string who = r.pid ? fmt::format("{} {} ({})", r.role, r.pid, r.name) : fmt::format("{} ×{}", r.role, r.processes);
    if (r.rank) who = fmt::format("rank {} {}", *r.rank, who);
    const ThreadCounters& c = r.counters;
    const std::string io = any_io ? fmt::format("   {} req, {}", format_count(c.io_count),
                                                format_bytes(static_cast<double>(c.io_bytes)))
                                  : "";
    fmt::print(out, "{:<26} {:>4} {:>9} {:>9} {:>9} {:>9} {:>15} {:>13} {:>13} {:>9} {:>9} {:>9} {:>9}{}\n", who,
               r.threads, format_count(c.voluntary_switches), format_count(c.involuntary_switches),
               ns_text(c.offcpu_ns), ns_text(c.offcpu_max_ns), bucket_text(r.offcpu_p99), bucket_text(r.runq_p50),
               bucket_text(r.runq_p99), format_count(c.page_allocs),
               format_bytes(static_cast<double>(c.page_alloc_bytes)), format_count(c.page_faults), ns_text(c.oncpu_ns),
               io);
  }
  fmt::print(out, "(off-CPU and run-queue quantiles are log2 bucket bounds, from the kernel histograms)\n");
}

void render_check(const ChangeCheck& check, std::ostream& out) { fmt::print(out, "    {}\n", change_check_text(check)); }

void render_job(const Job& job, std::ostream& out) {
  const auto lines = job_sentences(job);
  for (size_t i = 0; i < lines.size(); ++i) fmt::print(out, "{}{}\n", i == 0 ? "" : "    ", lines[i]);
}

void render_rank_table(const RankAnalysis& r, std::ostream& out) {
  const auto node_cell = [&](const std::string& node) { return r.job ? fmt::format(" {:<14}", node) : ""; };
  fmt::print(out, "{:<5}{} {:>8} {:>7} {:>12} {:>8} {:<22} {:>10} {:>12} {:>16}\n", "rank", node_cell("node"), "pid",
             "forks", "epoch median", "waiting", "verdict", "step p50", "step total", "waited for slow");
  for (const RankRow& row : r.ranks) {
    const RunMetrics& m = row.metrics;
    fmt::print(out, "{:<5}{} {:>8} {:>7} {:>12} {:>8} {:<22} {:>10} {:>12} {:>16}\n", row.rank, node_cell(row.node),
               row.pid, row.worker_processes, or_dash(m.epoch_median_s, format_seconds),
               or_dash(m.wait_fraction, format_percent), input_bound_name(m.verdict), ns_text(m.batch_compute.p50_ns),
               ns_text(m.batch_compute.total_ns), r.straggler ? ns_text(row.waits_for_straggler_ns) : "—");
  }
}

void render_node_cores(const RankAnalysis& r, const NodeCores& n, std::ostream& out) {
  const auto lines = node_cores_sentences(r, n);
  for (size_t i = 0; i < lines.size(); ++i) fmt::print(out, "{}{}\n", i == 0 ? "" : "    ", lines[i]);
  if (!lines.empty() && n.suggested_workers && n.suggestion_check) render_check(*n.suggestion_check, out);
}

void render_nccl(const RankAnalysis& r, std::ostream& out) {
  if (!r.any_nccl()) return;
  fmt::print(out, "NCCL calls per rank (counts exact, ≈ where estimated from duty-cycled probes; mean and max over "
                  "the calls that returned while probed)\n");
  fmt::print(out, "{:<18} {:<20} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10}\n", "rank", "function", "calls", "errors",
             "bytes", "total", "mean", "max");
  for (const RankRow& row : r.ranks)
    for (const NcclCallRow& call : row.nccl)
      fmt::print(out, "{:<18} {:<20} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10}\n", rank_name(r, row), call.op,
                 (call.estimated ? "≈ " : "") + format_count(call.calls), format_count(call.errors), format_bytes(static_cast<double>(call.bytes)),
                 ns_text(call.total_ns), call.mean_ns ? ns_text(*call.mean_ns) : "—", ns_text(call.max_ns));
}

void render_ranks(const RankAnalysis& r, std::ostream& out) {
  heading(out, r.job ? fmt::format("Ranks (DDP: {} ranks on {} nodes, each with its own DataLoader)", r.ranks.size(),
                                   r.nodes.size())
                     : fmt::format("Ranks (DDP: {} ranks, each with its own DataLoader)", r.ranks.size()));
  if (r.job) render_job(*r.job, out);
  render_rank_table(r, out);
  fmt::print(out, "{}\n", straggler_sentence(r));
  for (const RankRow& row : r.ranks) {
    const auto words = rank_chain_words(row);
    if (!words) continue;
    fmt::print(out, "{} top cause: {}\n    {}\n", rank_name(r, row), top_cause_text(row), change_line(words->recommendation));
    for (const auto& check : row.top_chain->checks) render_check(check, out);
  }
  for (const NodeCores& node : r.nodes) render_node_cores(r, node, out);
  render_nccl(r, out);
}

void render_chains(const ChainAnalysis& a, const std::vector<ChainWords>& words, std::ostream& out) {
  heading(out, "Slow intervals and where their time went");
  if (a.victims.empty()) fmt::print(out, "none: no CUDA call in a latency tail and no input-bound waiting\n");
  for (const auto& v : a.victims) {
    fmt::print(out, "{}: {} intervals, {} ({})\n", v.op, format_count(v.count), ns_text(v.total_ns),
               selection_text(v, a.thresholds));
    for (const auto& c : v.causes) {
      fmt::print(out, "  {:>7}  {:>9}  {}\n", format_percent(c.share), ns_text(c.ns), cause_share_label(c, v.op, a));
    }
  }
  heading(out, "Causal chains (ranked by the waiting each cause overlapped)");
  if (a.chains.empty()) fmt::print(out, "no causal chain: nothing in the trace explains slow intervals\n");
  for (size_t i = 0; i < a.chains.size(); ++i) {
    const CausalChain& c = a.chains[i];
    const ChainWords& w = words[i];
    fmt::print(out, "#{} {}\n", c.rank, chain_title(c, w));
    for (const auto& line : w.timeline) fmt::print(out, "    {}\n", line);
    for (const auto& line : chain_cause_lines(w)) fmt::print(out, "    {}\n", line);
    for (const auto& check : c.checks) render_check(check, out);
  }
  const auto& t = a.thresholds;
  fmt::print(out,
             "(slow call: ≥ max(p99, {:g}×p50, {}); severity HIGH ≥ {:g} % of the analysed wall time, MEDIUM ≥ "
             "{:g} %, else LOW; a cause explains a call when it covers ≥ {:g} % of it; causes under {:g} % of the "
             "slow time are dropped; a cause's overlapped time is an upper bound on what removing it saves — only a "
             "run without it measures the saving)\n",
             t.slow_vs_p50, ns_text(t.slow_min_ns), t.high_share_of_window * 100, t.medium_share_of_window * 100,
             t.explains_share * 100, t.min_chain_share * 100);
}

void render_health(const HealthAnalysis& a, const std::vector<HealthWords>& words, std::ostream& out) {
  heading(out, "Worker health (" + health_sampling_text(a) + ")");
  if (a.findings.empty()) fmt::print(out, "no OOM kill, memory growth, /dev/shm or descriptor shortage, or hang\n");
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const HealthWords& w = words[i];
    fmt::print(out, "{}\n", health_title(a.findings[i], w));
    for (const auto& line : w.evidence) fmt::print(out, "    {}\n", line);
    fmt::print(out, "    {}\n", change_line(w.change));
  }
}

std::string value_text(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "—";
  if (unit == "s") return format_seconds(*v);
  if (unit == "ns") return format_duration_ns(*v);
  if (unit == "bytes") return format_bytes(*v);
  if (unit == "share") return format_percent(*v);
  if (unit == "GB/s") return fmt::format("{:.2f} GB/s", *v);
  if (unit == "µs") return fmt::format("{:g} µs", *v);
  return format_count(static_cast<int64_t>(std::llround(*v)));
}

void render_compare_rows(const std::vector<CompareRow>& rows, const std::string& title, std::ostream& out) {
  heading(out, title);
  fmt::print(out, "{:<40} {:>14} {:>14} {:>10}\n", "", "A", "B", "B/A");
  for (const auto& r : rows) {
    const auto ratio = r.ratio();
    fmt::print(out, "{:<40} {:>14} {:>14} {:>10}\n", r.name, value_text(r.a, r.unit), value_text(r.b, r.unit),
               ratio ? format_ratio(*ratio) : "—");
  }
}

// Functions of a role: the top by self samples, then by inclusive ones.
void render_role_profile(const RoleProfile& role, size_t top, std::ostream& out) {
  fmt::print(out, "{}\n", role_profile_heading(role));
  if (role.split) fmt::print(out, "  split: {}\n", split_text(*role.split));
  fmt::print(out, "  {:>7} {:>7}  {}\n", "self", "incl", "function (by self)");
  for (const FrameShare& f : role.top_by_self(top))
    fmt::print(out, "  {:>7} {:>7}  {}\n", format_percent(f.self_share), format_percent(f.inclusive_share), frame_text(f));
  fmt::print(out, "  {:>7} {:>7}  {}\n", "self", "incl", "function (by inclusive)");
  for (const FrameShare& f : role.top_by_inclusive(top))
    fmt::print(out, "  {:>7} {:>7}  {}\n", format_percent(f.self_share), format_percent(f.inclusive_share), frame_text(f));
}

void render_profile(const ExplainReport& r, std::ostream& out) {
  heading(out, "Where the CPU went (on-CPU samples per role)");
  fmt::print(out, "{}\n", profile_status_text(r.profile, r.profile_taken));
  if (!r.profile) return;
  for (const RoleProfile& role : r.profile->roles) render_role_profile(role, 5, out);
  for (const RoleProfile& role : r.profile->ranks) render_role_profile(role, 3, out);
  fmt::print(out, "(self: samples in the function's own code; incl: with it anywhere on the stack; shares of the "
                  "role's samples)\n");
}

}  // namespace

void render_text(const ExplainReport& r, std::ostream& out) {
  render_header(r.run, out);
  render_metrics(r.metrics, r.gpu_sampler, out);
  for (const std::string& line : tracing_cost_lines(r.tracing_cost)) fmt::print(out, "{}\n", line);
  render_loaders(r.loaders, out);
  render_calls(r.calls, out);
  render_process_rows(r.roles, "Per role", out);
  render_process_rows(r.processes, "Per process", out);
  if (r.ranks) render_ranks(*r.ranks, out);
  render_profile(r, out);
  render_chains(r.chains, r.chain_words, out);
  render_health(r.health, r.health_words, out);
  print_list("Notes", r.notes, out);
}

void render_text(const CompareReport& r, std::ostream& out) {
  fmt::print(out, "A: ");
  render_header(r.a, out);
  fmt::print(out, "B: ");
  render_header(r.b, out);
  render_compare_rows(r.timings, "Timings", out);
  render_compare_rows(r.signatures, "Trace signatures", out);
  heading(out, "Where the difference comes from (" + basis_text(r.basis) + ")");
  fmt::print(out, "{:<58} {:>10} {:>10} {:>10} {:>9}\n", "component", "A", "B", "B−A", "of Δ");
  for (const auto& c : r.components) {
    fmt::print(out, "{:<58} {:>10} {:>10} {:>10} {:>9}\n", (c.part_of_wait() ? "  " : "") + component_name(c),
               format_seconds(c.a_s), format_seconds(c.b_s), format_seconds(c.delta_s()),
               format_percent(c.share_of_delta));
  }
  fmt::print(out, "\n");
  for (const auto& line : explanation_lines(r)) fmt::print(out, "{}\n", line);
}

void render_text(const RecommendReport& r, std::ostream& out) {
  if (r.sweep_id) fmt::print(out, "sweep {}\n", *r.sweep_id);
  fmt::print(out, "{}\n", headline_text(r));
  if (r.verification) {
    std::string ids;
    for (int64_t id : r.verification->baseline_runs) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", id);
    for (int64_t id : r.verification->recommended_runs) ids += fmt::format(", {}", id);
    fmt::print(out, "verified by runs {} ({})\n", ids, interval_method_text(r.verification->speedup.interval));
  }
  print_list("Why", reason_lines(r), out);
  heading(out, "Measured configurations (fastest first)");
  fmt::print(out, "{:<34} {:<16} {:>3} {:>3} {:>4} {:>5} {:>9} {:>21} {:>8} {}\n", "label", "mode", "w", "pf", "pin",
             "pers", "median", "interval", "vs base", "flags");
  const double base_median = r.configs[r.baseline].median_s;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const auto& c = r.configs[i];
    if (!c.measured()) continue;
    std::string marks = static_cast<int>(i) == r.recommended ? " ← recommended" : "";
    if (static_cast<int>(i) == r.baseline) marks += " ← baseline";
    std::string flags;
    for (const auto& f : flag_texts(c.flags)) flags += (flags.empty() ? "" : "; ") + f;
    fmt::print(out, "{:<34} {:<16} {:>3} {:>3} {:>4} {:>5} {:>9} {:>21} {:>8} {}{}\n", c.label, c.config.mode,
               c.config.num_workers, c.config.prefetch_factor, c.config.pin_memory ? "yes" : "no",
               c.config.persistent_workers ? "yes" : "no", format_seconds(c.median_s),
               fmt::format("[{}, {}]", format_seconds(c.interval.low), format_seconds(c.interval.high)),
               format_ratio(base_median / c.median_s), flags, marks);
  }
  fmt::print(out, "({})\n", noise_rule_text(r.noise_rule));
  print_list("Not measured to the end", not_measured_lines(r), out);
  print_list("Evidence from the baseline's trace", baseline_evidence_lines(r), out);
}

}  // namespace ingero::reports
