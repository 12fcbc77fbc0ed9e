#include "harness/sweep.h"

#include <algorithm>

#include <fmt/format.h>

namespace ingero::harness {

namespace {

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

// PyTorch rejects prefetch_factor / persistent_workers without workers. In a sweep over
// several worker counts the w0 point simply runs without them; asked for alone, it is an error.
void add_worker_points(const workloads::WorkloadConfig& base, const SweepRequest& req,
                       std::vector<workloads::WorkloadConfig>* out) {
  const bool sweeping_workers = std::any_of(req.num_workers.begin(), req.num_workers.end(), [](int w) { return w > 0; });
  for (int workers : req.num_workers) {
    auto c = base;
    c.num_workers = workers;
    if (workers == 0 && sweeping_workers) {
      c.prefetch_factor.reset();
      c.persistent_workers = false;
      out->push_back(c);
      continue;
    }
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

}  // namespace

Result<SweepPlan> plan_sweep(const SweepRequest& req, bool device_is_cuda) {
  auto modes = parse_modes(req.modes);
  if (!modes) return modes.error();
  if (req.num_workers.empty()) return Error::bad_input("--num-workers needs at least one value");
  SweepPlan plan;
  workloads::WorkloadConfig base = req.base;
  if (!device_is_cuda && !req.samples_given && !req.batch_size_given) {
    base.samples = kCpuDefaultSamples;
    base.batch_size = kCpuDefaultBatchSize;
    plan.scaling_note = fmt::format(
        "no CUDA device: the default size is scaled to {} samples, batch {} (the GPU case is 7,000,000 x {}, "
        "batch 1,048,576); set --samples and --batch-size to choose",
        kCpuDefaultSamples, kCpuDefaultBatchSize, base.features);
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
  for (const auto& c : plan.runs) {
    if (auto s = workloads::validate(c); !s) return s.error();
  }
  return plan;
}

}  // namespace ingero::harness
