// SPDX-License-Identifier: Apache-2.0
// ingero-bench runs --db FILE: every run in a trace DB as one results table, so the
// runs of several invocations (a sweep split over calls) read side by side.
#include <cstdio>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/results_table.h"
#include "harness/sudo_user.h"
#include "reports/analysis/jobs.h"
#include "reports/text/rank_text.h"
#include "reports/analysis/run_metrics.h"
#include "reports/data/trace_data.h"
#include "reports/documents/report_doc.h"
#include "reports/render/report_render.h"

namespace ingero::harness {

namespace {

// Google Benchmark's JSON: one benchmark per run, its measured epochs as repetitions
// (iterations 1, time in ms), so tools/compare.py compares two DBs' runs by label.
nlohmann::json gbench_json(const std::vector<reports::RunRecord>& runs) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const auto& r : runs) {
    const std::vector<double> epochs = reports::measured_epochs(r);
    for (size_t i = 0; i < epochs.size(); ++i)
      benchmarks.push_back({{"name", r.label},
                            {"run_name", r.label},
                            {"run_type", "iteration"},
                            {"repetitions", epochs.size()},
                            {"repetition_index", i},
                            {"threads", 1},
                            {"iterations", 1},
                            {"real_time", epochs[i] * 1e3},
                            {"cpu_time", epochs[i] * 1e3},
                            {"time_unit", "ms"},
                            {"ingero_run_id", r.run_id}});
  }
  const nlohmann::json& machine = runs.back().machine;
  return {{"context",
           {{"executable", "ingero-bench"},
            {"num_cpus", machine.value("cpu_count", 0)},
            {"mhz_per_cpu", 0},
            {"cpu_scaling_enabled", false},
            {"library_build_type", "release"},
            {"host_name", machine.value("hostname", std::string())},
            {"caches", nlohmann::json::array()}}},
          {"benchmarks", benchmarks}};
}

}  // namespace

Result<int> run_runs_command(const RunsFlags& flags) {
  if (!flags.report.empty())
    if (Status s = check_writable_path("--report", flags.report); !s) return s.error();
  auto sudo = sudo_user();
  if (!sudo) return sudo.error();
  UserOutputs outputs(*sudo);  // under sudo the report is the user's, like a run's
  if (!flags.report.empty()) outputs.add_file(flags.report);
  auto trace = reports::TraceFile::open(flags.db);
  if (!trace) return trace.error();
  auto runs = (*trace)->runs();
  if (!runs) return runs.error();
  if (runs->empty())
    return Error::bad_input(fmt::format("{} holds no runs", flags.db),
                            fmt::format("record one with ingero-bench --workload dataloader --db {}", flags.db));
  if (flags.format == "gbench") {
    const std::string text = gbench_json(*runs).dump(2) + "\n";
    if (flags.report.empty())
      std::printf("%s", text.c_str());
    else if (Status s = write_file_atomically(flags.report, text); !s)
      return s.error();
    return kExitOk;
  }
  auto jobs = reports::find_jobs(**trace);
  if (!jobs) return jobs.error();
  std::vector<TableRow> rows;
  for (const auto& r : *runs) {
    // A bounded run's epochs are its first batches: its epoch times are not whole epochs'.
    const auto cut = reports::epoch_cut(r.config);
    const std::string label = cut ? fmt::format("{} ({} of {} batches)", r.label, cut->measured, cut->whole) : r.label;
    TableRow row = table_row(r.run_id, label, r.status, r.error, r.result, r.traced);
    const bool verify = r.sweep_phase == contract::sweep_phase::kVerify;
    if (r.sweep_id) row.sweep = fmt::format("{}{}", *r.sweep_id, verify ? " verify" : "");
    row.node = r.node;
    for (size_t j = 0; j < jobs->size(); ++j)
      if ((*jobs)[j].member(r.run_id)) row.job = std::to_string(j + 1);
    rows.push_back(std::move(row));
  }
  std::string table = render_results_table(rows);
  for (size_t j = 0; j < jobs->size(); ++j)
    table += fmt::format("{}job {}: {} (explain --run of any of them shows the job's ranks together)\n",
                         j == 0 ? "\n" : "", j + 1, reports::job_text((*jobs)[j]));
  std::printf("%s\n", table.c_str());
  for (const auto& note : (*trace)->notes()) std::printf("note: %s\n", note.c_str());
  if (!flags.report.empty()) {
    std::vector<int64_t> run_ids;
    for (const auto& r : *runs) run_ids.push_back(r.run_id);
    auto profiles = reports::run_profiles(**trace, run_ids);
    if (!profiles) return profiles.error();
    const std::string md = fmt::format("# ingero-bench runs in {}\n\nmachine: `{}`\n\n{}\n{}", flags.db,
                                       runs->back().machine.dump(), table,
                                       reports::render_profiles_markdown(*profiles));
    if (auto s = write_file_atomically(flags.report, md); !s) return s.error();
  }
  return kExitOk;
}

}  // namespace ingero::harness
