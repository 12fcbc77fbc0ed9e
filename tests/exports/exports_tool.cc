// SPDX-License-Identifier: Apache-2.0
// A stand-in for the two CLI commands until harness/ wires them, for the browser checks and for
// writing the committed HTML report:
//   exports_tool report --db FILE [--sweep ID | --run ID ...] [--format md|html|json] --out FILE
//   exports_tool export --db FILE --run ID [--max-events N] --out FILE
//   exports_tool export --format folded --db FILE [--run ID] [--role ROLE] --out FILE
// Exit codes as the CLI's: 0 written, 2 bad input (message and hint on stderr), 1 any other failure.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "reports/render/folded_export.h"
#include "reports/render/perfetto_export.h"
#include "reports/render/report_render.h"

namespace reports = ingero::reports;

namespace {

std::optional<int64_t> parse_id(const std::string& text) {
  try {
    size_t used = 0;
    const int64_t value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

int fail(const ingero::Error& error) {
  std::cerr << "error: " << error.message << "\n";
  if (!error.hint.empty()) std::cerr << "hint: " << error.hint << "\n";
  return error.exit_code;
}

int usage() {
  std::cerr << "usage: exports_tool report --db FILE [--sweep ID | --run ID ...] [--format md|html|json] --out FILE\n"
               "       exports_tool export --db FILE --run ID [--max-events N] --out FILE\n"
               "       exports_tool export --format folded --db FILE [--run ID] [--role ROLE] --out FILE\n";
  return ingero::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string command = argv[1];
  reports::ReportOptions report;
  reports::PerfettoOptions perfetto;
  std::string role;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (flag == "--db") {
      report.db = value;
    } else if (flag == "--out") {
      report.out = value;
    } else if (flag == "--role") {
      role = value;
    } else if (flag == "--format") {
      report.format = value;
    } else if (flag == "--sweep" || flag == "--run" || flag == "--max-events") {
      const auto id = parse_id(value);
      if (!id) return fail(ingero::Error::bad_input(flag + " " + value + ": not a whole number"));
      if (flag == "--sweep") report.sweep = *id;
      else if (flag == "--run") report.runs.push_back(*id);
      else perfetto.max_events = static_cast<size_t>(*id);
    } else {
      return usage();
    }
  }
  ingero::Status status;
  if (command == "report") {
    status = reports::write_report(report);
  } else if (command == "export" && report.format == "folded") {
    if (report.runs.size() > 1) return fail(ingero::Error::bad_input("export takes at most one --run ID"));
    const std::optional<int64_t> run = report.runs.empty() ? std::nullopt : std::optional(report.runs.front());
    status = reports::export_folded(report.db, run, role, report.out);
  } else if (command == "export") {
    if (report.runs.size() != 1) return fail(ingero::Error::bad_input("export takes one --run ID"));
    status = reports::export_perfetto(report.db, report.runs.front(), report.out, perfetto);
  } else {
    return usage();
  }
  return status.ok() ? 0 : fail(status.error());
}
