// SPDX-License-Identifier: Apache-2.0
#include "reports/text/chain_text.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/analysis/chain_changes.h"
#include "reports/analysis/job_evidence.h"
#include "reports/text/profile_text.h"
#include "reports/text/verdict_text.h"

namespace ingero::reports {
namespace {

std::string plural_role(const std::string& role) {
  if (role == "worker") return "workers";
  if (role == "pin") return "the pin-memory thread";
  return role + " threads";
}

std::string cores_text(const ChainContext& text) {
  return text.metrics.cores ? fmt::format("{} cores", *text.metrics.cores) : "the available cores";
}

// Workers' on-CPU share of their lifetime and the cores left idle, for "workers busy, cores idle".
std::string worker_load_text(const ChainContext& text) {
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

// The change for a user's job whose main thread builds its batches itself (num_workers=0).
std::string move_batch_building(const ChainContext& text) {
  return fmt::format("Move batch building off the training loop: num_workers > 0 (at most {} on {}), and with large "
                     "batches of cheap samples one gather per batch (BatchSampler with batch_size=None, or "
                     "__getitems__), or index the tensor directly.",
                     worker_budget(text), cores_text(text));
}

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

std::optional<std::string> io_line(const CausalChain& chain, const ChainContext& text) {
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

std::string system_line(const ChainContext& text) {
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

std::optional<std::string> gpu_line(const ChainContext& text) {
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
                     faults_text(e), format_count(chain.victim_calls), chain.victim == contract::op::kBatchWait ? "waits" : "calls");
}

std::string victim_line(const CausalChain& chain, const ChainContext& text) {
  if (chain.victim == contract::op::kBatchWait) {
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

std::string cause_line(const CausalChain& chain, const std::string& label) {
  return fmt::format("[CAUSE] {}: overlapped {} = {} of the slow intervals' time", label,
                     format_duration_ns(static_cast<double>(chain.lost_ns)), format_percent(chain.share_of_victim));
}

struct Advice {
  std::string root_cause;
  std::string change;
};

// The storage changes that cut reads, after `first` (the loader change): shards for per-sample
// files, a warm page cache for a cold one, fewer bytes per sample.
std::string storage_advice(const ChainContext& text, const std::string& first) {
  const RunConfigSummary cfg = effective_config(text.context);
  std::string out = first;
  if (cfg.storage == "files") out += "; fewer, larger files (shards read by offset) instead of one file per sample";
  if (cfg.page_cache == "cold") out += "; a warm page cache (memory enough to keep the dataset, or a first pass that reads it)";
  out += cfg.format == "jpeg" ? "; smaller or more compressed images (fewer bytes to read and decode)."
                              : "; fewer bytes per sample (a compact dtype, compression).";
  return out;
}

Advice self_advice(const CausalChain& chain, const ChainContext& text) {
  const std::string& op = chain.victim;
  const bool wait = op == contract::op::kBatchWait;
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

Advice producer_advice(const CausalChain& chain, const ChainContext& text) {
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

namespace {

// A GPU-bound job's loader chain: why no loader change is named.
std::string withheld_loader_advice(const ChainContext& text) {
  const RunMetrics& m = text.metrics;
  return fmt::format(
      "None for the loader: the GPU is busy {} of the training loop and the loop waits {} of the time, so a "
      "faster loader would not shorten the step.",
      m.gpu_util ? format_percent(*m.gpu_util) : "most", m.wait_fraction ? format_percent(*m.wait_fraction) : "little");
}

ChainWords slow_interval_words(const CausalChain& chain, const ChainContext& text) {
  ChainWords words;
  words.cause_label = cause_label(chain.cause, chain.victim, chain.victim == contract::op::kBatchWait, !text.producers.empty());
  words.timeline = {system_line(text), host_line(chain), victim_line(chain, text), cause_line(chain, words.cause_label)};
  if (auto gpu = gpu_line(text)) words.timeline.insert(words.timeline.begin() + 1, *gpu);
  if (auto io = io_line(chain, text)) words.timeline.insert(words.timeline.end() - 1, *io);
  words.summary = fmt::format("{} ← {}: overlapped {} of them, explains {} of {} slow {}", chain.victim,
                              words.cause_label, format_duration_ns(static_cast<double>(chain.lost_ns)),
                              format_count(chain.calls_explained), format_count(chain.victim_calls),
                              chain.victim == contract::op::kBatchWait ? "waits" : "calls");
  const Advice advice = chain.cause.producer ? producer_advice(chain, text) : self_advice(chain, text);
  words.root_cause = advice.root_cause;
  words.recommendation = chain.loader_change_withheld ? withheld_loader_advice(text) : advice.change;
  return words;
}

// The chain analysis' producers are those that fed a wait; a host-bound loop waited for none, so
// what ran beside it is the run's own (as host_bound_chain chose its changes from).
ChainWords host_bound_words(const CausalChain& chain, const ChainContext& text) {
  const double share = chain.share_of_victim;
  const bool producers = !run_producers(text.context).empty();
  ChainWords words;
  words.cause_label = "main thread on CPU outside CUDA calls";
  words.timeline = {system_line(text),
                    fmt::format("[HOST] main thread on CPU outside CUDA calls {} of its time; {}", format_percent(share),
                                producers ? "loader workers ran beside it" : "no DataLoader worker or pin thread ran"),
                    "[LOADER] no batch waited on: the main loop was busy, not waiting",
                    fmt::format("[CAUSE] {}: {} = {} of the main loop's time", words.cause_label,
                                format_duration_ns(static_cast<double>(chain.lost_ns)), format_percent(share))};
  if (auto gpu = gpu_line(text)) words.timeline.insert(words.timeline.begin() + 1, *gpu);
  words.summary = fmt::format("{} ← {}: {} of its time ({})", chain.victim, words.cause_label, format_percent(share),
                              format_duration_ns(static_cast<double>(chain.lost_ns)));
  const std::string gpu = text.metrics.gpu_util ? fmt::format(" while the GPU was busy {}", format_percent(*text.metrics.gpu_util))
                                                : std::string();
  if (producers) {
    words.root_cause = fmt::format("The main thread was busy on the CPU {} of its time outside CUDA calls{}, with "
                                   "loader workers beside it: the loop's own Python work (the step, the model's "
                                   "host side, transfers) is the pace, not the data.", format_percent(share), gpu);
    words.recommendation = "Profile the training step on the CPU (py-spy, torch.profiler's CPU view); keep host work "
                           "out of the loop (logging, .item() calls, per-step Python transforms).";
  } else {
    words.root_cause = fmt::format("The main thread was busy on the CPU {} of its time outside CUDA calls{}, and no "
                                   "DataLoader worker ran: a DataLoader with num_workers=0 runs its per-sample fetch "
                                   "and collate here, in the training loop, along with the step's own host work.",
                                   format_percent(share), gpu);
    words.recommendation = move_batch_building(text);
  }
  return words;
}

// Every epoch's start-up as a share of the epoch (epoch_startup_chain).
ChainWords epoch_start_words(const CausalChain& chain, const ChainContext& text) {
  ChainWords words;
  if (!text.metrics.startup) return words;
  const EpochStartup& s = *text.metrics.startup;
  const bool workers = s.waited_for == StartupWait::worker_startup;
  words.cause_label = workers ? "the workers starting each epoch" : "the iterator's set-up each epoch";
  words.timeline = {system_line(text),
                    fmt::format("[LOADER] the first batch of {} epoch{} waited {} in all, {} each", s.epochs,
                                s.epochs == 1 ? "" : "s", format_duration_ns(static_cast<double>(s.wait_ns)),
                                format_duration_ns(static_cast<double>(s.per_epoch_ns()))),
                    fmt::format("[CAUSE] {}", startup_wait_text(s)),
                    fmt::format("[EPOCH] {}", startup_share_text(s))};
  words.summary = fmt::format("{} ← {}: {} of an epoch of {} batches (estimated)", chain.victim, words.cause_label,
                              format_percent(chain.share_of_window),
                              s.batches_per_epoch ? format_count(*s.batches_per_epoch) : "?");
  words.root_cause = fmt::format(
      "Every epoch starts by waiting for {}: {} before its first batch, {} of an epoch this short, which pays it "
      "every time.",
      workers ? "its workers to start" : "the iterator's set-up (the sampler's order, the first fetch)",
      format_duration_ns(static_cast<double>(s.per_epoch_ns())), format_percent(chain.share_of_window));
  if (workers && !s.persistent_workers)
    words.recommendation = "Keep the workers across epochs: persistent_workers=True.";
  else
    words.recommendation = "Make the epoch's set-up cheaper: a sampler that does not build the whole epoch's order "
                           "up front (RandomSampler permutes every index when an epoch starts), or one order "
                           "computed once and reused; or longer epochs.";
  return words;
}

}  // namespace

namespace {

// A host-bound job whose profile shows the main thread computing the model: training on the CPU.
ChainWords cpu_compute_words(const CausalChain& chain, const ChainContext& text) {
  const double share = chain.share_of_victim;
  ChainWords words;
  words.cause_label = "main thread computing the model on the CPU";
  const std::string model = chain.split ? format_percent(chain.split->share(CpuPart::model)) : "most";
  const std::string loader = chain.split ? format_percent(chain.split->share(CpuPart::loader)) : "little";
  words.timeline = {system_line(text),
                    fmt::format("[HOST] main thread on CPU outside CUDA calls {} of its time", format_percent(share)),
                    "[LOADER] no batch waited on: the main loop was busy, not waiting",
                    fmt::format("[CAUSE] {}: {} of its samples in the model's forward, backward and optimizer, {} "
                                "building batches", words.cause_label, model, loader)};
  words.summary = fmt::format("{} ← {}: {} of its time, the model's compute {} of its samples", chain.victim,
                              words.cause_label, format_percent(share), model);
  words.root_cause = fmt::format("The job is compute-bound on the CPU: the main thread is busy {} of its time, and "
                                 "its CPU profile puts {} of that in the model's compute (torch ops, autograd, the "
                                 "optimizer) and {} in building batches. The data loading keeps up.",
                                 format_percent(share), model, loader);
  words.recommendation = "None for the loader: more DataLoader workers would not shorten the step. Speed up the "
                         "model's compute instead (a GPU, fewer or cheaper layers, torch.set_num_threads to the "
                         "cores, a compiled model).";
  return words;
}

// What the profile adds to a chain's words: the functions under its cause, the main thread's split,
// and the changes its frames call for.
void add_profile_words(const CausalChain& chain, ChainWords& words) {
  auto cause = words.timeline.empty() ? words.timeline.end() : words.timeline.end() - 1;
  if (auto split = chain_split_line(chain)) cause = words.timeline.insert(cause, *split) + 1;
  if (auto frames = chain_profile_line(chain, words.cause_label)) cause = words.timeline.insert(cause, *frames) + 1;
  if (auto site = chain_site_line(chain)) words.timeline.insert(cause, *site);
  for (const Change& change : chain.changes) {
    const std::string sentence = frame_change_text(change);
    if (sentence.empty()) continue;
    words.recommendation += (words.recommendation.empty() ? "" : " ") + sentence;
  }
}

}  // namespace

ChainWords describe_chain(const CausalChain& chain, const ChainContext& text) {
  ChainWords words;
  if (chain.victim == kMainBusyVictim)
    words = text.metrics.verdict == InputBound::cpu_compute_bound ? cpu_compute_words(chain, text)
                                                                   : host_bound_words(chain, text);
  else if (chain.victim == kEpochStartVictim)
    words = epoch_start_words(chain, text);
  else
    words = slow_interval_words(chain, text);
  add_profile_words(chain, words);
  return words;
}

std::vector<ChainWords> describe_chains(const ChainAnalysis& analysis, const RunContext& context,
                                        const RunMetrics& metrics, const std::vector<CallLatencyRow>& calls) {
  const ChainContext text{context, metrics, calls, analysis.producers};
  std::vector<ChainWords> out;
  out.reserve(analysis.chains.size());
  for (const CausalChain& chain : analysis.chains) out.push_back(describe_chain(chain, text));
  return out;
}

std::string change_check_text(const ChangeCheck& check) {
  const std::string change = fmt::format("{}={}", check.change.knob, check.change.value);
  if (!check.run_id)
    return fmt::format("{}: unmeasured (no run of this DB differs by it alone); measure it with: {}", change,
                       check.command);
  std::string text = fmt::format("{}: measured by run {} '{}'", change, *check.run_id, check.label);
  if (check.this_median_s && check.other_median_s)
    text += fmt::format(": {} per epoch vs {} here ({} this run's time)", format_seconds(*check.other_median_s),
                        format_seconds(*check.this_median_s), format_ratio(*check.other_median_s / *check.this_median_s));
  return text;
}

namespace {

std::string threshold_text(const VictimSummary& v, const ChainThresholds& limits) {
  return fmt::format("calls ≥ {} (the largest of p99 = {}, {:g} × p50 = {}, {})",
                     format_duration_ns(static_cast<double>(v.threshold_ns)),
                     format_duration_ns(static_cast<double>(v.stats.p99_ns)), limits.slow_vs_p50,
                     format_duration_ns(limits.slow_vs_p50 * static_cast<double>(v.stats.p50_ns)),
                     format_duration_ns(static_cast<double>(limits.slow_min_ns)));
}

}  // namespace

std::string selection_text(const VictimSummary& v, const ChainThresholds& limits) {
  switch (v.selection) {
    case VictimSelection::calls_in_tail: return threshold_text(v, limits);
    case VictimSelection::waits_in_tail: return "waits in the tail: " + threshold_text(v, limits);
    case VictimSelection::every_wait: return "every batch wait";
    case VictimSelection::every_wait_input_bound:
      return fmt::format("every batch wait (the run is {})", input_bound_name(v.verdict));
  }
  return "";
}

std::string cause_share_label(const CauseShare& share, const std::string& victim_op, const ChainAnalysis& analysis) {
  return cause_label(share.cause, victim_op, victim_op == contract::op::kBatchWait, !analysis.producers.empty());
}

}  // namespace ingero::reports
