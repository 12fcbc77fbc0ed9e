// SPDX-License-Identifier: Apache-2.0
#include "harness/results_table.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/summary_text.h"

namespace ingero::harness {

namespace {

std::string ms(double seconds) { return fmt::format("{:.1f}", seconds * 1e3); }

std::optional<double> direct_time(const std::vector<TableRow>& rows) {
  for (const auto& r : rows) {
    if (r.failure.empty() && r.summary.label.rfind("direct", 0) == 0 && r.summary.label.find("shuffled") == std::string::npos &&
        r.summary.epoch_median_s > 0) {
      return r.summary.epoch_median_s;
    }
  }
  return std::nullopt;
}

// The measured epochs a record holds (none in a record of a run cut short before its first).
size_t kept_epochs(const nlohmann::json& record) {
  if (!record.is_object()) return 0;
  const auto it = record.find("epoch_seconds");
  return it != record.end() && it->is_array() ? it->size() : 0;
}

}  // namespace

TableRow table_row(int64_t run_id, const std::string& label, const std::string& status, const std::string& error,
                   const nlohmann::json& record, bool traced) {
  TableRow row;
  row.run_id = run_id;
  row.summary.label = label;
  auto summary = record.is_object() ? workloads::summary_from_json(record)
                                    : Result<workloads::ResultSummary>(Error::bad_input("no record"));
  if (summary && summary->status == contract::record_status::kOk && status == contract::status::kOk) {
    row.summary = *summary;
    row.summary.label = label;
    if (!traced) row.summary.label += reports::kUntracedSuffix;
    return row;
  }
  // An interrupted run, or one stopped early on purpose, keeps the epochs it measured: they
  // are its figures, the status says what cut them short.
  if (const size_t kept = kept_epochs(record); summary && kept > 0 && summary->status != contract::record_status::kFailed &&
                                                (status == contract::status::kOk || status == contract::status::kInterrupted)) {
    row.summary = *summary;
    row.summary.label = traced ? label : label + reports::kUntracedSuffix;
    const std::string& cut_by = status == contract::status::kInterrupted ? status : summary->status;
    row.summary.status = reports::kept_epochs_status(cut_by, kept, summary->error);
    return row;
  }
  std::string why = !error.empty() ? error : summary && !summary->error.empty() ? summary->error : "";
  row.failure = reports::failure_status(status, why);
  // A traced command or attach has no workload record: its status is all there is.
  // A run of a sweep of the user's command holds the job's timing instead.
  if (!summary && status == contract::status::kOk)
    row.failure = record.is_null() ? std::string(contract::status::kOk)
                  : record.contains("steps_per_s")
                      ? reports::job_timing_status(record.value("measured_steps", 0), record.value("steps_per_s", 0.0))
                      : reports::kNoWorkloadRecord;
  return row;
}

std::string render_results_table(const std::vector<TableRow>& rows) {
  const bool any_sweep = std::any_of(rows.begin(), rows.end(), [](const TableRow& r) { return !r.sweep.empty(); });
  std::set<std::string> nodes;
  for (const auto& r : rows)
    if (!r.node.empty()) nodes.insert(r.node);
  const bool several_nodes = nodes.size() > 1;
  const bool any_job = std::any_of(rows.begin(), rows.end(), [](const TableRow& r) { return !r.job.empty(); });
  std::vector<std::string> header = {"run", "configuration", "epoch s (median)", "min-max s", "samples/s",
                                     "H2D GB/s", "wait p50 ms", "wait p99 ms", "compute p50 ms", "waiting",
                                     "x direct", "status"};
  if (any_sweep) header.push_back("sweep");
  if (several_nodes) header.push_back("node");
  if (any_job) header.push_back("job");
  auto add_optional = [&](std::vector<std::string>& row, const TableRow& r) {
    if (any_sweep) row.push_back(r.sweep.empty() ? "-" : r.sweep);
    if (several_nodes) row.push_back(r.node.empty() ? "-" : r.node);
    if (any_job) row.push_back(r.job.empty() ? "-" : r.job);
  };
  std::vector<std::vector<std::string>> cells;
  const auto direct = direct_time(rows);
  for (const auto& r : rows) {
    const auto& s = r.summary;
    if (!r.failure.empty()) {
      std::vector<std::string> row(12, "-");
      row[0] = r.run_id ? std::to_string(r.run_id) : "-";
      row[1] = s.label;
      row[11] = r.failure;
      add_optional(row, r);
      cells.push_back(row);
      continue;
    }
    cells.push_back({std::to_string(r.run_id), s.label, fmt::format("{:.3f}", s.epoch_median_s),
                     fmt::format("{:.3f}-{:.3f}", s.epoch_min_s, s.epoch_max_s), fmt::format("{:.3g}", s.samples_per_s),
                     s.h2d_gbps > 0 ? fmt::format("{:.2f}", s.h2d_gbps) : "-", ms(s.wait.p50_s), ms(s.wait.p99_s),
                     ms(s.compute.p50_s), fmt::format("{:.0f} %", s.wait_fraction * 100),
                     direct ? fmt::format("{:.1f}", s.epoch_median_s / *direct) : "-", s.status});
    add_optional(cells.back(), r);
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    width[i] = header[i].size();
    for (const auto& row : cells) width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = "|";
    for (size_t i = 0; i < row.size(); ++i) out += fmt::format(" {:<{}} |", row[i], width[i]);
    return out + "\n";
  };
  std::string out = line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  out += line(rule);
  for (const auto& row : cells) out += line(row);
  return out;
}

}  // namespace ingero::harness
