// SPDX-License-Identifier: Apache-2.0
#include "reports/text/run_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/format.h"
#include "reports/text/tracing_cost_text.h"

namespace ingero::reports {
namespace {

std::string json_text(const nlohmann::json& object, const char* key, const char* fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// --db-max-mb: what was dropped to keep the file under the cap, and up to when.
std::optional<std::string> dropped_events_note(const RunAnalysis& a) {
  const auto cut = a.context.setting(contract::kEventsDroppedBeforeSetting);
  if (!cut) return std::nullopt;
  const auto cap = a.context.setting(contract::kDbMaxMbSetting);
  const auto count = a.context.setting(contract::kEventsDroppedSetting);
  int64_t cut_ns = 0;
  std::optional<int64_t> dropped;
  try {
    cut_ns = std::stoll(*cut);
    if (count) dropped = std::stoll(*count);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return fmt::format("events before {:.1f} s into the run were dropped to keep the DB under {} MiB ({} events, "
                     "with their GPU and process samples); counts from events cover only what came after, "
                     "per-thread totals, call counts and histograms are exact",
                     static_cast<double>(cut_ns - a.context.run.start_ns) / 1e9, cap.value_or("?"),
                     dropped ? format_count(*dropped) : std::string("?"));
}

}  // namespace

std::vector<std::string> data_notes(const RunAnalysis& a) {
  std::vector<std::string> notes = a.file_notes;
  const auto& run = a.context.run;
  if (!run.traced) notes.push_back("run was not traced (--no-trace): timings only, no host or CUDA events");
  if (run.traced && !a.metrics.events_lost) {
    notes.push_back("event losses unknown: the run never recorded them (status '" + run.status +
                    "'); counts from events may be incomplete");
  } else if (a.metrics.events_lost && *a.metrics.events_lost > 0) {
    std::string sources;
    for (const auto& [source, dropped] : *a.context.losses)
      if (dropped > 0) sources += fmt::format("{}{} {}", sources.empty() ? "" : ", ", source, format_count(dropped));
    notes.push_back(fmt::format("{} events could not be delivered ({}); counts from events are lower bounds, "
                                "per-thread totals are exact",
                                format_count(*a.metrics.events_lost), sources));
  } else if (run.traced) {
    notes.push_back("no events lost (every ring buffer and the writer queue delivered everything)");
  }
  if (auto note = dropped_events_note(a)) notes.push_back(*note);
  for (std::string_view key :
       {contract::kOffcpuMinNsSetting, contract::kIowaitMinNsSetting, contract::kRunqMinNsSetting}) {
    const auto value = a.context.setting(key);
    if (!value) continue;
    notes.push_back(fmt::format("{} = {} ns: shorter intervals are not stored as events, so they count as "
                                "on-CPU time in the causal chains (exact totals are in the process table)",
                                key, *value));
  }
  for (const CallLatencyRow& row : a.calls) {
    if (row.estimate) {
      notes.push_back(fmt::format(
          "{}: {} calls, {}: {} (a duty cycle, because probing every call would cost its thread more than "
          "the run's hot share); the kernel counted the {} calls it probed, and its percentiles are log2 bucket "
          "upper bounds over them",
          row.function, format_calls(row.calls, row.estimate),
          row.estimate->lower_bound_only() ? "a lower bound only (too few windows to give the detached time a "
                                             "rate, or its traps took most of them)"
                                           : "estimated",
          sampled_share_text(row.estimate), format_count(row.calls)));
      if (row.cut.value_or(0) > 0) notes.push_back(cut_calls_text(row.function, *row.cut));
      continue;
    }
    if (row.cut.value_or(0) > 0) notes.push_back(cut_calls_text(row.function, *row.cut));
    if (row.exact) continue;
    notes.push_back(fmt::format("{}: {} calls counted exactly in the kernel; its percentiles are log2 bucket upper "
                                "bounds over the whole run (only calls of at least {} ns were stored one by one)",
                                row.function, format_count(row.calls),
                                a.context.setting(contract::kCallStreamMinNsSetting).value_or("?")));
  }
  const bool has_workers = std::any_of(a.context.threads.begin(), a.context.threads.end(),
                                       [](const ThreadRecord& t) { return t.role == contract::kRoleWorker; });
  if (has_workers && a.events_of(std::string(contract::op::kWorkerStart)) == 0)
    notes.push_back("worker start-up (fork to ready) was not measured in this run: no chain blames it; the "
                    "workers' first batches count as their per-sample work");
  auto observer = a.context.settings.find(std::string(contract::kObserverSetting));
  if (observer != a.context.settings.end() && observer->second == contract::kObserverOff)
    notes.push_back("the DataLoader observer was off (--no-observer): no batch timings from the job itself");
  else if (observer != a.context.settings.end() && observer->second == contract::kObserverUnused)
    notes.push_back("the DataLoader observer was on, but no Python process of the job iterated a torch DataLoader");
  else if (observer != a.context.settings.end() && observer->second == contract::kObserverUnreached)
    notes.push_back(fmt::format("the DataLoader observer did not reach the job's Python processes (the batch waits "
                                "are estimated from wake-ups): {}",
                                a.context.setting(contract::kObserverUnreachedSetting).value_or("why is not known")));
  if (a.metrics.batch_source == BatchSource::wakeups)
    notes.push_back(fmt::format(
        "batch waits estimated from wake-ups (nothing was injected into the job): a main-thread blocked interval "
        "of at least offcpu_min_ns that a loader worker or the pin-memory thread ended counts as waiting for data, "
        "with the run-queue wait after the wake-up; shorter ones, and waits another thread ended, do not ({} ended "
        "by other threads). next()'s time around each batch's arrival is an estimate: from the wake-up to the "
        "main thread's next hand-off to a thread of its own (the index sent to a worker), the preemption at that "
        "hand-off, and the time off the CPU just before it blocked for the batch",
        format_duration_ns(static_cast<double>(a.metrics.wakeups->by_others_ns))));
  if (!a.window.whole_run)
    notes.push_back(fmt::format("window: last {} of the run; the process table, CPU share and call counts cover the "
                                "whole run (kernel totals are per run)",
                                format_seconds(static_cast<double>(a.window.length_ns()) / 1e9)));
  if (run.status != contract::status::kOk)
    notes.push_back(fmt::format("run status is '{}'{}", run.status, run.error.empty() ? "" : ": " + run.error));
  return notes;
}

std::string machine_text(const nlohmann::json& m) {
  std::string memory = "?";
  if (m.is_object() && m.contains("memory_bytes") && m["memory_bytes"].is_number())
    memory = format_bytes(m["memory_bytes"].get<double>());
  return fmt::format("{}, {} cores, {} memory, kernel {}, GPU {}, torch {}", json_text(m, "cpu_model", "?"),
                     json_text(m, "cpu_count", "?"), memory, json_text(m, "kernel", "?"), json_text(m, "gpu", "none"),
                     json_text(m, "torch_version", "?"));
}

}  // namespace ingero::reports
