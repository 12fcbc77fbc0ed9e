// SPDX-License-Identifier: Apache-2.0
#include "reports/chain_text.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/job_evidence.h"

namespace ingero::reports {
namespace {

bool is_sync_op(const std::string& op) { return op.find("ynchronize") != std::string::npos; }
bool is_copy_op(const std::string& op) { return op.find("emcpy") != std::string::npos; }
bool is_launch_op(const std::string& op) { return op.find("aunchKernel") != std::string::npos; }

std::string plural_role(const std::string& role) {
  if (role == "worker") return "workers";
  if (role == "pin") return "the pin-memory thread";
  return role + " threads";
}

std::string cores_text(const ChainTextContext& text) {
  return text.metrics.cores ? fmt::format("{} cores", *text.metrics.cores) : "the available cores";
}

int worker_budget(const ChainTextContext& text) {
  return text.metrics.cores ? std::max(1, *text.metrics.cores - 1) : 1;
}

// A job we did not write: advice in DataLoader terms, not our workload modes.
bool users_job(const ChainTextContext& text) { return text.context.run.kind != contract::kind::kWorkload; }

// Workers' on-CPU share of their lifetime and the cores left idle, for "workers busy, cores idle".
std::string worker_load_text(const ChainTextContext& text) {
  std::map<int64_t, const ThreadRecord*> workers;
  for (const ThreadRecord& t : text.context.threads)
    if (t.role == contract::kRoleWorker) workers[t.tid] = &t;
  const int64_t run_end = text.context.run.end_ns.value_or(text.context.run.start_ns);
  int64_t oncpu = 0, lifetime = 0;
  std::set<int64_t> processes;
  for (const ThreadStatsRecord& s : text.context.thread_stats) {
    auto w = workers.find(s.tid);
    if (w == workers.end()) continue;
    processes.insert(s.pid);
    oncpu += s.counters.oncpu_ns;
    lifetime += std::max<int64_t>(0, w->second->exit_ns.value_or(run_end) -
                                         w->second->start_ns.value_or(text.context.run.start_ns));
  }
  if (processes.empty() || lifetime <= 0) return "";
  std::string line = fmt::format("; {} worker processes, their threads on CPU {} of their lifetime", processes.size(),
                                 format_percent(static_cast<double>(oncpu) / static_cast<double>(lifetime)));
  if (text.metrics.cpu_busy_share && text.metrics.cores)
    line += fmt::format(", {:.1f} of {} cores idle", (1.0 - *text.metrics.cpu_busy_share) * *text.metrics.cores,
                        *text.metrics.cores);
  return line;
}

// Workers that would let the loop stop waiting, from its waiting share: w workers keep a loop
// waiting a share W fed at 1 − W of the rate it consumes, so it needs about w / (1 − W) of them
// (w0: the main thread's own W of each step, spread over W / (1 − W) workers); at most the budget.
int workers_to_remove_waits(double waiting_share, int workers, int budget) {
  const double waiting = std::clamp(waiting_share, 0.0, 0.95);
  const double needed = workers > 0 ? workers / (1.0 - waiting) : waiting / (1.0 - waiting);
  return std::clamp(static_cast<int>(std::ceil(needed)), std::min(budget, workers + 1), budget);
}

// The change for a user's job whose main thread builds its batches itself (num_workers=0).
std::string move_batch_building(const ChainTextContext& text) {
  return fmt::format("Move batch building off the training loop: num_workers > 0 (at most {} on {}), and with large "
                     "batches of cheap samples one gather per batch (BatchSampler with batch_size=None, or "
                     "__getitems__), or index the tensor directly.",
                     worker_budget(text), cores_text(text));
}

// Per-sample fetch and collate of large batches: one gather per batch beats any worker count.
constexpr int64_t kLargeBatch = 4096;

std::string faults_text(const ChainEvidence& e) {
  if (e.page_faults == 0) return "";
  return fmt::format(" with {} page faults ({} of fresh pages)", format_count(e.page_faults),
                     format_bytes(static_cast<double>(e.page_faults) * 4096.0));
}

// Reads from storage on the cause's threads during the slow intervals, and the run's device rate.
std::string io_evidence_text(const CausalChain& chain) {
  const auto& e = chain.evidence;
  std::string text = fmt::format("{} in I/O wait", format_duration_ns(static_cast<double>(e.io_wait_ns)));
  if (e.read_bytes > 0) text += fmt::format(", {} read from the block device", format_bytes(static_cast<double>(e.read_bytes)));
  return text;
}

std::optional<std::string> io_line(const CausalChain& chain, const ChainTextContext& text) {
  const IoSummary& io = text.metrics.io;
  if (chain.cause.kind != CauseKind::io_wait && io.bytes == 0) return std::nullopt;
  std::string line = fmt::format("[IO] {} read in {} requests", format_bytes(static_cast<double>(io.bytes)),
                                 format_count(io.requests));
  if (io.read_mb_s) line += fmt::format(", {:.1f} MB/s over the run", *io.read_mb_s);
  if (io.read_mb_s && io.device_read_mb_s)
    line += fmt::format(" = {} of the device's measured sequential {:.0f} MB/s{}", format_percent(*io.read_mb_s / *io.device_read_mb_s),
                        *io.device_read_mb_s, io.device_name.empty() ? "" : " (" + io.device_name + ")");
  else
    line += " (the device's sequential rate was not measured for this run)";
  if (io.cache_pages_added > 0)
    line += fmt::format("; {} pages read into the page cache", format_count(io.cache_pages_added));
  if (chain.cause.kind == CauseKind::io_wait) line += fmt::format("; on the cause's threads during the waits: {}", io_evidence_text(chain));
  return line;
}

std::string system_line(const ChainTextContext& text) {
  std::string line = "[SYSTEM] ";
  if (text.metrics.cpu_busy_share && text.metrics.cores) {
    line += fmt::format("CPU {:.0f} % of {} cores busy with the traced processes",
                        *text.metrics.cpu_busy_share * 100.0, *text.metrics.cores);
  } else {
    line += "CPU use not recorded for this window";
  }
  if (auto p99 = run_histogram_quantile(text.context, "runq_us", 0.99)) {
    line += fmt::format("; run-queue p99 in [{:g}, {:g}) µs (log2 bucket)", p99->lower, p99->upper);
  }
  return line;
}

std::optional<std::string> gpu_line(const ChainTextContext& text) {
  if (!text.metrics.gpu_util) return std::nullopt;
  std::string line = fmt::format("[GPU] busy {} of the {} (NVML, {} GPU{})", format_percent(*text.metrics.gpu_util),
                                 text.metrics.gpu_over_loop ? "training loop" : "window", text.metrics.gpus_sampled,
                                 text.metrics.gpus_sampled == 1 ? "" : "s");
  if (text.metrics.sm_active) line += fmt::format(", SM activity {}", format_percent(*text.metrics.sm_active));
  return line;
}

std::string host_line(const CausalChain& chain) {
  const auto& e = chain.evidence;
  return fmt::format("[HOST] {} context switches ({} off-CPU) on {} thread(s){} during {} slow {}",
                     format_count(e.context_switches),
                     format_duration_ns(static_cast<double>(e.offcpu_overlap_ns)), e.threads,
                     faults_text(e), format_count(chain.victim_calls), chain.victim == "batch_wait" ? "waits" : "calls");
}

std::string victim_line(const CausalChain& chain, const ChainTextContext& text) {
  if (chain.victim == "batch_wait") {
    const auto& w = text.metrics.batch_wait;
    return fmt::format("[LOADER] batch_wait {} of the time waiting ({}); p99={} ({}× p50={})",
                       text.metrics.wait_fraction ? format_percent(*text.metrics.wait_fraction) : "?",
                       input_bound_name(text.metrics.verdict), format_duration_ns(static_cast<double>(w.p99_ns)),
                       fmt::format("{:.0f}", w.p50_ns > 0 ? static_cast<double>(w.p99_ns) / static_cast<double>(w.p50_ns) : 0.0),
                       format_duration_ns(static_cast<double>(w.p50_ns)));
  }
  for (const auto& row : text.calls) {
    if (row.function != chain.victim) continue;
    const double ratio = row.stats.p50_ns > 0 ? static_cast<double>(row.stats.p99_ns) / static_cast<double>(row.stats.p50_ns) : 0.0;
    return fmt::format("[CUDA] {} p99{}{} ({} p50={}), max={}", row.function, row.exact ? "=" : "≤",
                       format_duration_ns(static_cast<double>(row.stats.p99_ns)), format_ratio(ratio),
                       format_duration_ns(static_cast<double>(row.stats.p50_ns)),
                       format_duration_ns(static_cast<double>(row.stats.max_ns)));
  }
  return "[CUDA] " + chain.victim;
}

std::string cause_line(const CausalChain& chain) {
  return fmt::format("[CAUSE] {}: overlapped {} = {} of the slow intervals' time", chain.cause_label,
                     format_duration_ns(static_cast<double>(chain.lost_ns)), format_percent(chain.share_of_victim));
}

struct Advice {
  std::string root_cause;
  std::string change;
};

// The storage changes that cut reads, after `first` (the loader change): shards for per-sample
// files, a warm page cache for a cold one, fewer bytes per sample.
std::string storage_advice(const ChainTextContext& text, const std::string& first) {
  const RunConfigSummary cfg = effective_config(text.context);
  std::string out = first;
  if (cfg.storage == "files") out += "; fewer, larger files (shards read by offset) instead of one file per sample";
  if (cfg.page_cache == "cold") out += "; a warm page cache (memory enough to keep the dataset, or a first pass that reads it)";
  out += cfg.format == "jpeg" ? "; smaller or more compressed images (fewer bytes to read and decode)."
                              : "; fewer bytes per sample (a compact dtype, compression).";
  return out;
}

// I/O-bound readers sleep, so more of them than cores help: up to twice the cores.
int io_worker_target(const ChainTextContext& text, int workers) {
  const int cores = text.metrics.cores.value_or(1);
  return std::min(2 * cores, std::max(2, 2 * workers));
}

void suggest(std::vector<Change>& out, const std::string& knob, const std::string& value) {
  out.push_back({knob, value});
}

// The knobs that overlap or remove reads from storage.
void suggest_io_changes(std::vector<Change>& changes, const ChainTextContext& text, const RunConfigSummary& cfg,
                        bool workers_possible) {
  const int target = io_worker_target(text, cfg.num_workers);
  if (workers_possible && target > cfg.num_workers) suggest(changes, "num_workers", std::to_string(target));
  const int prefetch = cfg.prefetch_factor > 0 ? cfg.prefetch_factor : 2;
  if (workers_possible && cfg.num_workers > 0 && prefetch < 8)
    suggest(changes, "prefetch_factor", std::to_string(2 * prefetch));
  if (cfg.storage == "files") suggest(changes, "storage", "shards");
  if (cfg.page_cache == "cold") suggest(changes, "page_cache", "warm");
}

Advice self_advice(const CausalChain& chain, const ChainTextContext& text) {
  const std::string& op = chain.victim;
  const bool wait = op == "batch_wait";
  const bool has_producers = !text.producers.empty();
  switch (chain.cause.kind) {
    case CauseKind::cpu_wait:
      return {fmt::format("The {} thread was runnable but had no CPU: it sat preempted or in the run "
                          "queue during {} slow {}.", chain.victim_role, format_count(chain.calls_explained),
                          wait ? "waits" : op + " calls"),
              fmt::format("Leave a core to the {} thread: at most {} loader workers on {}, and no other "
                          "busy processes on those cores.", chain.victim_role, worker_budget(text), cores_text(text))};
    case CauseKind::blocked:
      if (wait) {
        return {"The main thread slept while fetching the batch itself (I/O or a lock; no producer threads exist).",
                "Check the dataset's storage (block_io events) or keep the data in memory."};
      }
      if (is_sync_op(op)) {
        return {fmt::format("The calling thread slept inside {}: it was waiting for the GPU to finish queued work.", op),
                "The device sets the pace here, not the host: overlap copies with compute (pinned memory and "
                "non_blocking copies) or give the GPU more work per launch."};
      }
      if (is_copy_op(op)) {
        return {fmt::format("The calling thread slept inside {} (the driver staging or waiting for the copy).", op),
                "Copy from pinned memory (pin_memory=True or a device-resident dataset) so the copy is a DMA."};
      }
      return {fmt::format("The calling thread slept inside {} (driver lock or allocation).", op),
              "Move the call out of the loop (allocate once, reuse buffers)."};
    case CauseKind::pinned_alloc:
      return {"The main thread allocated pinned memory while the GPU waited for the batch.",
              "Allocate pinned buffers once and reuse them."};
    case CauseKind::io_wait:
      if (wait) {
        return {fmt::format("The main thread read the dataset from storage itself (no loader worker ran): {} during "
                            "the waits.", io_evidence_text(chain)),
                storage_advice(text, "Move the reads off the training loop: num_workers > 0 (readers that sleep on "
                                     "the disk overlap its latency; more of them than cores is fine) and "
                                     "prefetch_factor to read ahead")};
      }
      return {fmt::format("The calling thread waited for I/O inside {} ({}).", op, io_evidence_text(chain)),
              "Keep file reads out of the loop that calls it."};
    default:
      break;
  }
  if (wait && has_producers) {
    return {fmt::format("The main thread was on CPU while waiting: receiving and rebuilding batches from the "
                        "producers{}.", faults_text(chain.evidence)),
            "Move fewer, larger objects between processes: fetch whole batches (BatchSampler with "
            "batch_size=None, __getitems__, mode loader-batched) or index the tensor directly "
            "(mode direct-shuffled)."};
  }
  if (wait && users_job(text)) {
    return {fmt::format("The main thread built each batch itself on CPU (num_workers=0: the DataLoader's "
                        "per-sample fetch and collate run in the training loop){}.", faults_text(chain.evidence)),
            move_batch_building(text)};
  }
  if (wait) {
    return {fmt::format("The main thread built each batch itself on CPU (gather/slice){}.", faults_text(chain.evidence)),
            "Slice contiguous batches with a pre-shuffled index (mode direct-shuffled), keep the dataset "
            "on the device if it fits (mode resident), and reuse the batch buffer instead of faulting in "
            "fresh pages."};
  }
  if (is_copy_op(op)) {
    return {fmt::format("The calling thread was on CPU inside {}{}: a copy from pageable memory is staged by the CPU.",
                        op, faults_text(chain.evidence)),
            "Copy from pinned memory (pin_memory=True, or a pinned reused buffer)."};
  }
  if (is_launch_op(op)) {
    return {fmt::format("The calling thread was on CPU inside {}{} (driver work, e.g. first-use module loading).",
                        op, faults_text(chain.evidence)),
            "Warm up before timing; fewer, larger kernels or CUDA graphs cut launch overhead."};
  }
  return {fmt::format("The calling thread was on CPU inside {}{}.", op, faults_text(chain.evidence)),
          "Move the call out of the hot loop or batch it."};
}

Advice producer_advice(const CausalChain& chain, const ChainTextContext& text) {
  const std::string who = plural_role(chain.cause.role);
  auto producers = text.producers.find(chain.cause.role);
  const int count = producers == text.producers.end() ? 0 : producers->second;
  switch (chain.cause.kind) {
    case CauseKind::on_cpu:
      if (chain.cause.role == "pin") {
        return {fmt::format("While the main loop waited, {} was on CPU copying batches into pinned memory{}.",
                            who, faults_text(chain.evidence)),
                "Pinning costs one host copy per batch: try pin_memory=False, or pin one reused buffer."};
      }
      if (users_job(text))
        return {fmt::format("While the main loop waited, {} ({} threads) were on CPU doing the per-sample fetch, "
                            "transform and collate{}{}: the work itself, not contention.",
                            who, count, faults_text(chain.evidence), worker_load_text(text)),
                fmt::format("More workers while cores are free ({}): num_workers toward the number that would "
                            "keep up; persistent_workers=True; with large batches of cheap samples, one gather per "
                            "batch (BatchSampler with batch_size=None, or __getitems__).", cores_text(text))};
      if (effective_config(text.context).format == "jpeg")
        return {fmt::format("While the main loop waited, {} ({} threads) were on CPU decoding and transforming JPEG "
                            "samples{}: the work itself, not contention.", who, count, faults_text(chain.evidence)),
                fmt::format("More workers while cores are free ({}); decode fewer bytes: smaller stored images, or "
                            "decode at reduced scale where the model allows.", cores_text(text))};
      return {fmt::format("While the main loop waited, {} ({} threads) were on CPU doing the per-sample fetch and "
                          "collate{}: the work itself, not contention.", who, count, faults_text(chain.evidence)),
              fmt::format("Cut the per-sample work: fetch whole batches (BatchSampler with batch_size=None, "
                          "__getitems__, mode loader-batched) or slice with a pre-shuffled index (mode "
                          "direct-shuffled). More workers help only while cores are free ({}).", cores_text(text))};
    case CauseKind::cpu_wait:
      return {fmt::format("While the main loop waited, {} were runnable but had no CPU (preempted / run queue): "
                          "{} producer threads on {}.", who, count, cores_text(text)),
              fmt::format("Oversubscribed: use at most {} workers (cores − 1), persistent_workers=True, and keep "
                          "other work off these cores.", worker_budget(text))};
    case CauseKind::pinned_alloc:
      return {fmt::format("While the main loop waited, {} was allocating pinned memory (cudaHostAlloc / "
                          "cudaMallocHost).", who),
              "Reuse pinned buffers (PyTorch's caching host allocator does after warm-up), or set "
              "pin_memory=False when copies are not the bottleneck."};
    case CauseKind::io_wait:
      return {fmt::format("While the main loop waited, {} ({} threads) were blocked reading the dataset from storage "
                          "({}): the loader runs at the storage's pace, not the CPU's.",
                          who, count, io_evidence_text(chain)),
              storage_advice(text, "Overlap more reads: more workers (sleeping on the disk, they can outnumber the "
                                   "cores) and a deeper prefetch_factor")};
    case CauseKind::startup:
      return {fmt::format("While the main loop waited, newly forked {} were starting up (from fork until each "
                          "reported ready, measured; {} forks since the previous batch).",
                          who, format_count(chain.evidence.forks)),
              "Keep workers across epochs: persistent_workers=True."};
    default:
      return {"", ""};
  }
}


// A user's job: the DataLoader knobs the observer saw, changed toward what the evidence asks.
std::vector<Change> user_job_changes(const CausalChain& chain, const ChainTextContext& text,
                                     const RunConfigSummary& cfg) {
  std::vector<Change> changes;
  const int budget = worker_budget(text);
  const bool wait = chain.victim == "batch_wait";
  const bool large_batches = cfg.batch_size && *cfg.batch_size >= kLargeBatch;
  switch (chain.cause.kind) {
    case CauseKind::on_cpu:
      if (chain.cause.producer && chain.cause.role == "pin") {
        if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
      } else if (wait && (chain.cause.producer || cfg.num_workers == 0)) {
        if (large_batches) suggest(changes, "sampling", "batched");
        const int target = workers_to_remove_waits(text.metrics.wait_fraction.value_or(0.5), cfg.num_workers, budget);
        if (target > cfg.num_workers) suggest(changes, "num_workers", std::to_string(target));
        if (cfg.num_workers > 0 && !cfg.persistent_workers) suggest(changes, "persistent_workers", "on");
      }
      break;
    case CauseKind::cpu_wait:
      if (cfg.num_workers > budget) suggest(changes, "num_workers", std::to_string(budget));
      break;
    case CauseKind::pinned_alloc:
      if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
      break;
    case CauseKind::startup:
      if (!cfg.persistent_workers && cfg.num_workers > 0) suggest(changes, "persistent_workers", "on");
      break;
    case CauseKind::io_wait:
      if (wait) suggest_io_changes(changes, text, cfg, true);
      break;
    default:
      break;
  }
  return changes;
}

// The knobs the advice names, relative to the analysed run's configuration; none where
// the advice is not a configuration change (or the run has no workload configuration).
std::vector<Change> suggested_changes(const CausalChain& chain, const ChainTextContext& text) {
  std::vector<Change> changes;
  const RunConfigSummary cfg = effective_config(text.context);
  if (cfg.mode.empty()) return changes;
  if (users_job(text)) return user_job_changes(chain, text, cfg);
  const int workers = cfg.num_workers;
  const int budget = worker_budget(text);
  const bool loader = cfg.mode == "loader";
  const bool uses_workers = contract::find_mode(cfg.mode) && contract::find_mode(cfg.mode)->uses_workers;
  const bool wait = chain.victim == "batch_wait";
  switch (chain.cause.kind) {
    case CauseKind::on_cpu:
      if (chain.cause.producer && chain.cause.role == "pin") {
        if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
      } else if (wait) {
        if (loader && cfg.storage == "memory") suggest(changes, "mode", "loader-batched");
        if (uses_workers && workers < budget) suggest(changes, "num_workers", std::to_string(std::min(budget, std::max(1, 2 * workers))));
      } else if (is_copy_op(chain.victim) && !cfg.pin_memory && uses_workers) {
        suggest(changes, "pin_memory", "on");
      }
      break;
    case CauseKind::cpu_wait:
      if (uses_workers && workers > budget) suggest(changes, "num_workers", std::to_string(budget));
      break;
    case CauseKind::pinned_alloc:
      if (cfg.pin_memory) suggest(changes, "pin_memory", "off");
      break;
    case CauseKind::startup:
      if (!cfg.persistent_workers && workers > 0) suggest(changes, "persistent_workers", "on");
      break;
    case CauseKind::io_wait:
      if (wait) suggest_io_changes(changes, text, cfg, uses_workers);
      break;
    default:
      break;
  }
  return changes;
}

}  // namespace

std::string cause_label(const Cause& cause, const std::string& victim_op, bool victim_is_wait,
                        bool run_has_producers) {
  if (cause.kind == CauseKind::unattributed) {
    return "main blocked while no producer was active (not attributed)";
  }
  if (cause.producer) {
    const std::string who = plural_role(cause.role);
    switch (cause.kind) {
      case CauseKind::on_cpu:
        return cause.role == "pin" ? "pin-memory thread on CPU (copying into pinned memory)"
                                   : who + " on CPU (per-sample fetch and collate)";
      case CauseKind::cpu_wait: return who + " waiting for a CPU (preempted / run queue)";
      case CauseKind::pinned_alloc: return who + " allocating pinned memory";
      case CauseKind::io_wait: return who + " blocked reading from storage (I/O wait)";
      case CauseKind::startup:
        return (cause.role == "pin" ? "the pin-memory thread" : "new " + who) +
               " starting up (fork to ready, measured)";
      default: return who + " " + cause.code();
    }
  }
  const std::string who = cause.role + " thread";
  switch (cause.kind) {
    case CauseKind::cpu_wait: return who + " waiting for a CPU (preempted / run queue)";
    case CauseKind::blocked:
      return victim_is_wait ? who + " blocked (sleeping) while fetching" : who + " blocked (sleeping) inside " + victim_op;
    case CauseKind::pinned_alloc: return who + " allocating pinned memory";
    case CauseKind::io_wait:
      return victim_is_wait ? who + " reading from storage itself (I/O wait)" : who + " in I/O wait inside " + victim_op;
    case CauseKind::on_cpu:
      if (!victim_is_wait) return who + " on CPU inside " + victim_op;
      return run_has_producers ? who + " on CPU receiving batches" : who + " on CPU building the batch itself";
    default: return who + " " + cause.code();
  }
}

void describe_chain(CausalChain& chain, const ChainTextContext& text) {
  chain.timeline = {system_line(text), host_line(chain), victim_line(chain, text), cause_line(chain)};
  if (auto gpu = gpu_line(text)) chain.timeline.insert(chain.timeline.begin() + 1, *gpu);
  if (auto io = io_line(chain, text)) chain.timeline.insert(chain.timeline.end() - 1, *io);
  chain.summary = fmt::format("{} ← {}: overlapped {} of them, explains {} of {} slow {}", chain.victim,
                              chain.cause_label, format_duration_ns(static_cast<double>(chain.lost_ns)),
                              format_count(chain.calls_explained), format_count(chain.victim_calls),
                              chain.victim == "batch_wait" ? "waits" : "calls");
  const Advice advice = chain.cause.producer ? producer_advice(chain, text) : self_advice(chain, text);
  chain.root_cause = advice.root_cause;
  chain.recommendation = advice.change;
  chain.changes = suggested_changes(chain, text);
}

}  // namespace ingero::reports

namespace ingero::reports {

void describe_host_chain(CausalChain& chain, const ChainTextContext& text) {
  const double share = chain.share_of_victim;
  const bool producers = !text.producers.empty();
  chain.cause_label = "main thread on CPU outside CUDA calls";
  chain.timeline = {system_line(text),
                    fmt::format("[HOST] main thread on CPU outside CUDA calls {} of its time; {}", format_percent(share),
                                producers ? "loader workers ran beside it" : "no DataLoader worker or pin thread ran"),
                    "[LOADER] no batch waited on: the main loop was busy, not waiting",
                    fmt::format("[CAUSE] {}: {} = {} of the main loop's time", chain.cause_label,
                                format_duration_ns(static_cast<double>(chain.lost_ns)), format_percent(share))};
  if (auto gpu = gpu_line(text)) chain.timeline.insert(chain.timeline.begin() + 1, *gpu);
  chain.summary = fmt::format("{} ← {}: {} of its time ({})", chain.victim, chain.cause_label, format_percent(share),
                              format_duration_ns(static_cast<double>(chain.lost_ns)));
  const std::string gpu = text.metrics.gpu_util ? fmt::format(" while the GPU was busy {}", format_percent(*text.metrics.gpu_util))
                                                : std::string();
  if (producers) {
    chain.root_cause = fmt::format("The main thread was busy on the CPU {} of its time outside CUDA calls{}, with "
                                   "loader workers beside it: the loop's own Python work (the step, the model's "
                                   "host side, transfers) is the pace, not the data.", format_percent(share), gpu);
    chain.recommendation = "Profile the training step on the CPU (py-spy, torch.profiler's CPU view); keep host work "
                           "out of the loop (logging, .item() calls, per-step Python transforms).";
  } else {
    chain.root_cause = fmt::format("The main thread was busy on the CPU {} of its time outside CUDA calls{}, and no "
                                   "DataLoader worker ran: a DataLoader with num_workers=0 runs its per-sample fetch "
                                   "and collate here, in the training loop, along with the step's own host work.",
                                   format_percent(share), gpu);
    chain.recommendation = move_batch_building(text);
    const RunConfigSummary cfg = effective_config(text.context);
    if (cfg.batch_size && *cfg.batch_size >= kLargeBatch) chain.changes.push_back({"sampling", "batched"});
    chain.changes.push_back({"num_workers", std::to_string(workers_to_remove_waits(share, 0, worker_budget(text)))});
  }
}

}  // namespace ingero::reports
