// SPDX-License-Identifier: Apache-2.0
#include "mcp/trace_tools.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "mcp/trace_resources.h"
#include "reports/documents/trace_reports.h"
#include "reports/text/compare_text.h"
#include "reports/text/format.h"
#include "reports/text/profile_text.h"
#include "reports/text/recommend_text.h"
#include "reports/text/summary_text.h"
#include "reports/text/tracing_cost_text.h"
#include "reports/render/json_shape.h"
#include "reports/render/report_json.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;
using reports::TraceFile;
using Trace = std::shared_ptr<const TraceFile>;
namespace s = json_schema;

constexpr int64_t kChainsDefault = 5;
constexpr int64_t kChainsMax = 50;
constexpr size_t kTextRows = 8;  // rows a text summary lists before "..."

// ---- shared by the tools

json bounded_integer(const std::string& description, int64_t minimum, std::optional<int64_t> maximum = {}) {
  json schema = s::integer(description);
  schema["minimum"] = minimum;
  if (maximum) schema["maximum"] = *maximum;
  return schema;
}

// Row ids are 64-bit, but a JSON number past 2^53 is no longer an exact integer (to a client, or to
// a parser that reads 99999999999999999999 as a double, which then wrapped to a negative id): ids
// stop at the largest exact one.
constexpr int64_t kMaxExactJsonInteger = (int64_t{1} << 53) - 1;

json id_schema(const std::string& description) { return bounded_integer(description, 1, kMaxExactJsonInteger); }

json run_id_schema(const std::string& description = "run id, as list_runs gives it") { return id_schema(description); }

std::optional<int64_t> optional_integer(const json& args, const char* key) {
  const auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return it->get<int64_t>();  // the inputSchema made it an integer
}

std::optional<double> optional_number(const json& args, const char* key) {
  const auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

std::vector<std::string> severity_names() {
  using reports::Severity;
  return {reports::severity_name(Severity::low), reports::severity_name(Severity::medium),
          reports::severity_name(Severity::high)};
}

// The explain report of the run args["run"] names, made as `explain --run ID` makes it
// (suggested changes checked against the DB's runs); a run that is not in the DB is bad
// input whose hint lists the ids it holds.
Result<reports::ExplainReport> explain_run(const TraceFile& trace, const json& args, bool per_process) {
  reports::ExplainOptions options;
  options.db = trace.path();
  options.run = args.at("run").get<int64_t>();
  options.per_process = per_process;
  return reports::make_explain_report(trace, options);
}

// The text of an answer lists only its first rows; the line saying how many more, if any.
std::string limited_list_end(size_t shown, size_t total) {
  const std::string more = reports::more_rows_text(shown, total);
  return more.empty() ? "" : more + "\n";
}

// JSON has no NaN or infinity: written out they become null and fail the client's
// outputSchema check. As null here they fail the server's own check, with a clear message.
void replace_non_finite(json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    value = nullptr;
  } else if (value.is_structured()) {
    for (auto& item : value) replace_non_finite(item);
  }
}

ToolSpec make_tool(std::string name, std::string title, std::string description, json input, json output,
                   ToolHandler handler) {
  ToolSpec tool;
  tool.name = std::move(name);
  tool.title = std::move(title);
  tool.description = std::move(description);
  tool.input_schema = std::move(input);
  tool.output_schema = std::move(output);
  tool.handler = [handler = std::move(handler)](const json& args) -> Result<ToolAnswer> {
    auto answer = handler(args);
    if (answer) replace_non_finite(answer->structured);
    return answer;
  };
  return tool;
}

// ---- list_runs

std::optional<double> epoch_median(const reports::RunRecord& run) {
  // As explain reads it: the result record's median, when it measured any epoch.
  if (reports::measured_epochs(run).empty()) return std::nullopt;
  const auto it = run.result.find("epoch_median_s");
  return it != run.result.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

// One run as list_runs lists it: what the DB stores of it, with its mode and epoch median as explain reads them.
struct RunListing {
  const reports::RunRecord& run;
  std::string mode;
  std::optional<double> epoch_median_s;
  size_t epochs_measured = 0;
};

RunListing listing(const reports::RunRecord& run) {
  return {run, reports::summarize_config(run).mode, epoch_median(run), reports::measured_epochs(run).size()};
}

// One list of fields: the answer's rows and list_runs' outputSchema.
const reports::JsonShape<RunListing>& run_listing_shape() {
  using L = RunListing;
  static const reports::JsonShape<L> shape(
      "one run of the trace DB",
      {{"run_id", s::integer(), [](const L& l) { return json(l.run.run_id); }},
       {"label", s::string(), [](const L& l) { return json(l.run.label); }},
       {"kind", s::string_enum_of(contract::kind::kAll), [](const L& l) { return json(l.run.kind); }},
       {"mode", s::string("workload mode (loader, loader-batched, direct, ...); empty when not a workload"),
        [](const L& l) { return json(l.mode); }},
       {"status", s::string_enum_of(contract::status::kAll), [](const L& l) { return json(l.run.status); }},
       {"error", s::string("why it failed or was abandoned; empty otherwise"), [](const L& l) { return json(l.run.error); }},
       {"config", s::any("the workload configuration as stored (object), or null"),
        [](const L& l) { return l.run.config; }},
       {"epoch_median_s", s::nullable(s::number("median of the measured epochs, s; null when none was measured")),
        [](const L& l) { return or_null(l.epoch_median_s); }},
       {"epochs_measured", s::integer(), [](const L& l) { return json(l.epochs_measured); }},
       {"traced", s::boolean("false: timings only (--no-trace)"), [](const L& l) { return json(l.run.traced); }},
       {"started_unix", s::number(), [](const L& l) { return json(l.run.started_unix); }},
       {"duration_s", s::nullable(s::number()),
        [](const L& l) {
          return l.run.end_ns ? json(static_cast<double>(*l.run.end_ns - l.run.start_ns) / 1e9) : json(nullptr);
        }},
       {"sweep_id", s::nullable(s::integer()), [](const L& l) { return or_null(l.run.sweep_id); }},
       {"sweep_point", s::nullable(s::string()), [](const L& l) { return or_null(l.run.sweep_point); }},
       {"sweep_phase", s::nullable(s::string_enum_of(contract::sweep_phase::kAll)),
        [](const L& l) { return or_null(l.run.sweep_phase); }}});
  return shape;
}

ToolSpec list_runs_tool(Trace trace) {
  return make_tool(
      "list_runs", "List the runs",
      "Every run in the trace DB: id, label, kind, workload mode and configuration, status, epoch median, "
      "and its sweep (id, point, phase). Start here: the other tools take these run ids.",
      s::arguments({}),
      s::object({{"db", s::string()},
                 {"schema_version", s::integer()},
                 {"notes", s::array_of(s::string(), "how the file was read")},
                 {"runs", s::array_of(run_listing_shape().schema())}}),
      [trace](const json&) -> Result<ToolAnswer> {
        auto runs = trace->runs();
        if (!runs) return runs.error();
        json rows = json::array();
        std::string text = fmt::format("{} runs in {}:\n", runs->size(), trace->path());
        for (const auto& r : *runs) {
          const RunListing l = listing(r);
          rows.push_back(run_listing_shape().write(l));
          text += reports::run_list_line(r, l.mode, l.epoch_median_s) + "\n";
        }
        return ToolAnswer{json{{"db", trace->path()},
                               {"schema_version", trace->schema_version()},
                               {"notes", trace->notes()},
                               {"runs", rows}},
                          text};
      });
}

// ---- get_trace_stats

// The losses the run recorded per source (none: it never recorded them), with the events the analysed window lost.
struct RecordedLosses {
  std::optional<std::map<std::string, int64_t>> by_source;
  std::optional<int64_t> events_lost;
};

// One list of fields: the answer's "losses" and get_trace_stats' outputSchema.
const reports::JsonShape<RecordedLosses>& losses_shape() {
  using L = RecordedLosses;
  static const reports::JsonShape<L> shape(
      "what the run's tracing dropped",
      {{"recorded", s::boolean("false: unknown, never recorded"), [](const L& l) { return json(l.by_source.has_value()); }},
       {"by_source", s::nullable(s::object({}, "dropped records per source (the rings, the writer queue, SQLite)")),
        [](const L& l) { return l.by_source ? json(*l.by_source) : json(nullptr); }},
       {"events_lost", s::nullable(s::integer()),
        [](const L& l) { return l.by_source ? or_null(l.events_lost) : json(nullptr); }},
       {"meaning", s::string(), [](const L& l) { return json(reports::losses_meaning(l.by_source)); }}});
  return shape;
}

Result<json> recorded_losses(const TraceFile& trace, int64_t run_id, std::optional<int64_t> events_lost) {
  auto run = trace.run(run_id);
  if (!run) return run.error();
  auto context = trace.context(*run);
  if (!context) return context.error();
  return losses_shape().write({context->losses, events_lost});
}

std::string stats_text(const reports::ExplainReport& report, const json& losses) {
  const auto& m = report.metrics;
  std::string text = reports::run_verdict_line(report.run, m);
  if (m.epoch_median_s) text += "; epoch median " + reports::format_seconds(*m.epoch_median_s);
  text += fmt::format(".\n{} probed CUDA/NCCL functions, most total time first:\n", report.calls.size());
  for (size_t i = 0; i < report.calls.size() && i < kTextRows; ++i) text += "  " + reports::call_summary(report.calls[i]) + "\n";
  text += limited_list_end(std::min(report.calls.size(), kTextRows), report.calls.size());
  for (const std::string& line : reports::tracing_cost_lines(report.tracing_cost)) text += line + "\n";
  text += "losses: " + losses["meaning"].get<std::string>() + "\n";
  return text;
}

ToolSpec trace_stats_tool(Trace trace) {
  return make_tool(
      "get_trace_stats", "Trace statistics of a run",
      "The run's timings and input-bound verdict, and per probed CUDA runtime / driver and NCCL function its "
      "call count (exact, or estimated with its interval where the function was duty-cycled: 'estimated'), "
      "errors, bytes and latency percentiles as explain computes them ('percentiles' says whether they are exact "
      "or log2 bucket upper bounds). Also what tracing cost each thread (probe hits x the calibrated cost), the "
      "losses per source (unknown when the run never recorded them) and notes on the data.",
      s::arguments({{"run", run_id_schema()}}, {"run"}),
      s::object({{"run", reports::run_header_schema()},
                 {"metrics", reports::metrics_schema()},
                 {"calls", s::array_of(reports::call_row_schema(), "most total time first")},
                 {"losses", losses_shape().schema()},
                 {"tracing_cost", reports::tracing_cost_schema()},
                 {"notes", s::array_of(s::string(), "what to know about the data behind the numbers")}}),
      [trace](const json& args) -> Result<ToolAnswer> {
        auto report = explain_run(*trace, args, false);
        if (!report) return report.error();
        auto losses = recorded_losses(*trace, report->run.run_id, report->metrics.events_lost);
        if (!losses) return losses.error();
        return ToolAnswer{json{{"run", reports::to_json(report->run)},
                               {"metrics", reports::to_json(report->metrics)},
                               {"calls", reports::to_json(report->calls)},
                               {"losses", *losses},
                               {"tracing_cost", reports::to_json(report->tracing_cost)},
                               {"notes", report->notes}},
                          stats_text(*report, *losses)};
      });
}

// ---- get_causal_chains

// As the terminal's explain lists a chain, without its timeline.
std::string chain_text(const reports::CausalChain& chain, const reports::ChainWords& words) {
  std::string text = fmt::format("#{} {}\n", chain.rank, reports::chain_title(chain, words));
  for (const auto& line : reports::chain_cause_lines(words)) text += "    " + line + "\n";
  for (const auto& check : chain.checks) text += "    " + reports::change_check_text(check) + "\n";
  return text;
}

ToolSpec causal_chains_tool(Trace trace) {
  return make_tool(
      "get_causal_chains", "Causal chains of a run",
      "The explain report's causal chains: for the slow intervals of each op (CUDA calls in their latency tail, "
      "the main loop waiting for a batch), what the threads that fed it were doing, ranked by the time each cause "
      "overlapped them (an upper bound on what removing it saves, not a measured saving). Each suggested change "
      "says whether a run in the DB measured it (its run id and epoch medians) or gives the command that would. "
      "worker_health lists what killed or hung the job, or is about to (OOM kills, copy-on-write memory growth, "
      "/dev/shm, descriptors near RLIMIT_NOFILE, hangs), each tied to a process, with its change.",
      s::arguments({{"run", run_id_schema()},
                    {"top_n", bounded_integer("chains to return, highest ranked first (default 5)", 1, kChainsMax)},
                    {"min_severity", s::string_enum(severity_names(), "lowest severity to return (default LOW)")}},
                   {"run"}),
      s::object({{"run", reports::run_header_schema()},
                 {"verdict", s::string()},
                 {"wait_fraction", s::nullable(s::number())},
                 {"chains_total", s::integer("chains found at any severity")},
                 {"chains", s::array_of(reports::causal_chain_schema())},
                 {"slow_intervals", s::array_of(reports::slow_interval_schema())},
                 {"thresholds", reports::chain_thresholds_schema()},
                 {"worker_health", s::array_of(reports::health_finding_schema())},
                 {"notes", s::array_of(s::string())}}),
      [trace](const json& args) -> Result<ToolAnswer> {
        auto report = explain_run(*trace, args, false);
        if (!report) return report.error();
        const auto top_n = static_cast<size_t>(optional_integer(args, "top_n").value_or(kChainsDefault));
        // The schema's enum admits only the three names, so the lowest is a safe fallback.
        const auto floor = reports::parse_severity(args.value("min_severity", "LOW")).value_or(reports::Severity::low);
        json chains = json::array();
        std::string text = reports::run_verdict_line(report->run, report->metrics) + "\n";
        const auto& all = report->chains.chains;
        for (size_t i = 0; i < all.size() && chains.size() < top_n; ++i) {
          if (all[i].severity < floor) continue;
          chains.push_back(reports::to_json(all[i], report->chain_words[i]));
          text += chain_text(all[i], report->chain_words[i]);
        }
        text += reports::chains_shown_text(chains.size(), all.size(), args.value("min_severity", "LOW"), top_n) + "\n";
        for (size_t i = 0; i < report->health.findings.size(); ++i)
          text += reports::health_title(report->health.findings[i], report->health_words[i]) + "\n    " +
                  reports::change_line(report->health_words[i].change) + "\n";
        const reports::RunMetrics& m = report->metrics;
        return ToolAnswer{json{{"run", reports::to_json(report->run)},
                               {"verdict", reports::input_bound_name(m.verdict)},
                               {"wait_fraction", m.wait_fraction ? json(*m.wait_fraction) : json(nullptr)},
                               {"chains_total", all.size()},
                               {"chains", chains},
                               {"slow_intervals", reports::slow_intervals_json(report->chains)},
                               {"thresholds", reports::to_json(report->chains.thresholds)},
                               {"worker_health", reports::to_json(report->health)},
                               {"notes", report->notes}},
                          text};
      });
}

// ---- get_profile

constexpr int64_t kProfileTopDefault = 10;
constexpr int64_t kProfileTopMax = 100;

// Each role's heading and split as the terminal's explain words them, then its top functions by self samples.
std::string profile_text(const reports::ProfileAnalysis& profile, const std::string& role_filter, size_t top) {
  std::string text;
  for (const auto* roles : {&profile.roles, &profile.ranks}) {
    for (const reports::RoleProfile& role : *roles) {
      if (!role_filter.empty() && role.role != role_filter) continue;
      text += reports::role_profile_heading(role) + "\n";
      if (role.split) text += "  split: " + reports::split_text(*role.split) + "\n";
      const auto frames = role.top_by_self(top);
      for (size_t i = 0; i < frames.size() && i < kTextRows; ++i)
        text += "  " + reports::frame_share_line(frames[i]) + "\n";
      text += limited_list_end(std::min(frames.size(), kTextRows), frames.size());
    }
  }
  return text;
}

ToolSpec profile_tool(Trace trace) {
  return make_tool(
      "get_profile", "CPU profile of a run: where each role's CPU went",
      "The run's on-CPU samples per role (main, worker, pin, other) and per rank: the top functions by self samples "
      "(their own code) and by inclusive samples (anywhere on the stack), each with its share of the role's "
      "samples, and the main thread's split into batch building, the model's compute and the rest. Empty when no "
      "profile was taken (status says so).",
      s::arguments({{"run", run_id_schema()},
                    {"role", s::string_enum_of(contract::kRoles, "only this role (default: every role)")},
                    {"top_n", bounded_integer("functions per role, each way (default 10)", 1, kProfileTopMax)}},
                   {"run"}),
      s::object({{"run", reports::run_header_schema()}, {"verdict", s::string()}, {"profile", reports::profile_schema()}}),
      [trace](const json& args) -> Result<ToolAnswer> {
        auto report = explain_run(*trace, args, false);
        if (!report) return report.error();
        const auto top = static_cast<size_t>(optional_integer(args, "top_n").value_or(kProfileTopDefault));
        const std::string role = args.value("role", "");
        json profile = reports::to_json(reports::ProfileView{report->profile, report->profile_taken, top, role});
        std::string text = reports::run_verdict_line(report->run, report->metrics) + "\n" +
                           reports::profile_status_text(report->profile, report->profile_taken) + "\n";
        if (report->profile) text += profile_text(*report->profile, role, top);
        return ToolAnswer{json{{"run", reports::to_json(report->run)},
                               {"verdict", reports::input_bound_name(report->metrics.verdict)},
                               {"profile", std::move(profile)}},
                          text};
      });
}

// ---- get_per_process_breakdown

ToolSpec process_breakdown_tool(Trace trace) {
  return make_tool(
      "get_per_process_breakdown", "Per-role or per-process breakdown of a run",
      "Exact scheduler, memory and I/O counters of the run's threads summed per role (main, worker, pin, other) "
      "or per process (the main process split by role): on/off-CPU time, context switches, run-queue waits and "
      "their p50/p99 buckets, page allocations and faults, block I/O.",
      s::arguments({{"run", run_id_schema()},
                    {"by", s::string_enum({"role", "process"}, "group rows by role (default) or by process")}},
                   {"run"}),
      s::object({{"run", reports::run_header_schema()},
                 {"by", s::string_enum({"role", "process"})},
                 {"rows", s::array_of(reports::process_row_schema())}}),
      [trace](const json& args) -> Result<ToolAnswer> {
        const std::string by = args.value("by", "role");
        auto report = explain_run(*trace, args, by == "process");
        if (!report) return report.error();
        const auto& rows = by == "process" ? report->processes : report->roles;
        json rows_json = json::array();
        for (const auto& row : rows) rows_json.push_back(reports::to_json(row));
        std::string text = fmt::format("{} by {}:\n", reports::run_name(report->run), by);
        for (size_t i = 0; i < rows.size() && i < kTextRows; ++i) text += "  " + reports::process_summary(rows[i]) + "\n";
        text += limited_list_end(std::min(rows.size(), kTextRows), rows.size());
        return ToolAnswer{json{{"run", reports::to_json(report->run)}, {"by", by}, {"rows", rows_json}}, text};
      });
}

// ---- compare_runs

ToolSpec compare_tool(Trace trace) {
  return make_tool(
      "compare_runs", "Compare two runs",
      "Timings side by side, trace signatures, and the epoch-time difference of run_b over run_a decomposed into "
      "waiting for data (by cause), compute and the rest, as `ingero-bench compare` reports it.",
      s::arguments({{"run_a", run_id_schema("the run compared against")}, {"run_b", run_id_schema("the other run")}},
                   {"run_a", "run_b"}),
      reports::compare_report_schema(),
      [trace](const json& args) -> Result<ToolAnswer> {
        auto report = reports::make_compare_report(*trace, args["run_a"].get<int64_t>(), args["run_b"].get<int64_t>());
        if (!report) return report.error();
        std::string text = fmt::format("{} vs {}:\n", reports::run_name(report->a), reports::run_name(report->b));
        for (const auto& line : reports::explanation_lines(*report)) text += line + "\n";
        return ToolAnswer{reports::to_json(*report), text};
      });
}

// ---- get_recommendation

ToolSpec recommendation_tool(Trace trace) {
  return make_tool(
      "get_recommendation", "Recommend a configuration",
      "From the measured configurations (a sweep's, by default the last sweep's, else every run's): the one to use, "
      "its speed-up over the baseline with an interval, whether interleaved re-runs verified it, the configurations "
      "within noise of it, and the baseline's causal chains as evidence (`ingero-bench recommend --json`).",
      s::arguments({{"sweep", id_schema("sweep id (default: the last sweep; every run when the DB has none)")},
                    {"baseline_run", run_id_schema("the run whose configuration is the baseline (default: the "
                                                   "sweep's, else the first loader run)")}}),
      reports::recommend_report_schema(),
      [trace](const json& args) -> Result<ToolAnswer> {
        reports::RecommendOptions options;
        options.db = trace->path();
        options.sweep = optional_integer(args, "sweep");
        options.baseline_run = optional_integer(args, "baseline_run");
        auto report = reports::make_recommend_report(*trace, options);
        if (!report) return report.error();
        std::string text = reports::headline_text(*report) + "\n";
        for (const auto& reason : reports::reason_lines(*report)) text += "  " + reason + "\n";
        return ToolAnswer{reports::to_json(*report), text};
      });
}

// ---- get_timeline

// [from, until) in trace nanoseconds from whichever of the relative (s) or absolute (ns) bounds was given.
Result<std::optional<int64_t>> time_bound(const json& args, const char* seconds_key, const char* ns_key,
                                          int64_t run_start_ns) {
  const auto seconds = optional_number(args, seconds_key);
  const auto ns = optional_integer(args, ns_key);
  if (seconds && ns)
    return Error::bad_input(fmt::format("give {} or {}, not both", seconds_key, ns_key),
                            fmt::format("{} counts from the run's start; {} is a trace timestamp", seconds_key, ns_key));
  // Held to +-100 years, past any trace (1e308 once overflowed the conversion to nanoseconds).
  constexpr double kFarSeconds = 100.0 * 365 * 86400;
  if (seconds && std::isnan(*seconds))
    return Error::bad_input(fmt::format("{} is not a number", seconds_key), "give seconds from the run's start");
  if (seconds) return std::optional<int64_t>(run_start_ns + std::llround(std::clamp(*seconds, -kFarSeconds, kFarSeconds) * 1e9));
  if (ns) return std::optional<int64_t>(std::clamp<int64_t>(*ns, INT64_MIN / 2, INT64_MAX / 2));
  return ns;
}

json event_json(const reports::EventRow& e, int64_t run_start_ns) {
  return {{"op", e.op},           {"category", e.category},
          {"t_s", static_cast<double>(e.ts_ns - run_start_ns) / 1e9},
          {"ts_ns", e.ts_ns},     {"dur_ns", e.dur_ns},
          {"pid", e.pid},         {"tid", e.tid},
          {"ret", or_null(e.ret)}, {"bytes", or_null(e.bytes)},
          {"arg", or_null(e.arg)}, {"stream", or_null(e.stream)}};
}

std::string event_line(const json& e) {
  return fmt::format("  {:.6f} s  {} {} pid {} tid {}\n", e["t_s"].get<double>(), e["op"].get<std::string>(),
                     reports::format_duration_ns(e["dur_ns"].get<double>()), e["pid"].get<int64_t>(),
                     e["tid"].get<int64_t>());
}

ToolSpec timeline_tool(Trace trace) {
  const json event = s::object({{"op", s::string()},
                                {"category", s::string()},
                                {"t_s", s::number("start, seconds from the run's start")},
                                {"ts_ns", s::integer("start, trace timestamp (CLOCK_MONOTONIC ns)")},
                                {"dur_ns", s::integer()},
                                {"pid", s::integer()},
                                {"tid", s::integer()},
                                {"ret", s::nullable(s::integer())},
                                {"bytes", s::nullable(s::integer())},
                                {"arg", s::nullable(s::integer("fault/alloc count, worker id or batch index"))},
                                {"stream", s::nullable(s::integer())}});
  return make_tool(
      "get_timeline", "Events of a run over time",
      "The run's stored events in time order (CUDA calls, scheduler intervals, memory bursts, I/O, process "
      "events, batch waits and computes), optionally of one process or thread, overlapping a window given in "
      "seconds from the run's start (from_s, until_s) or as trace timestamps (from_ns, until_ns), of some "
      "categories. At most `limit` events (default 500, at most 5000); `truncated` says when more matched.",
      s::arguments(
          {{"run", run_id_schema()},
           {"pid", s::integer("only this process")},
           {"tid", s::integer("only this thread")},
           {"from_s", s::number("window start, seconds from the run's start")},
           {"until_s", s::number("window end, seconds from the run's start")},
           {"from_ns", s::integer("window start, trace timestamp in ns (instead of from_s)")},
           {"until_ns", s::integer("window end, trace timestamp in ns (instead of until_s)")},
           {"categories", s::array_of(s::string_enum_of(contract::category::kAll), "only these categories (default: all)")},
           {"limit", bounded_integer("most events to return (default 500)", 1, kTimelineMaxLimit)}},
          {"run"}),
      s::object({{"run_id", s::integer()},
                 {"run_start_ns", s::integer()},
                 {"from_ns", s::nullable(s::integer())},
                 {"until_ns", s::nullable(s::integer())},
                 {"events", s::array_of(event)},
                 {"returned", s::integer()},
                 {"limit", s::integer()},
                 {"truncated", s::boolean("more events matched than limit")}}),
      [trace](const json& args) -> Result<ToolAnswer> {
        auto run = trace->run(args["run"].get<int64_t>());
        if (!run) return run.error();
        reports::TimelineQuery query;
        auto from = time_bound(args, "from_s", "from_ns", run->start_ns);
        if (!from) return from.error();
        auto until = time_bound(args, "until_s", "until_ns", run->start_ns);
        if (!until) return until.error();
        query.from_ns = *from;
        query.until_ns = *until;
        query.pid = optional_integer(args, "pid");
        query.tid = optional_integer(args, "tid");
        query.categories = args.value("categories", std::vector<std::string>{});
        query.limit = optional_integer(args, "limit").value_or(kTimelineDefaultLimit);
        auto timeline = trace->timeline(run->run_id, query);
        if (!timeline) return timeline.error();
        json events = json::array();
        for (const auto& e : timeline->events) events.push_back(event_json(e, run->start_ns));
        std::string text =
            reports::timeline_summary_text({events.size(), run->run_id, run->start_ns, query.from_ns, query.until_ns,
                                            timeline->truncated, query.limit, kTimelineMaxLimit}) +
            "\n";
        for (size_t i = 0; i < events.size() && i < kTextRows; ++i) text += event_line(events[i]);
        text += limited_list_end(std::min(events.size(), kTextRows), events.size());
        return ToolAnswer{json{{"run_id", run->run_id},
                               {"run_start_ns", run->start_ns},
                               {"from_ns", or_null(query.from_ns)},
                               {"until_ns", or_null(query.until_ns)},
                               {"events", events},
                               {"returned", events.size()},
                               {"limit", query.limit},
                               {"truncated", timeline->truncated}},
                          text};
      });
}

// ---- run_sql

std::string cell_text(const json& cell) {
  if (cell.is_null()) return "NULL";
  return cell.is_string() ? cell.get<std::string>() : cell.dump();
}

// Tab-separated, as a client without structuredContent shows it to its model.
std::string sql_text(const SqlAnswer& answer, int64_t max_rows) {
  std::string text = reports::rows_summary_text(answer.rows.size(), answer.truncated,
                                                answer.truncated_by == "max_rows", max_rows, answer.elapsed_ms) +
                     "\n";
  std::string header;
  for (const auto& column : answer.columns) header += (header.empty() ? "" : "\t") + column;
  text += header + "\n";
  constexpr size_t kSqlTextRows = 50;
  for (size_t i = 0; i < answer.rows.size() && i < kSqlTextRows; ++i) {
    std::string line;
    for (const auto& cell : answer.rows[i]) line += (line.empty() ? "" : "\t") + cell_text(cell);
    text += line + "\n";
  }
  return text + limited_list_end(std::min(answer.rows.size(), kSqlTextRows), answer.rows.size());
}

ToolSpec sql_tool(std::shared_ptr<const ReadOnlySql> sql) {
  return make_tool(
      "run_sql", "Read-only SQL over the trace DB",
      fmt::format("One read-only SQL query (SELECT or WITH ... SELECT) over the trace DB, for what the other tools "
                  "do not answer; read the ingero://schema resource for the tables. Refused: writes, schema "
                  "changes, ATTACH, PRAGMA other than table_info and the like, functions that reach files or load "
                  "extensions, more than one statement. Stopped after {:g} s; at most max_rows rows (default {}, "
                  "at most {}). Queries run against {}.",
                  sql->time_limit().count() / 1000.0, kSqlDefaultRows, kSqlMaxRows, sql->source()),
      s::arguments({{"query", [] {
                       json q = s::string("one SQL statement that only reads");
                       q["minLength"] = 1;
                       return q;
                     }()},
                    {"max_rows", bounded_integer("most rows to return (default 200)", 1, kSqlMaxRows)}},
                   {"query"}),
      s::object({{"columns", s::array_of(s::string())},
                 {"rows", s::array_of(s::array_of(json{{"type", json::array({"integer", "number", "string", "null"})}}),
                                      "one array of cells per row, in column order; blobs as '<blob of N bytes>'")},
                 {"row_count", s::integer()},
                 {"truncated", s::boolean("more rows matched than returned")},
                 {"truncated_by", s::nullable(s::string_enum({"max_rows", "answer size"}))},
                 {"max_rows", s::integer()},
                 {"elapsed_ms", s::number()}}),
      [sql](const json& args) -> Result<ToolAnswer> {
        const int64_t max_rows = optional_integer(args, "max_rows").value_or(kSqlDefaultRows);
        auto answer = sql->query(args["query"].get<std::string>(), max_rows);
        if (!answer) return answer.error();
        return ToolAnswer{json{{"columns", answer->columns},
                               {"rows", answer->rows},
                               {"row_count", answer->rows.size()},
                               {"truncated", answer->truncated},
                               {"truncated_by", or_null(answer->truncated_by)},
                               {"max_rows", max_rows},
                               {"elapsed_ms", answer->elapsed_ms}},
                          sql_text(*answer, max_rows)};
      });
}

}  // namespace

Result<Registry> make_trace_registry(std::shared_ptr<const reports::TraceFile> trace,
                                     const TraceToolOptions& options) {
  auto sql = ReadOnlySql::open(trace, options.sql_time_limit);
  if (!sql) return sql.error();
  Registry registry;
  for (auto tool : {list_runs_tool(trace), trace_stats_tool(trace), causal_chains_tool(trace),
                    profile_tool(trace), process_breakdown_tool(trace), compare_tool(trace), recommendation_tool(trace),
                    timeline_tool(trace), sql_tool(*sql)}) {
    if (Status s = registry.add_tool(std::move(tool)); !s) return s.error();
  }
  if (Status s = add_trace_resources(registry, trace); !s) return s.error();
  if (Status s = add_investigate_prompt(registry); !s) return s.error();
  return registry;
}

ServerInfo trace_server_info(const reports::TraceFile& trace, const std::string& version) {
  return ServerInfo{
      "ingero-bench", "ingero-bench trace DB", version,
      fmt::format("Tools over the ingero-bench trace DB '{}': PyTorch data-loading runs traced with eBPF (CUDA calls, "
                  "scheduler, memory, I/O, batch timings). Start with list_runs; the `investigate` prompt walks "
                  "through a diagnosis. Every tool only reads the DB. Quote only numbers the tools return; a "
                  "suggested change that no run measured is unmeasured, not a saving.",
                  trace.path())};
}

}  // namespace ingero::mcp
