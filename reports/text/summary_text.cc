// SPDX-License-Identifier: Apache-2.0
#include "reports/text/summary_text.h"

#include <fmt/format.h>

#include "reports/text/format.h"
#include "reports/text/profile_text.h"
#include "reports/text/verdict_text.h"

namespace ingero::reports {

std::string run_name(const RunHeader& run) { return fmt::format("run {} '{}'", run.run_id, run.label); }

std::string verdict_summary(const RunMetrics& m) {
  std::string text = verdict_words(m);
  if (m.wait_fraction)
    text += fmt::format(" (waited for data {} of the time, from the {})", format_percent(*m.wait_fraction),
                        m.wait_fraction_source);
  return text;
}

std::string run_verdict_line(const RunHeader& run, const RunMetrics& m) {
  return run_name(run) + ": " + verdict_summary(m);
}

std::string unanalysable_run_text(int64_t run_id, const std::string& why) {
  return fmt::format("run {}: cannot be analysed: {}", run_id, why);
}

std::string chain_title(const CausalChain& chain, const ChainWords& words) {
  return fmt::format("[{}] {}", severity_name(chain.severity), words.summary);
}

std::vector<std::string> chain_cause_lines(const ChainWords& words) {
  return {"root cause: " + words.root_cause, change_line(words.recommendation)};
}

std::string chains_shown_text(size_t shown, size_t total, const std::string& min_severity, size_t top) {
  return fmt::format("{} of {} chains shown (min severity {}, top {})", shown, total, min_severity, top);
}

std::string health_title(const HealthFinding& finding, const HealthWords& words) {
  return fmt::format("[{}] {}: {}", severity_name(finding.severity), words.title, words.summary);
}

std::string change_line(const std::string& change) { return "change: " + change; }

std::string call_summary(const CallLatencyRow& row) {
  return fmt::format("{}: {} calls{}, p50 {}, p99 {}, total {} ({})", row.function, format_calls(row.calls, row.estimate),
                     row.estimate ? " (estimated: " + sampled_share_text(row.estimate) + ")" : "",
                     format_duration_ns(row.stats.p50_ns), format_duration_ns(row.stats.p99_ns),
                     format_duration_ns(row.stats.total_ns),
                     row.exact ? "exact percentiles" : "percentiles are log2 bucket upper bounds");
}

std::string process_summary(const ProcessRow& row) {
  const auto& c = row.counters;
  return fmt::format("{}{}: {} process(es), {} thread(s); on CPU {}, off CPU {}, run-queue wait {} over {} waits, "
                     "{} page faults, {} allocated",
                     row.name, row.pid ? fmt::format(" (pid {})", row.pid) : "", row.processes, row.threads,
                     format_duration_ns(c.oncpu_ns), format_duration_ns(c.offcpu_ns), format_duration_ns(c.runq_ns),
                     format_count(c.runq_count), format_count(c.page_faults), format_bytes(c.page_alloc_bytes));
}

std::string role_profile_heading(const RoleProfile& role) {
  return fmt::format("{}: {} samples on {} thread{}", role_profile_name(role), format_count(role.samples), role.threads,
                     role.threads == 1 ? "" : "s");
}

std::string frame_share_line(const FrameShare& frame) {
  return fmt::format("{} self, {} incl  {}", format_percent(frame.self_share), format_percent(frame.inclusive_share),
                     frame_text(frame));
}

std::string losses_meaning(const std::optional<std::map<std::string, int64_t>>& losses) {
  if (!losses) return "unknown: the run never recorded its losses (its harness died before the end)";
  int64_t dropped = 0;
  for (const auto& [source, count] : *losses) dropped += count;
  return dropped == 0 ? "nothing lost: every ring buffer and the writer queue delivered everything"
                      : "some records were dropped; by_source says where";
}

std::string run_list_line(const RunRecord& run, const std::string& mode, std::optional<double> epoch_median_s) {
  std::string line = fmt::format("run {} '{}' ({}{}, {})", run.run_id, run.label, run.kind,
                                 mode.empty() ? "" : ", " + mode, run.status);
  if (epoch_median_s) line += ": epoch median " + format_seconds(*epoch_median_s);
  if (run.sweep_id)
    line += fmt::format(" [sweep {}, {}]", *run.sweep_id, run.sweep_phase.empty() ? "no phase" : run.sweep_phase);
  return line;
}

std::string more_rows_text(size_t shown, size_t total) {
  return shown < total ? fmt::format("  ... {} more in structuredContent", total - shown) : "";
}

std::string timeline_summary_text(const TimelineSummary& t) {
  auto seconds = [&](int64_t ns) { return fmt::format("{:g} s", static_cast<double>(ns - t.run_start_ns) / 1e9); };
  const std::string window =
      !t.from_ns && !t.until_ns ? ""
                                : fmt::format("{}{} after the run's start", t.from_ns ? " from " + seconds(*t.from_ns) : "",
                                              t.until_ns ? " until " + seconds(*t.until_ns) : "");
  return fmt::format("{} events of run {}{}{}", t.events, t.run_id, window,
                     t.truncated ? fmt::format(" (truncated at limit {}: narrow the window or filters, or raise limit "
                                               "up to {})",
                                               t.limit, t.max_limit)
                                 : "");
}

std::string rows_summary_text(size_t rows, bool truncated, bool by_max_rows, int64_t max_rows, double elapsed_ms) {
  std::string text = fmt::format("{} rows", rows);
  if (truncated)
    text += by_max_rows ? fmt::format(" (truncated at max_rows {})", max_rows)
                        : " (truncated: the answer reached its size limit)";
  return text + fmt::format(" in {:.1f} ms", elapsed_ms);
}

std::string diagnosis_heading(const std::string& db_path) {
  return fmt::format("diagnosis (details: ingero-bench explain --db {} --run ID):", db_path);
}

std::string diagnosis_unavailable_text(const std::string& why) { return "diagnosis unavailable: " + why; }

std::string kept_epochs_status(const std::string& cut_by, size_t kept, const std::string& error) {
  const std::string why = error.empty() || error == cut_by ? "" : ": " + error;
  return fmt::format("{}, {} epoch{} kept{}", cut_by, kept, kept == 1 ? "" : "s", why);
}

std::string failure_status(const std::string& status, const std::string& why) {
  return why.empty() || why == status ? status : status + ": " + why;
}

std::string job_timing_status(int64_t measured_steps, double steps_per_s) {
  return fmt::format("ok: job, {} steps timed, {:.3g} steps/s", measured_steps, steps_per_s);
}

}  // namespace ingero::reports
