// ingero-bench: runs PyTorch data-loading workloads through LibTorch under an embedded
// eBPF tracer, stores the trace in SQLite and explains it. This file is the one place
// where errors become messages and exit codes.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/commands.h"
#include "harness/signals.h"
#include "reports/commands.h"
#include "workloads/workload_process.h"

namespace {

using ingero::Error;
using ingero::Result;
using ingero::Status;

int report_error(const Error& e) {
  std::fprintf(stderr, "ingero-bench: error: %s\n", e.message.c_str());
  if (!e.hint.empty()) std::fprintf(stderr, "  fix: %s\n", e.hint.c_str());
  return e.exit_code;
}

int finish(const Result<int>& r) { return r ? r.value() : report_error(r.error()); }
int finish(const Status& s) { return s ? ingero::kExitOk : report_error(s.error()); }

void add_trace_flags(CLI::App* app, ingero::harness::TraceFlags* f) {
  app->add_option("--db", f->db, "Trace database (SQLite); runs accumulate in it")->capture_default_str();
  app->add_flag("--no-trace", f->no_trace, "Run without the eBPF tracer (timings only; no root needed)");
  app->add_flag("--system-wide", f->system_wide, "Trace every process, not only the workload's tree");
  app->add_option("--cudart", f->cudart, "Probe this CUDA library file instead of the ones the workload maps")
      ->check(CLI::ExistingFile);
  app->add_option("--offcpu-min-us", f->offcpu_min_us, "Record off-CPU intervals at least this long individually")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app->add_option("--runq-min-us", f->runq_min_us, "Record run-queue waits at least this long individually")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app->add_option("--ringbuf-mb", f->ringbuf_mb, "Size of each BPF ring buffer in MiB (power of two)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
}

void add_workload_flags(CLI::App& app, ingero::harness::WorkloadFlags* f) {
  auto& c = f->sweep.base;
  app.add_option("--workload", f->workload, "Workload family to run: dataloader");
  app.add_option("--mode", f->sweep.modes,
                 "Modes, comma-separated, or all: direct, direct-shuffled, resident, loader, loader-batched, "
                 "torch-loader, python (the real PyTorch DataLoader), python-direct")
      ->delimiter(',')->capture_default_str();
  app.add_option("--device", c.device, "auto (cuda when available), cpu or cuda")->capture_default_str();
  app.add_option("--samples", c.samples, "Dataset rows N (CPU-only default is scaled down)")->capture_default_str();
  app.add_option("--features", c.features, "Dataset columns F")->capture_default_str();
  app.add_option("--hidden", c.hidden, "Model hidden width")->capture_default_str();
  app.add_option("--classes", c.classes, "Model outputs")->capture_default_str();
  app.add_option("--batch-size", c.batch_size, "Samples per batch")->capture_default_str();
  app.add_option("--num-workers", f->sweep.num_workers, "Loader worker processes; a list sweeps (e.g. 0,2,4,8)")
      ->delimiter(',')->capture_default_str();
  app.add_option("--prefetch-factor", f->sweep.prefetch_factors,
                 "Batches in flight per worker (PyTorch default 2; needs workers); a list sweeps")
      ->delimiter(',');
  app.add_flag("--pin-memory", c.pin_memory, "Copy batches into page-locked memory in a pin thread (CUDA only)");
  app.add_flag("--persistent-workers", c.persistent_workers, "Keep workers alive across epochs");
  app.add_flag("--shuffle,!--no-shuffle", c.shuffle, "Visit samples in a fresh random order each epoch (default on)");
  app.add_flag("--drop-last", c.drop_last, "Drop the last incomplete batch");
  app.add_option("--epochs", c.epochs, "Measured epochs per repeat")->capture_default_str();
  app.add_option("--warmup-epochs", c.warmup_epochs, "Unmeasured epochs before the first measured one")->capture_default_str();
  app.add_option("--repeat", c.repeat, "Repeat the measured epochs with a fresh loader (median/min/max over all)")
      ->capture_default_str();
  app.add_flag("--train", c.train, "Forward + backward + SGD step instead of inference under no-grad");
  app.add_option("--cpus", c.cpus, "Pin the workload and its workers to N cores (0: not pinned)")->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of the dataset, model and shuffle order")->capture_default_str();
  app.add_option("--out", f->out_dir, "Folder for one JSON result record per run")->capture_default_str();
  app.add_option("--report", f->report, "Also write the results table as Markdown to this file");
  app.add_option("--python", f->python, "python3 with torch for the python modes (default: first that imports torch)");
}

}  // namespace

int main(int argc, char** argv) {
  // The workload process: `ingero-bench __workload --config JSON --result PATH`.
  if (argc == 6 && std::string(argv[1]) == "__workload" && std::string(argv[2]) == "--config" &&
      std::string(argv[4]) == "--result") {
    return ingero::workloads::workload_process_main(argv[3], argv[5]);
  }

  CLI::App app{"ingero-bench: benchmark and diagnose PyTorch data loading (pytorch/pytorch#154318) with eBPF"};
  app.set_version_flag("--version", "ingero-bench 0.1.0");
  ingero::harness::WorkloadFlags workload;
  workload.sweep.modes = {"direct", "loader"};
  add_workload_flags(app, &workload);
  add_trace_flags(&app, &workload.trace);

  auto* trace_cmd = app.add_subcommand("trace", "Trace any command (e.g. your own training script) into the trace DB");
  ingero::harness::TraceFlags trace_flags;
  std::vector<std::string> command;
  add_trace_flags(trace_cmd, &trace_flags);
  trace_cmd->add_option("command", command, "The command and its arguments, after --")->required();
  trace_cmd->prefix_command();

  auto* runs_cmd = app.add_subcommand("runs", "List the runs in a trace DB as one results table");
  std::string runs_db, runs_report;
  runs_cmd->add_option("--db", runs_db, "Trace database")->required();
  runs_cmd->add_option("--report", runs_report, "Also write the table as Markdown to this file");

  auto* explain_cmd = app.add_subcommand("explain", "Explain a traced run: metrics, per-process breakdown, causal chains");
  ingero::reports::ExplainOptions explain;
  bool explain_last = false;
  int64_t explain_run = 0;
  double since_s = 0;
  explain_cmd->add_option("--db", explain.db, "Trace database")->required();
  auto* run_opt = explain_cmd->add_option("--run", explain_run, "Run id (default: the last run)");
  explain_cmd->add_flag("--last", explain_last, "The last run in the DB")->excludes(run_opt);
  explain_cmd->add_flag("--per-process", explain.per_process, "Show every process and thread role");
  auto* since_opt = explain_cmd->add_option("--since", since_s, "Only the last N seconds of the run")
                        ->check(CLI::PositiveNumber);
  explain_cmd->add_flag("--json", explain.json, "One JSON document instead of text");

  auto* compare_cmd = app.add_subcommand("compare", "Compare two runs side by side and explain the ratio");
  ingero::reports::CompareOptions compare;
  compare_cmd->add_option("--db", compare.db, "Trace database")->required();
  compare_cmd->add_option("run_a", compare.run_a, "First run id")->required();
  compare_cmd->add_option("run_b", compare.run_b, "Second run id")->required();
  compare_cmd->add_flag("--json", compare.json, "JSON output");

  auto* recommend_cmd = app.add_subcommand("recommend", "Recommend a loading configuration from the runs in a DB");
  ingero::reports::RecommendOptions recommend;
  int64_t baseline = 0;
  recommend_cmd->add_option("--db", recommend.db, "Trace database")->required();
  auto* baseline_opt = recommend_cmd->add_option("--baseline", baseline, "Run id of your current configuration");
  recommend_cmd->add_flag("--json", recommend.json, "JSON output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version exit 0; every other parse error is bad input (exit 2).
    const int code = app.exit(e);
    return code == 0 ? 0 : ingero::kExitBadInput;
  }

  ingero::harness::install_interrupt_handlers();
  if (*trace_cmd) return finish(ingero::harness::run_trace_command(trace_flags, command));
  if (*runs_cmd) return finish(ingero::harness::run_runs_command(runs_db, runs_report));
  if (*explain_cmd) {
    if (*run_opt) explain.run = explain_run;
    if (*since_opt) explain.since_s = since_s;
    return finish(ingero::reports::explain(explain, std::cout));
  }
  if (*compare_cmd) return finish(ingero::reports::compare(compare, std::cout));
  if (*recommend_cmd) {
    if (*baseline_opt) recommend.baseline_run = baseline;
    return finish(ingero::reports::recommend(recommend, std::cout));
  }
  if (workload.workload.empty()) {
    std::fprintf(stderr, "%s\n", app.help().c_str());
    return report_error(Error::bad_input("nothing to do", "e.g. ingero-bench --workload dataloader"));
  }
  workload.sweep.samples_given = app.count("--samples") > 0;
  workload.sweep.batch_size_given = app.count("--batch-size") > 0;
  return finish(ingero::harness::run_workload_command(workload));
}
