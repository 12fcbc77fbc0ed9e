// ingero-bench runs --db FILE: every run in a trace DB as one results table, so the
// runs of several invocations (a sweep split over calls) read side by side.
#include <cstdio>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/sqlite.h"
#include "harness/commands.h"
#include "harness/results_table.h"

namespace ingero::harness {

namespace {

struct RunRow {
  int64_t run_id;
  std::string label;
  std::string status;
  bool traced;
  std::string result_json;
  std::string machine_json;
};

Result<std::vector<RunRow>> read_runs(const std::string& path) {
  auto db = sql::open(path, sql::Mode::read_only, 0);
  if (!db) return Error::bad_input(fmt::format("cannot open trace DB {}", path), "check the --db path");
  auto st = db->prepare(
      "SELECT run_id, label, status, traced, coalesce(result_json, ''), machine_json FROM runs ORDER BY run_id");
  if (!st) {
    return Error::bad_input(fmt::format("{} is not an ingero-bench trace DB", path),
                            "give the file written by ingero-bench --db");
  }
  std::vector<RunRow> rows;
  Status read = st->for_each_row([&](const sql::Statement& row) {
    rows.push_back({row.column_int(0), row.column_text(1), row.column_text(2), row.column_int(3) != 0,
                    row.column_text(4), row.column_text(5)});
  });
  if (!read) return read.error();
  return rows;
}

}  // namespace

Result<int> run_runs_command(const std::string& db_path, const std::string& report_path) {
  auto runs = read_runs(db_path);
  if (!runs) return runs.error();
  if (runs->empty()) return Error::bad_input(fmt::format("{} holds no runs", db_path));
  std::vector<TableRow> rows;
  for (const auto& r : *runs) {
    TableRow row;
    row.run_id = r.run_id;
    row.summary.label = r.label;
    auto j = nlohmann::json::parse(r.result_json, nullptr, false);
    auto summary = j.is_discarded() ? Result<workloads::ResultSummary>(Error::bad_input("no record"))
                                    : workloads::summary_from_json(j);
    if (summary && summary->status == "ok") {
      row.summary = *summary;
      if (!r.traced) row.summary.label += " (untraced)";
    } else if (summary) {
      row.failure = summary->error.empty() || summary->error == r.status ? r.status : r.status + ": " + summary->error;
    } else {
      row.failure = r.status == "ok" ? "no workload record" : r.status;
    }
    rows.push_back(row);
  }
  const std::string table = render_results_table(rows);
  std::printf("%s", table.c_str());
  if (!report_path.empty()) {
    const std::string md = fmt::format("# ingero-bench runs in {}\n\nmachine: `{}`\n\n{}\n", db_path,
                                       runs->back().machine_json, table);
    if (auto s = write_file_atomically(report_path, md); !s) return s.error();
  }
  return kExitOk;
}

}  // namespace ingero::harness
