#include "reports/run_analysis.h"

#include <fmt/format.h>

#include "reports/format.h"

namespace ingero::reports {
namespace {

std::string json_text(const nlohmann::json& object, const char* key, const char* fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

Result<RunAnalysis> analyze_run(const TraceFile& trace, const RunRecord& run,
                                std::optional<double> since_s, WaitSelection waits) {
  auto context = trace.context(run);
  if (!context) return context.error();
  auto events = trace.events(run.run_id);
  if (!events) return events.error();
  RunAnalysis a{std::move(context.value()), std::move(events.value()), {}, {}, {}, {}};
  a.window = analysis_window(a.context.run, a.events, since_s);
  a.metrics = compute_run_metrics(a.context, a.events, a.window);
  a.cuda = cuda_latency_table(a.events, a.window);
  a.chains = analyze_causal_chains(ChainInputs{a.context, a.events, a.window, a.metrics, a.cuda, waits, true});
  return a;
}

std::vector<std::string> data_notes(const RunAnalysis& a) {
  std::vector<std::string> notes;
  const auto& run = a.context.run;
  if (!run.traced) notes.push_back("run was not traced (--no-trace): timings only, no host or CUDA events");
  if (a.metrics.events_lost > 0) {
    std::string sources;
    for (const auto& [source, dropped] : a.context.losses) {
      if (dropped > 0) sources += fmt::format("{}{} {}", sources.empty() ? "" : ", ", source, format_count(dropped));
    }
    notes.push_back(fmt::format("{} events could not be delivered ({}); counts from events are lower bounds, "
                                "per-thread totals are exact", format_count(a.metrics.events_lost), sources));
  } else if (run.traced) {
    notes.push_back("no events lost (every ring buffer and the writer queue delivered everything)");
  }
  for (const char* key : {"offcpu_min_ns", "runq_min_ns"}) {
    auto it = a.context.settings.find(key);
    if (it == a.context.settings.end()) continue;
    notes.push_back(fmt::format("{} = {} ns: shorter intervals are not stored as events, so they count as "
                                "on-CPU time in the causal chains (exact totals are in the process table)",
                                key, it->second));
  }
  if (!a.window.whole_run) {
    notes.push_back(fmt::format("window: last {} of the run; the process table and CPU share cover the whole run "
                                "(kernel totals are per run)", format_seconds(static_cast<double>(a.window.length_ns()) / 1e9)));
  }
  if (run.status != "ok") notes.push_back(fmt::format("run status is '{}'", run.status));
  return notes;
}

std::string machine_text(const RunRecord& run) {
  const auto& m = run.machine;
  std::string memory = "?";
  if (m.is_object() && m.contains("memory_bytes") && m["memory_bytes"].is_number()) {
    memory = format_bytes(m["memory_bytes"].get<double>());
  }
  return fmt::format("{}, {} cores, {} memory, kernel {}, GPU {}, torch {}", json_text(m, "cpu_model", "?"),
                     json_text(m, "cpu_count", "?"), memory, json_text(m, "kernel", "?"),
                     json_text(m, "gpu", "none"), json_text(m, "torch_version", "?"));
}

}  // namespace ingero::reports
