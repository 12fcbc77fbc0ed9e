// ingero-bench runs --db FILE: every run in a trace DB as one results table, so the
// runs of several invocations (a sweep split over calls) read side by side.
#include <cstdio>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "harness/commands.h"
#include "harness/results_table.h"
#include "reports/trace_data.h"

namespace ingero::harness {

Result<int> run_runs_command(const RunsFlags& flags) {
  if (!flags.report.empty())
    if (Status s = check_writable_path("--report", flags.report); !s) return s.error();
  auto trace = reports::TraceFile::open(flags.db);
  if (!trace) return trace.error();
  auto runs = (*trace)->runs();
  if (!runs) return runs.error();
  if (runs->empty())
    return Error::bad_input(fmt::format("{} holds no runs", flags.db),
                            fmt::format("record one with ingero-bench --workload dataloader --db {}", flags.db));
  std::vector<TableRow> rows;
  for (const auto& r : *runs) {
    TableRow row = table_row(r.run_id, r.label, r.status, r.error, r.result, r.traced);
    if (r.sweep_id) row.sweep = fmt::format("{}{}", *r.sweep_id, r.sweep_phase == "verify" ? " verify" : "");
    rows.push_back(std::move(row));
  }
  const std::string table = render_results_table(rows);
  std::printf("%s\n", table.c_str());
  for (const auto& note : (*trace)->notes()) std::printf("note: %s\n", note.c_str());
  if (!flags.report.empty()) {
    const std::string md = fmt::format("# ingero-bench runs in {}\n\nmachine: `{}`\n\n{}\n", flags.db,
                                       runs->back().machine.dump(), table);
    if (auto s = write_file_atomically(flags.report, md); !s) return s.error();
  }
  return kExitOk;
}

}  // namespace ingero::harness
