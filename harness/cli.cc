// SPDX-License-Identifier: Apache-2.0
#include "harness/cli.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "common/list_text.h"

namespace ingero::harness {

namespace {

constexpr const char* kVersion = "ingero-bench " INGERO_VERSION;

// A finite number in [lo, hi]. CLI11's Range lets NaN through (every comparison with it is false)
// and prints its bounds with std::to_string: 309 digits for NonNegativeNumber's DBL_MAX.
CLI::Validator number_in(double lo, double hi = std::numeric_limits<double>::infinity()) {
  const std::string range = std::isinf(hi) ? fmt::format("at least {:.15g}", lo) : fmt::format("from {:.15g} to {:.15g}", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value))
          return fmt::format("'{}' is not a number ({})", text, range);
        if (value < lo || value > hi) return fmt::format("{} is out of range ({})", text, range);
        return {};
      },
      std::isinf(hi) ? fmt::format("NUMBER >= {:.15g}", lo) : fmt::format("NUMBER in [{:.15g}, {:.15g}]", lo, hi));
}

// Digits only: CLI11 reads "-1" into an unsigned value as 2^64 - 1.
const CLI::Validator kWholeNumber(
    [](std::string& text) -> std::string {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return fmt::format("'{}' is not a whole number from 0", text);
      return {};
    },
    "WHOLE NUMBER");

// A path or list given as '' would mean "not given" downstream (--pid '' a system-wide trace).
const CLI::Validator kNotEmpty(
    [](std::string& text) -> std::string { return text.empty() ? std::string("must not be empty") : std::string(); },
    "");

void add_trace_flags(CLI::App* app, TraceFlags* f) {
  app->add_option("--db", f->db, "Trace database (SQLite); runs accumulate in it")->capture_default_str();
  app->add_flag("--no-trace", f->no_trace, "Run without the eBPF tracer (timings only; no root needed)");
  app->add_flag("--system-wide", f->system_wide, "Trace every process, not only the workload's tree");
  app->add_option("--cudart", f->libraries,
                  "Probe this CUDA runtime, driver or NCCL library file instead of the ones the processes map")
      ->check(kNotEmpty);
  app->add_option("--cuda-detail", f->cuda_detail,
                  "count: launches counted only; latency: every call timed, launches stored only when slow; "
                  "both duty-cycle a hot call (its count then estimated, and labelled so); exact: latency with every "
                  "call trapped; full: both layers, every call stored (costs: results/gpu-h200-launch-sampling.md)")
      ->capture_default_str();
  app->add_option("--hot-share-pct", f->hot_share_pct,
                  "A call is hot, and duty-cycled, when its probes would cost a thread more than this % of its time")
      ->capture_default_str()
      ->check(number_in(0.0001, 100.0));
  app->add_option("--sample-window-ms", f->sample_window_ms, "A hot call's probes are attached this long ...")
      ->capture_default_str()
      ->check(number_in(0.1, 10000.0));
  app->add_option("--sample-period-ms", f->sample_period_ms, "... once per this period (at a random place in it)")
      ->capture_default_str()
      ->check(number_in(0.1, 100000.0));
  app->add_option("--call-stream-min-us", f->call_stream_min_us,
                  "Store a kernel launch as an event when it lasts at least this long (all are counted)")
      ->capture_default_str()
      ->check(number_in(0));
  app->add_option("--offcpu-min-us", f->offcpu_min_us, "Record off-CPU intervals at least this long individually")
      ->capture_default_str()
      ->check(number_in(0));
  app->add_option("--iowait-min-us", f->iowait_min_us,
                  "Record I/O waits (a read waiting for the disk) at least this long individually: they are "
                  "shorter than other sleeps (tens of µs on an SSD) and are what shows a loader waiting on storage")
      ->capture_default_str()
      ->check(number_in(0));
  app->add_option("--runq-min-us", f->runq_min_us, "Record run-queue waits at least this long individually")
      ->capture_default_str()
      ->check(number_in(0));
  app->add_option("--mem-burst-pages", f->mem_burst_pages, "Page faults (or allocations) per memory burst event, at least")
      ->capture_default_str()
      ->check(number_in(1, 1 << 20));
  app->add_option("--mem-burst-ms", f->mem_burst_ms,
                  "A memory burst event spans at least this long (at most two per thread and kind in that time)")
      ->capture_default_str()
      ->check(number_in(0.0, 10000.0));
  app->add_flag("--no-gpu-samples", f->no_gpu_samples,
                "Do not sample the GPUs' utilisation through NVML while tracing (sampled by default where NVML exists)");
  app->add_flag("--no-wakeups", f->no_wakeups,
                "Do not record which thread woke each blocked interval (an attached job's waits are estimated from it)");
  app->add_flag("--no-program-time", f->no_program_time,
                "Do not time the tracer's kernel programs (the kernel's BPF run-time statistics, on while tracing, "
                "give the tracing cost of the scheduler, memory and block events)");
  app->add_option("--profile-hz", f->profile_hz,
                  "CPU profile samples per second of each CPU (the software CPU clock), with the traced threads' "
                  "native, kernel and Python stacks; 0 = no profile")
      ->capture_default_str()
      ->check(number_in(0, 1000));
  app->add_option("--health-interval-ms", f->health_interval_ms,
                  "Sample each traced process's memory (smaps_rollup), open descriptors and /dev/shm this often; 0: off")
      ->capture_default_str()
      ->check(number_in(0.0, 3'600'000.0));
  app->add_option("--hang-after-s", f->hang_after_s,
                  "Call it a hang when no batch arrives and every thread of the job is off the CPU this long")
      ->capture_default_str()
      ->check(number_in(0.1, 86'400.0));
  app->add_option("--db-max-mb", f->db_max_mb,
                  "Keep the DB file under this many MiB: the oldest events are dropped in whole seconds as it fills "
                  "(totals stay exact; explain says what was dropped). For node agents and other long traces")
      ->check(number_in(1, 1 << 20));
  app->add_option("--ringbuf-mb", f->ringbuf_mb, "Size of each BPF ring buffer in MiB (a power of two)")
      ->capture_default_str()
      ->check(number_in(1, 1024));
  app->add_option("--metrics-addr", f->metrics_addr,
                  "Serve live metrics for Prometheus at http://HOST:PORT/metrics while tracing (a port alone: "
                  "127.0.0.1 only; docs/metrics.md)")
      ->check(kNotEmpty);
  app->add_option("--metrics-push", f->metrics_push,
                  "Push the final metrics to this Prometheus Pushgateway when the command ends (http://HOST:PORT)")
      ->check(kNotEmpty);
}

void add_workload_flags(CLI::App* app, WorkloadFlags* f, bool sweep) {
  auto& c = f->base;
  if (!sweep) app->add_option("--workload", f->workload, "Workload family to run: dataloader");
  app->add_option("--mode", f->modes,
                  "Modes, comma-separated, or all: direct, direct-shuffled, resident, loader, loader-batched, "
                  "torch-loader, python (the real PyTorch DataLoader), python-direct")
      ->delimiter(',')
      ->capture_default_str();
  app->add_option("--device", c.device, "auto (cuda when available), cpu or cuda")->capture_default_str();
  app->add_option("--samples", c.samples, "Dataset rows N (CPU-only default is scaled down)")->capture_default_str();
  app->add_option("--features", c.features, "Dataset columns F")->capture_default_str();
  app->add_option("--hidden", c.hidden, "Model hidden width")->capture_default_str();
  app->add_option("--classes", c.classes, "Model outputs")->capture_default_str();
  app->add_option("--batch-size", c.batch_size, "Samples per batch")->capture_default_str();
  app->add_option("--num-workers", f->num_workers,
                  sweep ? "Loader worker processes to try, comma-separated; auto = 0, 1, 2, 4, ... up to the cores"
                        : "Loader worker processes; a list runs each (e.g. 0,2,4,8)")
      ->capture_default_str();
  app->add_option("--prefetch-factor", f->prefetch_factors,
                  "Batches in flight per worker (PyTorch default 2; needs workers); a list runs each");
  app->add_option("--pin-memory", f->pin_memory,
                  "Copy batches into page-locked memory in a pin thread (CUDA only); alone = on; on,off tries both")
      ->expected(0, 1);
  app->add_option("--persistent-workers", f->persistent_workers,
                  "Keep workers alive across epochs; alone = on; on,off tries both")
      ->expected(0, 1);
  app->add_flag("--shuffle,!--no-shuffle", c.shuffle, "Visit samples in a fresh random order each epoch (default on)");
  app->add_flag("--drop-last", c.drop_last, "Drop the last incomplete batch");
  app->add_option("--epochs", c.epochs, "Measured epochs per run")->capture_default_str();
  app->add_option("--warmup-epochs", c.warmup_epochs, "Unmeasured epochs before the first measured one")
      ->capture_default_str();
  app->add_option("--max-batches", c.max_batches,
                  sweep ? "Each epoch is its first N batches (default: whole epochs; under --budget, chosen to fit)"
                        : "Each epoch is its first N batches of the shuffled order (default: whole epochs)")
      ->check(number_in(int64_t{1}, int64_t{1} << 40));
  app->add_option("--repeat", c.repeat, "Repeat the measured epochs with a fresh loader (median/min/max over all)")
      ->capture_default_str();
  app->add_flag("--train,!--no-train", c.train,
                "Forward + backward + SGD step instead of inference under no-grad (default on with --ranks > 1, so "
                "gradients are all-reduced)");
  app->add_option("--ranks", c.ranks,
                  "torch.distributed ranks on this node (python mode): a DDP job with torchrun's environment, each rank "
                  "with its own DataLoader and workers (Gloo on the CPU, NCCL on GPUs, one GPU per rank)")
      ->capture_default_str();
  app->add_option("--cpus", c.cpus, "Pin the workload and its workers to N cores (0: not pinned)")
      ->capture_default_str();
  app->add_option("--seed", c.seed, "Seed of the dataset, model and shuffle order")
      ->capture_default_str()
      ->check(kWholeNumber);
  app->add_option("--storage", f->storage,
                  "Where the dataset lives: memory (the seeded tensor), files (one record file per sample) or shards "
                  "(a few large files read by offset); on disk it is written once into --dataset-cache and reused")
      ->capture_default_str();
  app->add_option("--format", f->format,
                  "On-disk samples: raw (the in-memory dataset's float32 rows) or jpeg (images decoded and "
                  "transformed per sample)")
      ->capture_default_str();
  app->add_option("--image-size", c.image_size, "jpeg: S x S x 3 images (default 32); --features follows (3 S^2)");
  app->add_option("--page-cache", f->page_cache,
                  "On-disk datasets: cold (its pages evicted before every measured epoch) or warm (all resident)")
      ->capture_default_str();
  app->add_option("--dataset-cache", c.dataset_cache,
                  "Folder of the on-disk datasets (default $XDG_CACHE_HOME/ingero-bench/datasets, else "
                  "~/.cache/ingero-bench/datasets)")
      ->check(kNotEmpty);
  app->add_option("--out", f->out_dir, "Folder for one JSON result record per run")->capture_default_str()->check(kNotEmpty);
  app->add_option("--report", f->report, "Also write the results table (and each profiled run's top functions) as Markdown to this file")->check(kNotEmpty);
  app->add_option("--python", f->python, "python3 with torch for the python modes (default: first that imports torch)")
      ->check(kNotEmpty);
  add_trace_flags(app, &f->trace);
}

// A flag given alone ("--pin-memory") means on.
void normalise_switch(CLI::App* app, const char* flag, std::string* value) {
  if (app->count(flag) > 0 && value->empty()) *value = "on";
}

// --storage, --format, --page-cache into the base configuration; jpeg's features follow --image-size.
Status finish_storage_flags(CLI::App* app, WorkloadFlags* f) {
  auto& c = f->base;
  auto storage = workloads::parse_storage(f->storage);
  if (!storage) return storage.error();
  c.storage = *storage;
  auto format = workloads::parse_format(f->format);
  if (!format) return format.error();
  c.format = *format;
  auto page_cache = workloads::parse_page_cache(f->page_cache);
  if (!page_cache) return page_cache.error();
  c.page_cache = *page_cache;
  if (c.format == workloads::SampleFormat::jpeg) {
    if (app->count("--image-size") == 0) c.image_size = workloads::kDefaultImageSize;
    if (app->count("--features") == 0 && c.image_size > 0 && c.image_size <= workloads::kMaxImageSize)
      c.features = 3 * c.image_size * c.image_size;
  }
  if (!c.dataset_cache.empty()) c.dataset_cache = std::filesystem::absolute(c.dataset_cache).lexically_normal().string();
  return workloads::validate_storage(c);
}

Status finish_workload_flags(CLI::App* app, WorkloadFlags* f) {
  f->samples_given = app->count("--samples") > 0;
  f->batch_size_given = app->count("--batch-size") > 0;
  normalise_switch(app, "--pin-memory", &f->pin_memory);
  normalise_switch(app, "--persistent-workers", &f->persistent_workers);
  if (f->base.ranks > 1 && app->count("--train") + app->count("--no-train") == 0) f->base.train = true;
  if (f->modes.empty()) f->modes = {"direct", "loader"};
  return finish_storage_flags(app, f);
}

struct Holders {
  std::string explain_run, since, recommend_sweep, recommend_baseline, resume_sweep, report_sweep, export_run;
  std::vector<std::string> report_runs;
  std::vector<std::string> compare_runs;
};

// The sub-commands, as parse_command_line's phases need them after CLI11 has parsed.
struct Subcommands {
  CLI::App *sweep = nullptr, *trace = nullptr, *runs = nullptr, *ci = nullptr, *explain = nullptr, *compare = nullptr,
           *recommend = nullptr, *mcp = nullptr, *report = nullptr, *merge = nullptr, *exporter = nullptr;
  CLI::Option* resume = nullptr;
};

void add_sweep_command(CLI::App& app, ParsedCommand& parsed, Holders& h, Subcommands& c) {
  CLI::App* sweep = c.sweep = app.add_subcommand(
      "sweep", "Find the best loader configuration by measurement and prove it with interleaved re-runs");
  add_workload_flags(sweep, &parsed.sweep.workload, true);
  sweep->add_option("--budget", parsed.sweep.budget_s, "Stop starting new points after this many seconds")
      ->check(number_in(0));
  c.resume = sweep->add_option("--resume", h.resume_sweep,
                                   "Continue an interrupted sweep in --db (its id; default: the last one)")
                     ->expected(0, 1);
  sweep->add_option("--baseline", parsed.sweep.baseline,
                    "The configuration to beat, as its label (default: the first configuration)");
  sweep->add_option("--search", parsed.sweep.search,
                    "coordinate: every num_workers first, then each other knob around the best (default); grid: "
                    "every point, with pruning")
      ->check(CLI::IsMember({"coordinate", "grid"}))
      ->capture_default_str();
  sweep->add_flag("--exhaustive", parsed.sweep.exhaustive,
                  "Measure every point --max-repeats times, without pruning (the reference for the adaptive search)");
  sweep->add_option("--max-repeats", parsed.sweep.max_repeats, "Most runs of one point")
      ->capture_default_str()
      ->check(number_in(1, 20));
  sweep->add_option("--steps", parsed.sweep.steps,
                    "Your command (after --): steps timed in each run, after the warm-up (default 50)")
      ->check(number_in(5, 10'000'000));
  sweep->add_option("--seconds", parsed.sweep.seconds, "Your command: seconds timed in each run instead of --steps")
      ->check(number_in(1.0, 86'400.0));
  sweep->add_option("--warmup-steps", parsed.sweep.warmup_steps, "Your command: steps skipped before timing")
      ->capture_default_str()
      ->check(number_in(0, 1'000'000));
  sweep->add_flag("--as-root", parsed.sweep.as_root,
                  "Your command: under sudo, run it as root (default: as the user who ran sudo, with their groups; "
                  "the DB and --out are theirs either way)");
  sweep->add_option("--loader", parsed.sweep.loader,
                    "Your command: the DataLoader to change, by construction order from 0 (default: the one "
                    "iterated most)")
      ->check(number_in(0));
  sweep->add_option("--verify-rounds", parsed.sweep.verify_rounds,
                    "Interleaved re-runs of baseline and recommendation (each round runs both)")
      ->capture_default_str()
      ->check(number_in(1, 10));

}

void add_trace_command(CLI::App& app, ParsedCommand& parsed, Subcommands& c) {
  CLI::App* trace = c.trace = app.add_subcommand(
      "trace", "Trace a command (-- CMD ...), running processes (--pid), or every CUDA process (--duration)");
  add_trace_flags(trace, &parsed.trace.trace);
  trace->add_option("--pid", parsed.trace.pids, "Attach to these running processes (comma-separated pids)")
      ->check(kNotEmpty);
  trace->add_option("--duration", parsed.trace.duration,
                    "Stop after this long (e.g. 60s, 5m); a launched command is then ended (SIGINT to its process "
                    "group, SIGKILL 10 s later) and the run is kept as ok")
      ->check(kNotEmpty);
  trace->add_flag("--no-observer", parsed.trace.no_observer,
                  "Launch the command without the Python DataLoader observer (no batch timings then)");
  trace->add_option("--override", parsed.trace.overrides,
                    "Change the job's DataLoaders without editing its code (repeatable): num_workers=N, "
                    "prefetch_factor=N, pin_memory=on|off, persistent_workers=on|off, loader=N (only that one)")
      ->take_all();
  trace->add_flag("--as-root", parsed.trace.as_root,
                  "Under sudo, run the command as root (default: as the user who ran sudo, with their groups; "
                  "the DB and the folders made for it are theirs either way)");
  trace->add_option("command", parsed.trace.command, "The command and its arguments, after --");
  trace->prefix_command();

}

// The commands that read a trace DB (and ci and merge, which take files alike).
void add_reader_commands(CLI::App& app, ParsedCommand& parsed, Holders& h, Subcommands& c) {
  CLI::App* runs = c.runs = app.add_subcommand("runs", "List the runs in a trace DB as one results table");
  runs->add_option("--db", parsed.runs.db, "Trace database")->required();
  runs->add_option("--report", parsed.runs.report, "Also write the table (and each profiled run's top functions) as Markdown to this file")->check(kNotEmpty);
  runs->add_option("--format", parsed.runs.format,
                   "table, or gbench: Google Benchmark's JSON (one benchmark per run) for its compare tools")
      ->check(CLI::IsMember({"table", "gbench"}))
      ->capture_default_str();

  CLI::App* ci = c.ci = app.add_subcommand("ci", "Run a suite of configurations and fail on a performance regression");
  ci->add_option("--suite", parsed.ci.suite, "Suite JSON: the configurations and repeats (e.g. results/ci/)")
      ->required();
  ci->add_option("--baseline", parsed.ci.baseline, "Baseline JSON: epoch times per configuration")->required();
  ci->add_option("--junit", parsed.ci.junit, "Write JUnit XML here (one testcase per configuration)");
  ci->add_option("--summary", parsed.ci.summary, "Write a Markdown summary here");
  ci->add_option("--threshold", parsed.ci.threshold, "Slowdown that fails the gate when beyond noise (10% or 0.1)")
      ->capture_default_str();
  ci->add_option("--db", parsed.ci.db, "Keep the runs in this trace DB (default: a temporary one)");
  ci->add_flag("--update-baseline", parsed.ci.update_baseline, "Measure and rewrite the baseline instead of gating");

  CLI::App* explain = c.explain = app.add_subcommand("explain", "Explain a traced run: metrics, per-process breakdown, causal chains");
  explain->add_option("--db", parsed.explain.db, "Trace database")->required();
  auto* run_opt = explain->add_option("--run", h.explain_run, "Run id (default: the newest finished run)");
  explain->add_flag("--last", "The last run in the DB (the default)")->excludes(run_opt);
  explain->add_flag("--per-process", parsed.explain.per_process, "Show every process and thread role");
  explain->add_option("--since", h.since, "Only the last part of the run: seconds, or e.g. 30s, 5m");
  explain->add_flag("--json", parsed.explain.json, "One JSON document instead of text");

  CLI::App* compare = c.compare = app.add_subcommand("compare", "Compare two runs side by side and explain the ratio");
  compare->add_option("--db", parsed.compare.db, "Trace database")->required();
  compare->add_option("runs", h.compare_runs, "The two run ids: A B")->required()->expected(2);
  compare->add_flag("--json", parsed.compare.json, "JSON output");

  CLI::App* recommend = c.recommend = app.add_subcommand("recommend", "Recommend a loading configuration from the runs in a DB");
  recommend->add_option("--db", parsed.recommend.db, "Trace database")->required();
  recommend->add_option("--sweep", h.recommend_sweep, "Sweep id (default: the last sweep, else every run)");
  recommend->add_option("--baseline", h.recommend_baseline, "Run id of your current configuration");
  recommend->add_flag("--json", parsed.recommend.json, "JSON output (a stable contract: docs/formats.md)");

  CLI::App* mcp = c.mcp = app.add_subcommand("mcp", "Serve a trace DB to an AI assistant over MCP (stdio; read-only)");
  mcp->add_option("--db", parsed.mcp.db, "Trace database")->required();

  CLI::App* report = c.report = app.add_subcommand("report", "Write a report of a sweep or of runs: Markdown, HTML (charts) or JSON");
  report->add_option("--db", parsed.report.db, "Trace database")->required();
  report->add_option("--sweep", h.report_sweep, "Sweep id (default: the last sweep, else every run)");
  report->add_option("--run", h.report_runs, "Run ids instead of a sweep (repeatable)");
  report->add_option("--format", parsed.report.format, "md, html or json (default: from --out's extension)")
      ->check(CLI::IsMember({"md", "markdown", "html", "json"}));
  report->add_option("--out", parsed.report.out, "Output file")->required()->check(kNotEmpty);

  CLI::App* merge = c.merge = app.add_subcommand("merge", "Merge trace DBs from several nodes into one, to analyse a job as a whole");
  merge->add_option("--out", parsed.merge.out, "The merged trace DB (must not exist yet)")->required()->check(kNotEmpty);
  merge->add_option("inputs", parsed.merge.inputs, "The nodes' trace DBs")->required();

  CLI::App* exporter = c.exporter = app.add_subcommand("export", "Export a run as a trace for Perfetto / chrome://tracing");
  exporter->add_option("--db", parsed.export_trace.db, "Trace database")->required();
  exporter->add_option("--run", h.export_run, "Run id (folded: the newest finished run when left out)");
  exporter->add_option("--format", parsed.export_trace.format,
                       "perfetto (Chrome trace-event JSON) | folded (the CPU profile's folded stacks: flamegraph.pl, "
                       "speedscope, Pyroscope)")
      ->check(CLI::IsMember({"perfetto", "folded"}))
      ->capture_default_str();
  exporter->add_option("--role", parsed.export_trace.role, "folded: only the threads of this role")
      ->check(CLI::IsMember({"main", "worker", "pin", "other"}));
  exporter->add_option("--out", parsed.export_trace.out, "Output file (.json; folded: .folded or .txt)")
      ->required()
      ->check(kNotEmpty);
}

// CLI11's own answers: --help, --help-all, --version, and its parse errors as bad input.
std::optional<Result<ParsedCommand>> parse_flags(CLI::App& app, std::vector<std::string> reversed,
                                                 ParsedCommand& parsed) {
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    parsed.help_text = app.help();
    for (CLI::App* sub : app.get_subcommands()) parsed.help_text = sub->help();
    return Result<ParsedCommand>(parsed);
  } catch (const CLI::CallForAllHelp&) {
    parsed.help_text = app.help("", CLI::AppFormatMode::All);
    return Result<ParsedCommand>(parsed);
  } catch (const CLI::CallForVersion&) {
    parsed.help_text = std::string(kVersion) + "\n";
    return Result<ParsedCommand>(parsed);
  } catch (const CLI::ParseError& e) {
    return Error::bad_input(e.what(), "ingero-bench --help lists the commands; ingero-bench COMMAND --help their flags");
  }
  return std::nullopt;
}

Result<std::optional<int64_t>> optional_id(const char* flag, const std::string& text) {
  if (text.empty()) return std::optional<int64_t>();
  auto id = parse_id(flag, text);
  if (!id) return id.error();
  return std::optional<int64_t>(*id);
}

// sweep: its workload flags, --resume's id, and what a sweep of the user's command (after --) may take.
Status finish_sweep(CLI::App* sweep, const Subcommands& c, const Holders& h, std::vector<std::string> command,
                    SweepFlags& f) {
  if (Status s = finish_workload_flags(sweep, &f.workload); !s) return s;
  f.workload.workload = "dataloader";
  f.resume = c.resume->count() > 0;
  auto id = optional_id("--resume", h.resume_sweep);
  if (!id) return id.error();
  f.sweep_id = *id;
  f.num_workers_given = sweep->count("--num-workers") > 0;
  f.command = std::move(command);
  if (!f.command.empty())
    for (const char* flag : {"--mode", "--samples", "--batch-size", "--epochs", "--warmup-epochs", "--max-batches"})
      if (sweep->count(flag))
        return Error::bad_input(fmt::format("a sweep of your command changes only its DataLoader's knobs; {} is for "
                                            "ingero-bench's own workloads",
                                            flag),
                                "drop it: ingero-bench sweep --num-workers 2,4,8 [--steps N] -- python3 train.py");
  if (!f.command.empty() && f.steps > 0 && f.seconds > 0)
    return Error::bad_input("--steps and --seconds both say how long to time a run", "give one of them");
  if (f.command.empty() &&
      (sweep->count("--steps") || sweep->count("--seconds") || sweep->count("--warmup-steps") || sweep->count("--loader")))
    return Error::bad_input("--steps, --seconds, --warmup-steps and --loader time your own command",
                            "put the command after --: ingero-bench sweep --num-workers 2,4,8 -- python3 train.py");
  return {};
}

// An optional id flag: absent is nullopt, but given empty (--run '') is bad input.
Result<std::optional<int64_t>> given_id(CLI::App* command, const char* flag, const std::string& text) {
  auto id = optional_id(flag, text);
  if (!id) return id.error();
  if (command->count(flag) && !*id) return parse_id(flag, "").error();
  return id;
}

// The ids and durations of the commands that read a DB.
Status finish_reader(const Subcommands& c, const Holders& h, ParsedCommand& parsed) {
  if (*c.report) {
    auto sweep_id = optional_id("--sweep", h.report_sweep);
    if (!sweep_id) return sweep_id.error();
    parsed.report.sweep = *sweep_id;
    for (const std::string& text : h.report_runs) {
      auto id = parse_id("--run", text);
      if (!id) return id.error();
      parsed.report.runs.push_back(*id);
    }
  } else if (*c.exporter) {
    const bool folded = parsed.export_trace.format == "folded";
    if (!folded && !parsed.export_trace.role.empty())
      return Error::bad_input("--role applies to --format folded only", "leave --role out, or add --format folded");
    if (!folded && !c.exporter->count("--run"))
      return Error::bad_input("--run is required for --format perfetto", "name the run: --run ID (ingero-bench runs --db FILE lists them)");
    if (c.exporter->count("--run")) {
      auto id = parse_id("--run", h.export_run);
      if (!id) return id.error();
      parsed.export_trace.run = *id;
    }
  } else if (*c.explain) {
    auto id = given_id(c.explain, "--run", h.explain_run);
    if (!id) return id.error();
    parsed.explain.run = *id;
    if (c.explain->count("--since")) {
      auto since = parse_duration("--since", h.since);
      if (!since) return since.error();
      parsed.explain.since_s = *since;
    }
  } else if (*c.compare) {
    for (size_t i = 0; i < 2; ++i) {
      auto id = parse_id(i == 0 ? "run A" : "run B", h.compare_runs[i]);
      if (!id) return id.error();
      (i == 0 ? parsed.compare.run_a : parsed.compare.run_b) = *id;
    }
  } else if (*c.recommend) {
    auto sweep_id = given_id(c.recommend, "--sweep", h.recommend_sweep);
    if (!sweep_id) return sweep_id.error();
    parsed.recommend.sweep = *sweep_id;
    auto baseline = given_id(c.recommend, "--baseline", h.recommend_baseline);
    if (!baseline) return baseline.error();
    parsed.recommend.baseline_run = *baseline;
  }
  return {};
}

// Which command was asked for (the first sub-command CLI11 saw, else the main job), with its
// values checked and converted; `command` is what followed "--".
Status finish_command(CLI::App& app, const Subcommands& c, const Holders& h, std::vector<std::string> command,
                      bool separated, ParsedCommand& parsed) {
  const std::pair<CLI::App*, Command> subcommands[] = {
      {c.sweep, Command::sweep},     {c.ci, Command::ci},           {c.mcp, Command::mcp},
      {c.report, Command::report},   {c.exporter, Command::export_trace}, {c.merge, Command::merge},
      {c.trace, Command::trace},     {c.runs, Command::runs},       {c.explain, Command::explain},
      {c.compare, Command::compare}, {c.recommend, Command::recommend}};
  for (const auto& [sub, which] : subcommands) {
    if (!*sub) continue;
    parsed.command = which;
    if (which == Command::sweep) return finish_sweep(sub, c, h, std::move(command), parsed.sweep);
    if (which == Command::trace && separated) {
      if (!parsed.trace.command.empty())
        return Error::bad_input("trace takes its command after --, not before it",
                                "ingero-bench trace [flags] -- python3 train.py ARGS");
      parsed.trace.command = std::move(command);
    }
    return finish_reader(c, h, parsed);
  }
  if (!parsed.workload.workload.empty()) {
    parsed.command = Command::workload;
    return finish_workload_flags(&app, &parsed.workload);
  }
  parsed.help_text = app.help();
  parsed.exit_code = kExitBadInput;
  return {};
}
}  // namespace

Result<int64_t> parse_id(const std::string& flag, const std::string& text) {
  const auto value = parse_digits(text, 999'999'999'999'999'999);
  if (!value)
    return Error::bad_input(fmt::format("{} '{}' is not an id (a whole number from 1)", flag, text),
                            "ingero-bench runs --db FILE lists the ids a DB holds");
  const auto id = static_cast<int64_t>(*value);
  if (id < 1) return Error::bad_input(fmt::format("{} {} is not an id (ids start at 1)", flag, text));
  return id;
}

Result<double> parse_duration(const std::string& flag, const std::string& text) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  const std::string unit = text.substr(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "ms") scale = 1e-3;
  if (unit == "m" || unit == "min") scale = 60;
  if (unit == "h") scale = 3600;
  const double seconds = value * scale;
  if (end == 0 || scale == 0 || !std::isfinite(seconds) || seconds < 1e-3 || seconds > 1e7)
    return Error::bad_input(fmt::format("{} '{}' is not a duration between 1 ms and 115 days", flag, text),
                            fmt::format("e.g. {} 60s, {} 5m or {} 90", flag, flag, flag));
  return seconds;
}

Result<ParsedCommand> parse_command_line(const std::vector<std::string>& args) {
  ParsedCommand parsed;
  Holders h;
  Subcommands c;
  CLI::App app{"ingero-bench: benchmark and diagnose PyTorch data loading (pytorch/pytorch#154318) with eBPF"};
  app.set_version_flag("--version", kVersion);
  add_workload_flags(&app, &parsed.workload, false);
  add_sweep_command(app, parsed, h, c);
  add_trace_command(app, parsed, c);
  add_reader_commands(app, parsed, h, c);

  // Everything after the first "--" is the traced command, given to it whole: CLI11 would end a
  // list option's values at "--" and then read the command's own flags as options.
  const auto separator = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> reversed(std::make_reverse_iterator(separator), args.rend());
  if (auto answered = parse_flags(app, std::move(reversed), parsed)) return std::move(*answered);
  const bool separated = separator != args.end();
  std::vector<std::string> command(separated ? separator + 1 : args.end(), args.end());
  if (Status s = finish_command(app, c, h, std::move(command), separated, parsed); !s) return s.error();
  if (separator != args.end() && parsed.command != Command::trace && parsed.command != Command::sweep)
    return Error::bad_input("only trace and sweep take a command after --",
                            "ingero-bench trace -- python3 train.py ARGS, or ingero-bench sweep --num-workers 2,4,8 -- "
                            "python3 train.py ARGS");
  return parsed;
}

}  // namespace ingero::harness
