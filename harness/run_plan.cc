// SPDX-License-Identifier: Apache-2.0
#include "harness/run_plan.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "common/list_text.h"
#include "common/proc_files.h"

namespace ingero::harness {

namespace {

using workloads::WorkloadConfig;

Result<std::vector<workloads::Mode>> parse_modes(const std::vector<std::string>& names) {
  std::vector<workloads::Mode> modes;
  for (const auto& name : names) {
    if (name == "all") return workloads::all_modes();
    auto m = workloads::parse_mode(name);
    if (!m) return m.error();
    if (std::find(modes.begin(), modes.end(), *m) == modes.end()) modes.push_back(*m);
  }
  if (modes.empty()) return Error::bad_input("no --mode given", "e.g. --mode direct,loader or --mode all");
  return modes;
}

// Every value of a dimension, or the base's one when the dimension was not asked for.
std::vector<bool> values_or(const std::vector<bool>& asked, bool base) {
  return asked.empty() ? std::vector<bool>{base} : asked;
}

// PyTorch rejects prefetch_factor / persistent_workers without workers. In a sweep over
// several worker counts the w0 point simply runs without them; asked for alone, it is an error.
void add_worker_points(const WorkloadConfig& base, const GridRequest& req, std::vector<WorkloadConfig>* out) {
  const bool sweeping_workers = std::any_of(req.num_workers.begin(), req.num_workers.end(), [](int w) { return w > 0; });
  for (int workers : req.num_workers) {
    for (bool pin : values_or(req.pin_memory, base.pin_memory)) {
      auto c = base;
      c.num_workers = workers;
      c.pin_memory = pin;
      if (workers == 0 && sweeping_workers) {
        c.prefetch_factor.reset();
        c.persistent_workers = false;
        out->push_back(c);
        continue;
      }
      for (bool persistent : values_or(req.persistent_workers, base.persistent_workers)) {
        c.persistent_workers = persistent;
        if (req.prefetch_factors.empty() || workers == 0) {
          if (workers == 0 && !req.prefetch_factors.empty()) c.prefetch_factor = req.prefetch_factors.front();
          out->push_back(c);
          continue;
        }
        for (int pf : req.prefetch_factors) {
          c.prefetch_factor = pf;
          out->push_back(c);
        }
      }
    }
  }
}

int64_t read_available_bytes() {
  auto text = proc::read_file("/proc/meminfo");
  if (!text) return 0;
  const size_t at = text->find("MemAvailable:");
  if (at == std::string::npos) return 0;
  return std::atoll(text->c_str() + at + 13) * 1024;
}

int64_t processes_of_this_user() {
  const uid_t uid = getuid();
  int64_t count = 0;
  for (pid_t pid : proc::all_pids())
    if (proc::process_uid(pid) == uid) ++count;
  return count;
}

}  // namespace

Result<RunPlan> plan_grid(const GridRequest& req, bool device_is_cuda) {
  auto modes = parse_modes(req.modes);
  if (!modes) return modes.error();
  if (req.num_workers.empty()) return Error::bad_input("--num-workers needs at least one value");
  RunPlan plan;
  WorkloadConfig base = req.base;
  if (!device_is_cuda && !req.samples_given && !req.batch_size_given) {
    base.samples = kCpuDefaultSamples;
    base.batch_size = kCpuDefaultBatchSize;
    plan.scaling_note = fmt::format(
        "no CUDA device: the default size is scaled to {} samples, batch {} (the GPU case is 7,000,000 x {}, "
        "batch 1,048,576); set --samples and --batch-size to choose",
        kCpuDefaultSamples, kCpuDefaultBatchSize, base.features);
  }
  if (base.on_disk() && !req.samples_given) {
    base.samples = kStorageDefaultSamples;
    if (!req.batch_size_given) base.batch_size = kStorageDefaultBatchSize;
    if (!plan.scaling_note.empty()) plan.scaling_note += "; ";
    plan.scaling_note += fmt::format("--storage {}: the default size is {} samples, batch {} (one {} per sample "
                                     "for 7,000,000 samples would be absurd); set --samples to choose",
                                     workloads::storage_name(base.storage), kStorageDefaultSamples, base.batch_size,
                                     base.storage == workloads::Storage::files ? "file" : "record");
  }
  for (auto mode : *modes) {
    auto c = base;
    c.mode = mode;
    if (workloads::mode_uses_workers(mode)) {
      add_worker_points(c, req, &plan.runs);
    } else {
      c.num_workers = 0;
      c.prefetch_factor.reset();
      c.persistent_workers = false;
      c.pin_memory = false;
      plan.runs.push_back(c);
    }
  }
  std::set<std::string> labels;
  std::vector<WorkloadConfig> unique;
  for (const auto& c : plan.runs) {
    if (auto s = workloads::validate(c); !s) return s.error();
    if (labels.insert(c.label()).second) unique.push_back(c);
  }
  plan.runs = std::move(unique);
  return plan;
}

MachineLimits read_machine_limits() {
  MachineLimits limits;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) limits.usable_cores = std::max(1, CPU_COUNT(&allowed));
  limits.available_bytes = read_available_bytes();
  rlimit nproc{};
  if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
    limits.process_headroom = static_cast<int64_t>(nproc.rlim_cur) - processes_of_this_user();
  else
    limits.process_headroom = INT64_MAX;
  return limits;
}

namespace {
int64_t saturating_mul(int64_t a, int64_t b) { return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b; }
int64_t saturating_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

// Linear(F,H)-ReLU-Linear(H,H)-ReLU-Linear(H,C) in float32: its weights (twice with --train, for
// the gradients) and one batch's activations. Unchecked, --hidden 1000000 ended in LibTorch's
// allocation failure and its backtrace.
int64_t model_bytes(const WorkloadConfig& c) {
  constexpr int64_t kFloat = 4;
  const int64_t f = std::max<int64_t>(c.features, 1), h = c.hidden, k = c.classes;
  int64_t weights = saturating_add(saturating_add(saturating_mul(f, h), saturating_mul(h, h)), saturating_mul(h, k));
  if (c.train) weights = saturating_mul(weights, 2);
  const int64_t activations = saturating_mul(std::min(c.batch_size, c.samples), saturating_add(2 * h, k));
  return saturating_mul(saturating_add(weights, activations), kFloat);
}
}  // namespace

Status check_resources(const WorkloadConfig& c, const MachineLimits& limits, std::vector<std::string>* warnings) {
  // Every size is checked against overflow first: --samples 1e18 must not wrap around.
  // Each rank is its own process with its own copy of the dataset and its own workers.
  constexpr int64_t kFloat = 4;
  const int64_t dataset_bytes = saturating_mul(saturating_mul(c.samples, std::max<int64_t>(c.features, 1)), kFloat);
  const int64_t datasets_bytes = saturating_mul(dataset_bytes, c.ranks);
  if (limits.available_bytes > 0 && datasets_bytes > limits.available_bytes)
    return Error::bad_input(fmt::format("a {} x {} float32 dataset{} needs {:.1f} GB of memory; {:.1f} GB are available",
                                        c.samples, c.features,
                                        c.ranks > 1 ? fmt::format(" in each of {} ranks", c.ranks) : "",
                                        static_cast<double>(datasets_bytes) / 1e9,
                                        static_cast<double>(limits.available_bytes) / 1e9),
                            c.ranks > 1 ? "lower --samples, --features or --ranks" : "lower --samples or --features");
  const int64_t model = model_bytes(c);
  if (limits.available_bytes > 0 && model > limits.available_bytes)
    return Error::bad_input(fmt::format("--hidden {} --classes {}: the model{} needs {:.1f} GB of memory for its weights "
                                        "and a batch's activations; {:.1f} GB are available",
                                        c.hidden, c.classes, c.train ? " (training)" : "",
                                        static_cast<double>(model) / 1e9,
                                        static_cast<double>(limits.available_bytes) / 1e9),
                            "lower --hidden or --classes (defaults 512 and 10), or --batch-size");
  const int processes = c.ranks * (c.num_workers + 1) - 1;  // beyond the one launched
  if (processes > limits.process_headroom)
    return Error::bad_input(fmt::format("{} is {} more processes than this user may still start ({})", c.label(),
                                        processes, limits.process_headroom),
                            "lower --num-workers" + std::string(c.ranks > 1 ? " or --ranks" : "") +
                                " (the machine has " + std::to_string(limits.usable_cores) + " usable cores)");
  if (warnings && c.ranks > 1 && processes + 1 > limits.usable_cores)
    warnings->push_back(fmt::format("{} runs {} ranks x ({} workers + 1) = {} processes on {} usable cores: they "
                                    "will compete for CPUs (cores // ranks - 1 = {} workers per rank would not)",
                                    c.label(), c.ranks, c.num_workers, processes + 1, limits.usable_cores,
                                    std::max(0, limits.usable_cores / c.ranks - 1)));
  if (c.num_workers == 0) return {};
  // A forked worker shares the dataset copy-on-write; it costs its batches in flight in shared
  // memory and a process's own footprint (LibTorch, stacks): 64 MiB is a floor seen here.
  constexpr int64_t kWorkerFootprint = 64ll << 20;
  const int64_t batch_bytes = std::min(c.batch_size, c.samples) * c.features * kFloat;
  const int64_t per_worker = c.effective_prefetch_factor() * batch_bytes + kWorkerFootprint;
  const int64_t workers_bytes = saturating_mul(per_worker, static_cast<int64_t>(c.num_workers) * c.ranks);
  if (limits.available_bytes > 0 &&
      workers_bytes > limits.available_bytes - std::min(datasets_bytes, limits.available_bytes))
    return Error::bad_input(
        fmt::format("--num-workers {}{} needs about {:.1f} GB ({} batches of {:.1f} MB in flight per worker plus 64 MiB "
                    "per process) beside the dataset, more than the {:.1f} GB available",
                    c.num_workers, c.ranks > 1 ? fmt::format(" in each of {} ranks", c.ranks) : "",
                    static_cast<double>(workers_bytes) / 1e9, c.effective_prefetch_factor(),
                    static_cast<double>(batch_bytes) / 1e6, static_cast<double>(limits.available_bytes) / 1e9),
        fmt::format("lower --num-workers (this machine has {} usable cores), --prefetch-factor or --batch-size",
                    limits.usable_cores));
  if (warnings && c.ranks == 1 && c.num_workers > limits.usable_cores)
    warnings->push_back(fmt::format("{} asks for {} workers on {} usable cores: they will compete for CPUs (PyTorch "
                                    "warns likewise; at most {} is suggested)",
                                    c.label(), c.num_workers, limits.usable_cores, limits.usable_cores));
  return {};
}

Result<std::vector<int>> parse_count_list(const std::string& flag, const std::string& text, bool allow_auto,
                                          int usable_cores, int minimum) {
  std::vector<int> values;
  for (const std::string& item : split_list(text)) {
    if (allow_auto && item == "auto") {
      values.push_back(0);
      for (int w = 1; w <= usable_cores; w *= 2) values.push_back(w);
      if (values.back() != usable_cores) values.push_back(usable_cores);
      continue;
    }
    const auto value = parse_digits(item, 999'999'999);
    if (!value || *value < static_cast<uint64_t>(minimum))
      return Error::bad_input(fmt::format("{} '{}': '{}' is not a whole number >= {}", flag, text, item, minimum),
                              fmt::format("give a comma-separated list such as {} {}{}", flag,
                                          minimum == 0 ? "0,2,4" : "2,4,12", allow_auto ? " (or auto)" : ""));
    values.push_back(static_cast<int>(*value));
  }
  std::vector<int> unique;
  for (int v : values)
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  return unique;
}

Result<std::vector<bool>> parse_switch_list(const std::string& flag, const std::string& text) {
  std::vector<bool> values;
  for (const std::string& item : split_list(text)) {
    bool value;
    if (item == "on" || item == "true" || item == "1") {
      value = true;
    } else if (item == "off" || item == "false" || item == "0") {
      value = false;
    } else {
      return Error::bad_input(fmt::format("{} '{}': '{}' is neither on nor off", flag, text, item),
                              fmt::format("e.g. {} on,off", flag));
    }
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return values;
}

}  // namespace ingero::harness
