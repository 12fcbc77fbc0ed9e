// SPDX-License-Identifier: Apache-2.0
// ingero-bench --workload dataloader: every planned configuration run (traced), one record
// per run in --out, one table, and the trace DB for explain. Everything that can be checked
// is checked before the DB is opened or a process started.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/trace_contract.h"
#include "common/wait_status.h"
#include "harness/child_process.h"
#include "harness/commands.h"
#include "harness/diagnosis.h"
#include "harness/machine_info.h"
#include "harness/results_table.h"
#include "harness/signals.h"
#include "harness/sudo_user.h"
#include "reports/documents/report_doc.h"
#include "reports/render/report_render.h"
#include "tracer/call_probes.h"
#include "workloads/preparation_report.h"
#include "workloads/python_reference.h"
#include "workloads/workload_process.h"

namespace ingero::harness {

namespace {

// Why a run did not end ok, as the DB stores it: the workload's own message (a damaged sample's file
// and index), else how its process ended.
std::string run_error(const RunOutcome& o) {
  if (!o.stored) return "could not be stored: " + o.store_error;
  if (o.status == contract::status::kOk) return "";
  if (o.result && o.result->is_object() && !o.result->value("error", "").empty()) return o.result->value("error", "");
  return o.child_exit;
}

namespace fs = std::filesystem;

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ingero-bench") : p.string();
}

// The LibTorch workloads run in the workload program beside this binary (one build makes both).
Result<std::string> workload_program() {
  const fs::path program = fs::path(self_exe()).parent_path() / "ingero-bench-workload";
  if (access(program.c_str(), X_OK) != 0)
    return Error::bad_input(fmt::format("the workload program {} is missing", program.string()),
                            "build it with ingero-bench (cmake --build BUILD builds both) and keep the two "
                            "programs in one folder");
  return program.string();
}

// Fixed glibc heap thresholds for every workload process (C++ and Python, and the workers they fork), unless
// GLIBC_TUNABLES is set already. By default glibc hands freed memory at the top of the heap back to the kernel and
// moves its mmap threshold with the process's allocation history, so the same workload faulted its batches' pages
// in afresh on some epochs and not on others: epochs 5-9x slower on the 2-core machine, decided by whether stdout
// and stderr were redirected. With these thresholds freed memory is reused. The machine record keeps the value.
constexpr const char* kWorkloadMallocTunables =
    "glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=268435456";

std::string set_workload_allocator_policy() {
  setenv("GLIBC_TUNABLES", kWorkloadMallocTunables, /*overwrite=*/0);
  return std::getenv("GLIBC_TUNABLES");
}

// Runs `python -c 'import torch; print(...)'` without a shell (the path is not interpreted) and
// checks the answer: a line only a Python that imported torch prints (the product is computed,
// so a program that echoes its arguments does not pass, and /bin/true prints nothing).
bool python_has_torch(const std::string& python) {
  const CommandOutput out =
      run_and_capture({python, "-c", "import torch; print('ingero-bench-torch-probe', 6 * 7, torch.__version__)"});
  return out.exit_code == 0 && out.stdout_text.find("ingero-bench-torch-probe 42 ") != std::string::npos;
}

// --python exactly when given (or bad input), else the first of $INGERO_PYTHON, python3
// on PATH, /usr/bin/python3 that imports torch.
Result<std::string> find_python(const std::string& requested) {
  if (!requested.empty()) {
    if (python_has_torch(requested)) return requested;
    return Error::bad_input(fmt::format("--python {} cannot run 'import torch' (or did not print the probe's answer)",
                                        requested),
                            "pass a python3 that has PyTorch installed, or drop the python modes");
  }
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("INGERO_PYTHON")) candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const auto& c : candidates)
    if (python_has_torch(c)) return c;
  return Error::bad_input("the python modes need a python3 that imports torch; none was found (tried "
                          "$INGERO_PYTHON, python3, /usr/bin/python3)",
                          "pass --python PATH, or drop the python modes");
}

Result<GridRequest> grid_request(const WorkloadFlags& f, int usable_cores) {
  GridRequest req;
  req.modes = f.modes;
  req.base = f.base;
  req.samples_given = f.samples_given;
  req.batch_size_given = f.batch_size_given;
  auto workers = parse_count_list("--num-workers", f.num_workers, true, usable_cores, 0);
  if (!workers) return workers.error();
  req.num_workers = *workers;
  if (!f.prefetch_factors.empty()) {
    auto pf = parse_count_list("--prefetch-factor", f.prefetch_factors, false, usable_cores, 1);
    if (!pf) return pf.error();
    req.prefetch_factors = *pf;
  }
  for (auto [flag, text, out] : {std::tuple{"--pin-memory", &f.pin_memory, &req.pin_memory},
                                 std::tuple{"--persistent-workers", &f.persistent_workers, &req.persistent_workers}}) {
    if (text->empty()) continue;
    auto values = parse_switch_list(flag, *text);
    if (!values) return values.error();
    *out = *values;
  }
  return req;
}

}  // namespace

namespace {

// --db-max-mb drops this run's events only: a file that other runs already fill to half the cap
// leaves it too little room.
Status check_db_room(const std::string& path, int max_mb) {
  if (max_mb == 0) return {};
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size < (static_cast<uintmax_t>(max_mb) << 20) / 2) return {};
  return Error::bad_input(fmt::format("--db-max-mb {}: {} already holds {:.1f} MiB of other runs, half the cap or "
                                      "more, and only this run's events are dropped to keep under it",
                                      max_mb, path, static_cast<double>(size) / (1 << 20)),
                          "pass a new --db for the long trace, or a larger --db-max-mb");
}

}  // namespace

Result<tracer::TraceOptions> tracer_options(const TraceFlags& flags) {
  tracer::TraceOptions o;
  o.system_wide = flags.system_wide;
  o.library_paths = flags.libraries;
  auto detail = tracer::parse_cuda_detail(flags.cuda_detail);
  if (!detail) return detail.error();
  o.cuda_detail = *detail;
  o.call_stream_min_ns = static_cast<uint64_t>(flags.call_stream_min_us * 1e3);
  o.offcpu_min_ns = static_cast<uint64_t>(flags.offcpu_min_us * 1e3);
  o.iowait_min_ns = static_cast<uint64_t>(flags.iowait_min_us * 1e3);
  o.runq_min_ns = static_cast<uint64_t>(flags.runq_min_us * 1e3);
  o.mem_burst_pages = static_cast<uint64_t>(flags.mem_burst_pages);
  o.mem_burst_min_ns = static_cast<uint64_t>(flags.mem_burst_ms * 1e6);
  o.ringbuf_bytes = static_cast<uint32_t>(flags.ringbuf_mb) << 20;
  o.gpu_samples = !flags.no_gpu_samples;
  o.wakers = !flags.no_wakeups;
  o.program_time = !flags.no_program_time;
  o.profile_hz = static_cast<unsigned>(flags.profile_hz);
  o.health_interval_ns = static_cast<uint64_t>(flags.health_interval_ms * 1e6);
  o.hang_after_ns = static_cast<uint64_t>(flags.hang_after_s * 1e9);
  o.db_max_bytes = static_cast<uint64_t>(flags.db_max_mb) << 20;
  o.sampling.hot_share = flags.hot_share_pct / 100;
  o.sampling.window_ns = static_cast<uint64_t>(flags.sample_window_ms * 1e6);
  o.sampling.period_ns = static_cast<uint64_t>(flags.sample_period_ms * 1e6);
  return o;
}

Result<TraceSettings> trace_settings(const TraceFlags& flags) {
  TraceSettings s;
  s.enabled = !flags.no_trace;
  auto options = tracer_options(flags);
  if (!options) return options.error();
  s.options = std::move(*options);
  for (const std::string& path : flags.libraries)
    if (Status s = tracer::check_call_library("--cudart", path); !s) return s.error();
  if (Status v = tracer::validate(s.options); !v) return v.error();
  if (s.enabled)
    if (Status can = tracer::check_can_trace(); !can) return can.error();
  if (Status db = check_writable_db("--db", flags.db); !db) return db.error();
  if (Status room = check_db_room(flags.db, flags.db_max_mb); !room) return room.error();
  // Last: the port is taken only once everything else was found good.
  auto metrics = metrics::MetricsService::start(flags.metrics_addr, flags.metrics_push);
  if (!metrics) return metrics.error();
  s.metrics = *metrics;
  if (s.metrics) s.options.live = s.metrics->sink();
  return s;
}

Result<bool> resolve_cuda(const std::string& dev) {
  if (dev != "auto" && dev != "cpu" && dev != "cuda")
    return Error::bad_input(fmt::format("unknown device '{}'", dev), "use --device auto, cpu or cuda");
  if (dev == "cpu") return false;
  auto program = workload_program();
  if (!program) return program.error();
  const CommandOutput answer = run_and_capture({*program, "--cuda-available"});
  if (answer.exit_code != 0)
    return Error::failure(fmt::format("{} --cuda-available failed (exit code {})", *program, answer.exit_code),
                          "run it by hand to see why LibTorch does not start");
  const bool cuda = answer.stdout_text == "yes\n";
  if (dev == "cuda" && !cuda)
    return Error::bad_input("--device cuda was asked for, but no CUDA device is available to LibTorch",
                            "use --device cpu (or auto), or run on a GPU machine with a CUDA LibTorch");
  return cuda;
}

Result<WorkloadSetup> prepare_workloads(const WorkloadFlags& flags) {
  if (flags.workload != "dataloader")
    return Error::bad_input(fmt::format("unknown workload '{}'", flags.workload), "the workload is: dataloader");
  auto cuda = resolve_cuda(flags.base.device);
  if (!cuda) return cuda.error();
  auto request = grid_request(flags, read_machine_limits().usable_cores);
  if (!request) return request.error();
  auto plan = plan_grid(*request, *cuda);
  if (!plan) return plan.error();
  return prepare_environment(flags, std::move(*plan), *cuda);
}

Result<WorkloadSetup> prepare_environment(const WorkloadFlags& flags, RunPlan plan, bool cuda) {
  WorkloadSetup setup;
  setup.cuda = cuda;
  const MachineLimits limits = read_machine_limits();
  for (const auto& config : plan.runs) {
    if (config.cpus > limits.usable_cores)
      return Error::bad_input(fmt::format("--cpus {} asks for more cores than the {} this process may use",
                                          config.cpus, limits.usable_cores),
                              fmt::format("use --cpus {} or fewer", limits.usable_cores));
    if (Status s = check_resources(config, limits, &plan.warnings); !s) return s.error();
    if (config.on_disk())
      if (Status s = check_folder_not_shared("--dataset-cache", config.dataset_cache_dir()); !s) return s.error();
  }
  setup.plan = std::move(plan);
  const bool wants_python = std::any_of(setup.plan.runs.begin(), setup.plan.runs.end(),
                                        [](const auto& c) { return workloads::mode_runs_in_python(c.mode); });
  if (wants_python) {
    auto python = find_python(flags.python);
    if (!python) return python.error();
    setup.python = *python;
  }
  // The workload program also writes the on-disk datasets the python modes read.
  const bool wants_libtorch = std::any_of(setup.plan.runs.begin(), setup.plan.runs.end(), [](const auto& c) {
    return !workloads::mode_runs_in_python(c.mode) || c.on_disk();
  });
  if (wants_libtorch) {
    auto program = workload_program();
    if (!program) return program.error();
    setup.workload_program = *program;
  }
  if (Status s = check_writable_dir("--out", flags.out_dir); !s) return s.error();
  if (auto tmp = temp_folder(); !tmp) return tmp.error();  // each run's private folder goes there
  if (!flags.report.empty())
    if (Status s = check_writable_path("--report", flags.report); !s) return s.error();
  auto trace = trace_settings(flags.trace);
  if (!trace) return trace.error();
  setup.trace = *trace;
  nlohmann::json machine = machine_info(setup.cuda);
  machine["glibc_tunables"] = set_workload_allocator_policy();
  setup.machine_json = machine.dump();
  return setup;
}

// An on-disk dataset is written (or checked) by the workload program before the run, so that neither
// the trace nor the run's time holds the writing; its report lies beside the run's result.
Status prepare_dataset(const workloads::WorkloadConfig& config, const WorkloadSetup& setup,
                       const std::string& private_dir) {
  if (!config.on_disk()) return {};
  const std::string report = private_dir + "/" + workloads::kPreparationReport;
  const CommandOutput out =
      run_and_capture({setup.workload_program, "--prepare-dataset", workloads::to_json(config).dump(), "--report", report});
  auto text = read_file(report);
  const auto prepared = text ? workloads::preparation_report_from_text(*text) : std::nullopt;
  if (out.exit_code != 0) {
    // The cause (naming the folder or the file) and its fix, as the workload program reported them.
    std::string what = fmt::format("preparing the {} dataset in {} failed ({})", workloads::storage_name(config.storage),
                                   config.dataset_cache_dir(),
                                   out.wait_status ? "the program " + describe_wait_status(*out.wait_status)
                                                   : std::string("the program could not be started"));
    std::string hint;
    if (prepared && prepared->error) {
      what += ": " + *prepared->error;
      hint = prepared->hint;
    }
    return out.exit_code == kExitBadInput ? Error::bad_input(what, hint) : Error::failure(what, hint);
  }
  if (!text) return text.error();
  if (prepared && prepared->written_now)
    std::printf("  dataset written: %s (%.1f s)\n", prepared->dir.c_str(), prepared->write_s);
  return {};
}

Result<RunRequest> workload_request(const workloads::WorkloadConfig& config, const WorkloadSetup& setup,
                                    const std::string& private_dir, const std::string& out_dir) {
  const std::string& python = setup.python;
  RunRequest req;
  req.label = config.label();
  req.kind = std::string(contract::kind::kWorkload);
  req.config_json = workloads::to_json(config).dump();
  req.result_path = private_dir + "/result.json";
  req.record_dir = out_dir;
  req.ranks = config.ranks;
  if (config.ranks > 1) {
    const std::string script = private_dir + "/ingero_dataloader.py";
    if (Status s = write_file_atomically(script, workloads::kPythonReferenceScript); !s) return s.error();
    // Run as a file, the script starts one process per rank with torchrun's environment.
    req.argv = {python, script, "--config", *req.config_json, "--result", *req.result_path};
    req.signal_group = true;
  } else if (workloads::mode_runs_in_python(config.mode)) {
    req.argv = {python, "-c", workloads::kPythonReferenceScript, "--config", *req.config_json, "--result",
                *req.result_path};
  } else {
    req.argv = {setup.workload_program, "--config", *req.config_json, "--result", *req.result_path};
  }
  return req;
}

Result<RunOutcome> execute_workload_run(const workloads::WorkloadConfig& config, const RunRequest& request,
                                        const WorkloadSetup& setup, const std::string& private_dir,
                                        tracer::TraceDb& db) {
  Status prepared = prepare_dataset(config, setup, private_dir);
  if (prepared) return execute_run(request, db, setup.trace, setup.machine_json);
  if (prepared.error().exit_code == kExitBadInput) return prepared.error();
  return store_unstarted_run(request, db, setup.machine_json, prepared.error());
}

void report_outcome(const RunOutcome& o, bool expects_cuda) {
  if (o.events_lost && *o.events_lost > 0)
    std::fprintf(stderr, "  WARNING: run %lld lost %llu trace events (explain --run %lld shows which)\n",
                 static_cast<long long>(o.run_id), static_cast<unsigned long long>(*o.events_lost),
                 static_cast<long long>(o.run_id));
  for (const auto& problem : o.trace_problems)
    std::fprintf(stderr, "  WARNING: run %lld: %s\n", static_cast<long long>(o.run_id), problem.c_str());
  if (expects_cuda && o.events_lost && !o.calls_traced)
    std::fprintf(stderr, "  note: no CUDA library was mapped by the workload; CUDA calls were not traced\n");
  if (!o.stored)
    std::fprintf(stderr, "  ERROR: run %lld could not be stored completely: %s%s\n", static_cast<long long>(o.run_id),
                 o.store_error.c_str(),
                 o.record_kept_at ? fmt::format("; its record is kept at {}", *o.record_kept_at).c_str() : "");
  if (o.record_error) {
    std::fprintf(stderr, "  ERROR: run %lld is stored whole in the DB, but its record could not be written to --out: %s\n",
                 static_cast<long long>(o.run_id), o.record_error->message.c_str());
    std::fprintf(stderr, "  fix: %s\n",
                 o.record_error->hint.empty() ? "choose another --out folder; explain --run reads the run from the DB"
                                              : o.record_error->hint.c_str());
  }
}

Result<int> run_workload_command(const WorkloadFlags& flags) {
  auto sudo = sudo_user();
  if (!sudo) return sudo.error();
  auto setup = prepare_workloads(flags);
  if (!setup) return setup.error();
  // Under sudo what the runs write where the user looks is theirs: a root-owned results/ would make
  // their next run fail.
  UserOutputs outputs(*sudo);
  outputs.add_db(flags.trace.db);
  outputs.add_folder(flags.out_dir);
  if (!flags.report.empty()) outputs.add_file(flags.report);
  if (!setup->plan.scaling_note.empty()) std::printf("note: %s\n", setup->plan.scaling_note.c_str());
  for (const auto& warning : setup->plan.warnings) std::printf("warning: %s\n", warning.c_str());

  auto db = tracer::TraceDb::open(flags.trace.db);
  if (!db) return db.error();
  outputs.give();

  std::vector<TableRow> rows;
  std::vector<int64_t> run_ids;
  int exit_code = 0;
  for (auto config : setup->plan.runs) {
    config.device = setup->cuda ? "cuda" : "cpu";
    std::printf("[%zu/%zu] %s ...\n", rows.size() + 1, setup->plan.runs.size(), config.label().c_str());
    std::fflush(stdout);
    auto dir = PrivateDir::create("ingero-bench-run");
    if (!dir) return dir.error();
    auto request = workload_request(config, *setup, dir->path(), flags.out_dir);
    if (!request) return request.error();
    auto outcome = execute_workload_run(config, *request, *setup, dir->path(), *db);
    if (!outcome) return outcome.error();
    if (outcome->record_kept_at == dir->path() + "/result.json") dir->keep();
    else if (outcome->record_kept_at) outputs.add_file(*outcome->record_kept_at);
    outputs.give();
    report_outcome(*outcome, setup->cuda);
    TableRow row = table_row(outcome->run_id, config.label(), outcome->status, run_error(*outcome),
                             outcome->result.value_or(nlohmann::json()), setup->trace.enabled);
    if (outcome->status != contract::status::kOk || !outcome->stored) {
      exit_code = outcome->status == contract::status::kInterrupted ? interrupt_exit_code()
                                                                    : (exit_code ? exit_code : kExitFailure);
      // row.failure starts with the status ("failed: the process ...").
      std::fprintf(stderr, "run %lld (%s) %s\n", static_cast<long long>(outcome->run_id), config.label().c_str(),
                   row.failure.c_str());
      if (!outcome->fix.empty()) std::fprintf(stderr, "  fix: %s\n", outcome->fix.c_str());
    } else if (outcome->record_error && exit_code == 0) {
      exit_code = kExitFailure;  // the run is ok; an output asked for is missing
    }
    rows.push_back(row);
    run_ids.push_back(outcome->run_id);
    if (interrupt_requested()) break;
  }
  const std::string table = render_results_table(rows);
  std::printf("\n%s\ntrace database: %s\n", table.c_str(), db->path().c_str());
  if (!flags.report.empty()) {
    std::string md =
        fmt::format("# ingero-bench --workload dataloader\n\nmachine: `{}`\n\n{}\n", setup->machine_json, table);
    if (auto trace = reports::TraceFile::open(db->path()); trace.ok())  // the runs' CPU profiles, where taken
      if (auto profiles = reports::run_profiles(**trace, run_ids); profiles.ok())
        md += reports::render_profiles_markdown(*profiles);
    if (auto s = write_file_atomically(flags.report, md); !s) return s.error();
  }
  if (!interrupt_requested()) print_diagnosis(db->path(), run_ids, std::cout);
  return interrupt_requested() ? interrupt_exit_code() : exit_code;
}

}  // namespace ingero::harness
