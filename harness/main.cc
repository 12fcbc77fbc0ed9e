// SPDX-License-Identifier: Apache-2.0
// ingero-bench: runs PyTorch data-loading workloads (the LibTorch ones in the workload
// program beside it, so that this one loads no LibTorch) under an embedded eBPF tracer,
// stores the trace in SQLite and explains it. This file is the one place where errors
// become messages and exit codes.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/crash_handler.h"
#include "harness/ci_command.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/signals.h"
#include "harness/sudo_user.h"
#include "harness/sweep_command.h"
#include "mcp/trace_server.h"
#include "reports/render/commands.h"
#include "reports/render/folded_export.h"
#include "reports/render/perfetto_export.h"
#include "reports/render/report_render.h"

namespace {

using ingero::Error;
using ingero::Result;
using ingero::Status;
using ingero::harness::Command;

int report_error(const Error& e) {
  std::fprintf(stderr, "ingero-bench: error: %s\n", e.message.c_str());
  if (!e.hint.empty()) std::fprintf(stderr, "  fix: %s\n", e.hint.c_str());
  return e.exit_code;
}

int finish(const Result<int>& r) { return r ? r.value() : report_error(r.error()); }
int finish(const Status& s) { return s ? ingero::kExitOk : report_error(s.error()); }

// A reader's --out, written as the user behind sudo would find it: theirs, with the folders made for
// it, like a run's outputs (harness/sudo_user.h).
template <class Write>
int write_for_user(const std::string& out, Write&& write) {
  auto sudo = ingero::harness::sudo_user();
  if (!sudo) return report_error(sudo.error());
  ingero::harness::UserOutputs outputs(*sudo);
  if (!out.empty()) outputs.add_file(out);
  return finish(write());
}

int dispatch(const ingero::harness::ParsedCommand& c) {
  namespace h = ingero::harness;
  namespace r = ingero::reports;
  switch (c.command) {
    case Command::workload: return finish(h::run_workload_command(c.workload));
    case Command::sweep: return finish(h::run_sweep_command(c.sweep));
    case Command::trace: return finish(h::run_trace_command(c.trace));
    case Command::runs: return finish(h::run_runs_command(c.runs));
    case Command::merge: return finish(h::run_merge_command(c.merge));
    case Command::ci: return finish(h::run_ci_command(c.ci));
    case Command::mcp: {
      ingero::mcp::TraceServerOptions options;
      options.stop_signal = h::interrupt_signal;  // SIGINT, SIGTERM, SIGHUP...: stop after the message
      return ingero::mcp::serve_trace_db(c.mcp.db, std::cin, std::cout, std::cerr, options);
    }
    case Command::report:
      return write_for_user(c.report.out, [&] {
        return r::write_report({c.report.db, c.report.sweep, c.report.runs, c.report.format, c.report.out});
      });
    case Command::export_trace:
      return write_for_user(c.export_trace.out, [&] {
        if (c.export_trace.format == "folded")
          return r::export_folded(c.export_trace.db, c.export_trace.run, c.export_trace.role, c.export_trace.out);
        return r::export_perfetto(c.export_trace.db, *c.export_trace.run, c.export_trace.out);
      });
    case Command::explain:
      return finish(r::explain({c.explain.db, c.explain.run, c.explain.per_process, c.explain.since_s, c.explain.json},
                               std::cout));
    case Command::compare:
      return finish(r::compare({c.compare.db, c.compare.run_a, c.compare.run_b, c.compare.json}, std::cout));
    case Command::recommend:
      return finish(r::recommend({c.recommend.db, c.recommend.sweep, c.recommend.baseline_run, c.recommend.json},
                                 std::cout));
    case Command::help: break;
  }
  std::fputs(c.help_text.c_str(), c.exit_code == 0 ? stdout : stderr);
  if (c.exit_code != 0)
    return report_error(Error::bad_input("nothing to do", "e.g. ingero-bench --workload dataloader"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ingero::install_crash_handlers();
  auto parsed = ingero::harness::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed) return report_error(parsed.error());
  ingero::harness::install_interrupt_handlers();
  return dispatch(*parsed);
}
