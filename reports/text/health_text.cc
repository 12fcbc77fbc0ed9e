// SPDX-License-Identifier: Apache-2.0
#include "reports/text/health_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "bpf/events.h"

#include "reports/text/format.h"

namespace ingero::reports {
namespace {

std::string bytes_text(std::optional<int64_t> bytes) {
  return bytes ? format_bytes(static_cast<double>(*bytes)) : "?";
}

std::string process_text(const HealthFinding& f) {
  const std::string who = f.role == "worker" ? "loader worker" : f.role == "main" ? "main process" : "process";
  return f.comm.empty() ? fmt::format("{} {}", who, f.pid) : fmt::format("{} {} ({})", who, f.pid, f.comm);
}

// "num_workers 2 × prefetch_factor 2 = 4 batches in flight, batch_size 64", or "" when unknown.
std::string knobs_text(const LoaderKnobs& k) {
  if (!k.num_workers) return "";
  std::string text = fmt::format("num_workers {}", *k.num_workers);
  if (auto n = k.in_flight_batches())
    text += fmt::format(" × prefetch_factor {} = {} batches in flight", k.prefetch_factor.value_or(2), *n);
  if (k.batch_size) text += fmt::format(", batch_size {}", *k.batch_size);
  return text;
}

std::string curve_text(const MemoryCurve& c) {
  if (c.samples == 0) return "no memory sample of it";
  std::string text = fmt::format("{} samples over {}", c.samples, format_duration_ns(static_cast<double>(c.last_ns - c.first_ns)));
  if (c.rss_first) text += fmt::format(": RSS {} → {} (peak {})", bytes_text(c.rss_first), bytes_text(c.rss_last), bytes_text(c.rss_peak));
  if (c.rollups == 1)
    text += fmt::format(", private dirty {} at its one smaps_rollup", bytes_text(c.private_dirty_last));
  else if (c.private_dirty_first)
    text += fmt::format(", private dirty {} → {}", bytes_text(c.private_dirty_first), bytes_text(c.private_dirty_last));
  return text;
}

HealthWords growth_words(const HealthFinding& f) {
  HealthWords w;
  w.title = "memory growth";
  std::string alike = f.workers_growing > 1 ? fmt::format("; {} workers grew alike", f.workers_growing) : "";
  w.summary = fmt::format("{}'s {} grew {} in {} ({}/s{}{}){}", process_text(f),
                          f.role == "worker" ? "private memory" : "resident memory", format_bytes(static_cast<double>(f.growth_bytes)),
                          format_duration_ns(static_cast<double>(f.growth_bytes) * 1e9 / std::max(1.0, f.growth_bytes_per_s)),
                          format_bytes(f.growth_bytes_per_s),
                          f.growth_bytes_per_batch ? fmt::format(", {} per batch", format_bytes(*f.growth_bytes_per_batch)) : "",
                          f.growth_bytes_per_epoch ? fmt::format(", {} per epoch", format_bytes(*f.growth_bytes_per_epoch)) : "", alike);
  if (f.copy_on_write) w.summary += ": copy-on-write of the dataset's Python objects";
  w.evidence.push_back(curve_text(f.memory));
  if (f.growth_measure == GrowthMeasure::copy_on_write_faults)
    w.evidence.push_back(fmt::format("{} pages copied on write since {}, each a write to a page it shared (counted "
                                     "in the kernel at its page faults)",
                                     f.growth_bytes / IB_PAGE_BYTES, f.growth_from_fork ? "its fork" : "tracing began"));
  else if (f.growth_from_fork)
    w.evidence.push_back("its private memory read once, counted from its fork: a forked worker then shares every "
                         "page it has with the main process, and its first RSS already held what became private");
  if (f.copy_on_write)
    w.evidence.push_back(
        "the growth is private memory of a forked worker: pages it shared with the main process at fork, copied "
        "because reading a Python object writes its reference count");
  else if (f.role == "worker")
    w.evidence.push_back("its RSS grew as much: memory the worker allocated and kept, not pages copied from the "
                         "main process");
  if (f.projected_epoch_end_bytes) {
    std::string projection = fmt::format("at this rate {} reaches {} at the end of the epoch",
                                         f.role == "worker" ? "a worker" : "it",
                                         format_bytes(static_cast<double>(*f.projected_epoch_end_bytes)));
    if (f.role == "worker" && f.knobs.num_workers && *f.knobs.num_workers > 1)
      projection += fmt::format(" ({} for {} workers)",
                                format_bytes(static_cast<double>(*f.projected_epoch_end_bytes * *f.knobs.num_workers)),
                                *f.knobs.num_workers);
    if (f.machine_memory_bytes) projection += fmt::format("; the machine has {}", format_bytes(static_cast<double>(*f.machine_memory_bytes)));
    w.evidence.push_back(projection);
  } else if (f.machine_memory_bytes) {
    w.evidence.push_back(fmt::format("the machine has {}", format_bytes(static_cast<double>(*f.machine_memory_bytes))));
  }
  w.change = f.copy_on_write
                 ? "keep the dataset's index in numpy arrays or tensors rather than Python lists or dicts (no "
                   "per-object reference counts to write), or put it in shared memory; each worker then shares "
                   "one copy"
                 : "find what the process keeps allocating (its batches, a cache that is never emptied)";
  return w;
}

HealthWords oom_words(const HealthFinding& f) {
  HealthWords w;
  w.title = "OOM kill";
  w.summary = fmt::format("the OOM killer killed {}", process_text(f));
  if (f.memory.rss_peak) w.summary += fmt::format(" at RSS {} (peak {})", bytes_text(f.memory.rss_last), bytes_text(f.memory.rss_peak));
  if (f.invoker_pid && *f.invoker_pid != f.pid) w.summary += fmt::format("; process {}'s allocation invoked it", *f.invoker_pid);
  w.evidence.push_back("its memory: " + curve_text(f.memory));
  if (f.oom_seen_as_sigkill)
    w.evidence.push_back("seen as the SIGKILL the kernel itself sent it: this kernel (before Linux 6.8) does not name "
                         "the OOM killer's victims apart");
  if (f.growth_bytes > 0)
    w.evidence.push_back(fmt::format("its private memory grew {} ({}/s) before the kill{}", format_bytes(static_cast<double>(f.growth_bytes)),
                                     format_bytes(f.growth_bytes_per_s),
                                     f.copy_on_write ? ": copy-on-write of the dataset's Python objects"
                                                     : ", its RSS as much: memory it allocated and kept"));
  if (std::string k = knobs_text(f.knobs); !k.empty())
    w.evidence.push_back("the loader holds " + k + ": the memory in flight is num_workers × prefetch_factor × a batch's bytes");
  if (f.machine_memory_bytes && *f.machine_memory_bytes > 0)
    w.evidence.push_back(fmt::format("the machine has {} (a cgroup's limit can be lower)", format_bytes(static_cast<double>(*f.machine_memory_bytes))));
  w.change = "lower num_workers or prefetch_factor, or make batches smaller; if a worker's private memory grew as it "
             "ran, keep the dataset in numpy arrays or tensors instead of Python objects; or raise the memory limit";
  return w;
}

// "the batches in flight need 32 MB (4 × 8.0 MB batches) of the 16 MB free", or "" when not counted.
std::string in_flight_text(const HealthFinding& f) {
  if (!f.in_flight_bytes) return "";
  return fmt::format("the batches in flight need {} ({} × {} batches) of the {} free", bytes_text(f.in_flight_bytes),
                     f.knobs.in_flight_batches().value_or(0), bytes_text(f.batch_bytes), bytes_text(f.shm_free_bytes));
}

HealthWords shm_words(const HealthFinding& f) {
  HealthWords w;
  w.title = "/dev/shm";
  const std::string in_flight = in_flight_text(f);
  if (f.sigbus)
    w.summary = fmt::format("{} died of SIGBUS: the /dev/shm the job sees ({}) ran out of room{}", process_text(f),
                            bytes_text(f.shm_size_bytes),
                            in_flight.empty() ? " for the batches in flight" : ": " + in_flight);
  else if (!in_flight.empty() && f.shm_free_bytes &&
           static_cast<double>(*f.in_flight_bytes) >= 0.8 * static_cast<double>(*f.shm_free_bytes))
    w.summary = fmt::format("/dev/shm will run out: {} ({}) in the /dev/shm the job sees ({})", in_flight,
                            format_percent(static_cast<double>(*f.in_flight_bytes) /
                                           static_cast<double>(std::max<int64_t>(1, *f.shm_free_bytes))),
                            bytes_text(f.shm_size_bytes));
  else
    w.summary = fmt::format("/dev/shm was {} full ({} of {}): the batches in flight will not fit much longer",
                            format_percent(static_cast<double>(f.shm_used_peak_bytes.value_or(0)) /
                                           static_cast<double>(std::max<int64_t>(1, f.shm_size_bytes.value_or(1)))),
                            bytes_text(f.shm_used_peak_bytes), bytes_text(f.shm_size_bytes));
  if (f.in_flight_bytes)
    w.evidence.push_back(fmt::format("each batch holds {} of tensors (the largest the loop received): {} × {} in "
                                     "flight = {}, against {} free at most in /dev/shm",
                                     bytes_text(f.batch_bytes), bytes_text(f.batch_bytes),
                                     f.knobs.in_flight_batches().value_or(0), bytes_text(f.in_flight_bytes),
                                     bytes_text(f.shm_free_bytes)));
  if (f.shm_used_peak_bytes)
    w.evidence.push_back(fmt::format("the most of it in use at a sample: {} of {}", bytes_text(f.shm_used_peak_bytes),
                                     bytes_text(f.shm_size_bytes)));
  if (std::string k = knobs_text(f.knobs); !k.empty())
    w.evidence.push_back("the loader holds " + k + ": each batch in flight sits in /dev/shm");
  w.change = "give the job a larger /dev/shm (docker run --shm-size, or a larger tmpfs), lower prefetch_factor or "
             "num_workers, or make batches smaller";
  return w;
}

HealthWords fd_words(const HealthFinding& f) {
  HealthWords w;
  w.title = "descriptors";
  w.summary = fmt::format("{} held {} open descriptors of its limit {} (RLIMIT_NOFILE)", process_text(f),
                          f.fds_peak.value_or(0), f.fd_limit.value_or(0));
  const std::string strategy = f.knobs.sharing_strategy.empty() ? "file_descriptor" : f.knobs.sharing_strategy;
  w.evidence.push_back(fmt::format("the sharing strategy is {}{}", strategy,
                                   f.knobs.sharing_strategy.empty() ? " (PyTorch's default on Linux)" : ""));
  if (strategy == "file_descriptor")
    w.evidence.push_back("with file_descriptor every tensor shared between processes keeps a descriptor open");
  w.change = strategy == "file_descriptor"
                 ? "call torch.multiprocessing.set_sharing_strategy('file_system'), or raise the limit (ulimit -n)"
                 : "raise the limit (ulimit -n), or find what keeps descriptors open";
  return w;
}

// " at dataset.py:31 in Dataset.__getitem__" (the file's last part), or "" without a frame.
std::string python_line_text(const std::optional<ProfileFrame>& frame) {
  if (!frame) return "";
  const size_t slash = frame->file.rfind('/');
  const std::string file = slash == std::string::npos ? frame->file : frame->file.substr(slash + 1);
  return fmt::format(" at {}:{} in {}", file.empty() ? "?" : file,
                     frame->line ? std::to_string(*frame->line) : std::string("?"), frame->name);
}

HealthWords hang_words(const HealthFinding& f) {
  HealthWords w;
  w.title = "hang";
  w.summary = fmt::format("no batch for {} while every worker and the main thread slept: a hang",
                          format_duration_ns(static_cast<double>(f.hang_ns)));
  for (const auto& waiter : f.waiters)
    w.evidence.push_back(fmt::format("{} {}: asleep in {} ({}){}{}", waiter.role, waiter.pid, waiter.wchan,
                                     wait_channel_text(waiter.wchan), python_line_text(waiter.python_frame),
                                     waiter.woken_by ? fmt::format(", woken at last by thread {}", *waiter.woken_by)
                                                     : ", never woken while traced"));
  w.change = "a worker forked while another thread held a lock waits for it forever (pytorch#45198): start "
             "workers with multiprocessing_context='spawn' or 'forkserver', or start no threads before the "
             "DataLoader forks; a DataLoader timeout= turns the hang into an error";
  return w;
}

}  // namespace

std::string wait_channel_text(const std::string& wchan) {
  if (wchan.find("futex") != std::string::npos) return "a lock or condition: futex";
  if (wchan.find("pipe") != std::string::npos) return "a pipe: the loader's queue";
  if (wchan.find("poll") != std::string::npos || wchan.find("select") != std::string::npos) return "poll/select";
  if (wchan.find("unix") != std::string::npos || wchan.find("sock") != std::string::npos) return "a socket";
  if (wchan.find("wait4") != std::string::npos || wchan.find("do_wait") != std::string::npos) return "a child's exit";
  if (wchan.find("sleep") != std::string::npos) return "a timed sleep";
  return "a kernel wait";
}

HealthWords describe_health(const HealthFinding& f) {
  switch (f.kind) {
    case HealthKind::memory_growth: return growth_words(f);
    case HealthKind::oom_kill: return oom_words(f);
    case HealthKind::shm_exhausted: return shm_words(f);
    case HealthKind::fd_limit: return fd_words(f);
    case HealthKind::hang: return hang_words(f);
  }
  return {};
}

std::vector<HealthWords> describe_health(const HealthAnalysis& a) {
  std::vector<HealthWords> out;
  for (const HealthFinding& f : a.findings) out.push_back(describe_health(f));
  return out;
}

std::string health_sampling_text(const HealthAnalysis& a) {
  if (a.interval_ns > 0)
    return fmt::format("memory, descriptors and /dev/shm sampled every {}", format_duration_ns(static_cast<double>(a.interval_ns)));
  if (a.sampled) return "memory, descriptors and /dev/shm sampled";
  return "memory, descriptors and /dev/shm not sampled";
}

}  // namespace ingero::reports
