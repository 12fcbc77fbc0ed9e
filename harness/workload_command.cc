#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/atomic_file.h"
#include "harness/commands.h"
#include "harness/machine_info.h"
#include "harness/results_table.h"
#include "harness/signals.h"
#include "workloads/python_reference.h"

namespace ingero::harness {

namespace {

namespace fs = std::filesystem;

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ingero-bench") : p.string();
}

bool python_has_torch(const std::string& python) {
  const std::string cmd = fmt::format("'{}' -c 'import torch' >/dev/null 2>&1", python);
  int status = std::system(cmd.c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The first python3 that can import torch: --python, $INGERO_PYTHON, python3 on PATH, /usr/bin/python3.
std::optional<std::string> find_python(const std::string& requested) {
  std::vector<std::string> candidates;
  if (!requested.empty()) candidates.push_back(requested);
  if (const char* env = std::getenv("INGERO_PYTHON")) candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const auto& c : candidates) {
    if (python_has_torch(c)) return c;
  }
  return std::nullopt;
}

std::string slug(const std::string& label) {
  std::string out;
  for (char ch : label) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return out;
}

RunRequest workload_request(const workloads::WorkloadConfig& config, const std::string& python, int index) {
  RunRequest req;
  req.label = config.label();
  req.kind = "workload";
  req.config_json = workloads::to_json(config).dump();
  req.result_path = (fs::temp_directory_path() / fmt::format("ingero-bench-{}-{}.json", getpid(), index)).string();
  if (workloads::mode_runs_in_python(config.mode)) {
    req.argv = {python, "-c", workloads::kPythonReferenceScript, "--config", *req.config_json, "--result", *req.result_path};
  } else {
    req.argv = {self_exe(), "__workload", "--config", *req.config_json, "--result", *req.result_path};
  }
  return req;
}

void report_trace(const RunOutcome& o, bool expects_cuda) {
  if (!o.trace) return;
  const auto& t = *o.trace;
  if (t.events_dropped > 0) {
    std::fprintf(stderr, "  WARNING: run %lld lost %llu trace events (see the losses table)\n",
                 static_cast<long long>(o.run_id), static_cast<unsigned long long>(t.events_dropped));
  }
  if (expects_cuda && !t.cuda_traced) std::fprintf(stderr, "  note: no CUDA library was mapped by the workload; CUDA calls were not traced\n");
}

}  // namespace

TraceSettings TraceFlags::settings() const {
  TraceSettings s;
  s.enabled = !no_trace;
  s.options.system_wide = system_wide;
  s.options.cudart_paths = cudart;
  s.options.offcpu_min_ns = static_cast<uint64_t>(offcpu_min_us * 1e3);
  s.options.runq_min_ns = static_cast<uint64_t>(runq_min_us * 1e3);
  s.options.ringbuf_bytes = static_cast<uint32_t>(ringbuf_mb) << 20;
  return s;
}

Result<int> run_workload_command(const WorkloadFlags& flags) {
  if (flags.workload != "dataloader") {
    return Error::bad_input(fmt::format("unknown workload '{}'", flags.workload), "the workload is: dataloader");
  }
  const std::string& dev = flags.sweep.base.device;
  if (dev != "auto" && dev != "cpu" && dev != "cuda") {
    return Error::bad_input(fmt::format("unknown device '{}'", dev), "use --device auto, cpu or cuda");
  }
  const bool cuda = dev != "cpu" && torch::cuda::is_available();
  if (dev == "cuda" && !cuda) {
    return Error::bad_input("--device cuda was asked for, but no CUDA device is available to LibTorch",
                            "use --device cpu (or auto), or run on a GPU machine with a CUDA LibTorch");
  }
  auto plan = plan_sweep(flags.sweep, cuda);
  if (!plan) return plan.error();
  if (!plan->scaling_note.empty()) std::printf("note: %s\n", plan->scaling_note.c_str());

  std::string python;
  const bool wants_python = std::any_of(plan->runs.begin(), plan->runs.end(),
                                        [](const auto& c) { return workloads::mode_runs_in_python(c.mode); });
  if (wants_python) {
    auto found = find_python(flags.python);
    if (found) python = *found;
    else std::printf("note: no python3 with torch found (tried --python, $INGERO_PYTHON, python3, /usr/bin/python3): python modes skipped\n");
  }

  auto db = tracer::TraceDb::open(flags.trace.db);
  if (!db) return db.error();
  const std::string machine = machine_info(cuda).dump();
  const TraceSettings trace = flags.trace.settings();

  std::vector<TableRow> rows;
  int exit_code = 0;
  int index = 0;
  for (auto config : plan->runs) {
    config.device = cuda ? "cuda" : "cpu";
    TableRow row;
    row.summary.label = config.label();
    if (workloads::mode_runs_in_python(config.mode) && python.empty()) {
      row.failure = "skipped: no python3 with torch";
      rows.push_back(row);
      continue;
    }
    std::printf("[%zu/%zu] %s ...\n", rows.size() + 1, plan->runs.size(), row.summary.label.c_str());
    std::fflush(stdout);
    auto outcome = execute_run(workload_request(config, python, index++), **db, trace, machine);
    if (!outcome) return outcome.error();
    row.run_id = outcome->run_id;
    report_trace(*outcome, cuda);
    if (outcome->result) {
      auto summary = workloads::summary_from_json(*outcome->result);
      if (summary) row.summary = *summary;
      if (auto s = write_file_atomically(
              (fs::path(flags.out_dir) / fmt::format("run-{}-{}.json", outcome->run_id, slug(row.summary.label))).string(),
              outcome->result->dump(2));
          !s) {
        return s.error();
      }
    }
    if (outcome->status != "ok") {
      const std::string error = outcome->result ? outcome->result->value("error", "") : "";
      row.failure = error.empty() ? "workload " + outcome->child_exit : error;
      exit_code = outcome->status == "interrupted" ? kExitInterrupted : (exit_code ? exit_code : outcome->exit_code);
      std::fprintf(stderr, "run %lld (%s) failed: %s\n", static_cast<long long>(outcome->run_id), row.summary.label.c_str(),
                   row.failure.c_str());
    }
    rows.push_back(row);
    if (interrupt_requested()) break;
  }
  const std::string table = render_results_table(rows);
  std::printf("\n%s\ntrace database: %s\n", table.c_str(), (*db)->path().c_str());
  if (!flags.report.empty()) {
    const std::string md = fmt::format("# ingero-bench --workload dataloader\n\nmachine: `{}`\n\n{}\n", machine, table);
    if (auto s = write_file_atomically(flags.report, md); !s) return s.error();
  }
  return exit_code;
}

}  // namespace ingero::harness
