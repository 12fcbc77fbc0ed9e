// SPDX-License-Identifier: Apache-2.0
#include "tracer/tracer.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/unique_fd.h"
#include "ingero.skel.h"
#include "tracer/bpf_map_read.h"
#include "tracer/call_probes.h"
#include "tracer/event_writer.h"
#include "tracer/live_health.h"
#include "tracer/live_waits.h"
#include "tracer/observer_records.h"
#include "tracer/probe_calibration.h"
#include "tracer/profile_aggregator.h"
#include "tracer/profile_python.h"
#include "tracer/profile_sampler.h"
#include "tracer/hang_stacks.h"
#include "tracer/process_sampler.h"
#include "tracer/uprobe_link.h"
#include "tracer/threads.h"

namespace ingero::tracer {

Tracer::~Tracer() = default;

namespace {

// ---- libbpf messages: quiet unless INGERO_BPF_VERBOSE is set; the last warning
// explains a failed load or attach.
std::mutex g_libbpf_mutex;
std::string g_last_libbpf_warning;

int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  static const bool verbose = getenv("INGERO_BPF_VERBOSE") != nullptr;
  if (verbose) return vfprintf(stderr, format, args);
  if (level != LIBBPF_WARN) return 0;
  char line[512];
  vsnprintf(line, sizeof line, format, args);
  std::lock_guard lock(g_libbpf_mutex);
  g_last_libbpf_warning = line;
  while (!g_last_libbpf_warning.empty() && g_last_libbpf_warning.back() == '\n') g_last_libbpf_warning.pop_back();
  return 0;
}

std::string last_libbpf_warning() {
  std::lock_guard lock(g_libbpf_mutex);
  return g_last_libbpf_warning.empty() ? "no details from libbpf" : g_last_libbpf_warning;
}

// ---- RAII owners
struct SkeletonDestroyer {
  void operator()(ingero_bpf* skel) const { ingero_bpf::destroy(skel); }
};
using SkeletonPtr = std::unique_ptr<ingero_bpf, SkeletonDestroyer>;

struct RingBufferFree {
  void operator()(ring_buffer* rb) const { ring_buffer__free(rb); }
};

// ---- preconditions
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool has_capability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return data[cap / 32].effective & (1u << (cap % 32));
}

// Every descendant of pid that runs now, from the parent links in /proc.
std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (pid_t pid : proc::all_pids())
    if (auto stat = proc::read_stat(pid)) children.emplace(stat->ppid, pid);
  std::vector<pid_t> found;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    pid_t parent = frontier.back();
    frontier.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      found.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  return found;
}

// A process running the same program with the same arguments as its parent was forked and
// never exec'd (DataLoader workers started with fork are such copies).
bool is_forked_copy(pid_t pid, pid_t parent) {
  auto same = [&](const char* file) {
    auto mine = proc::read_file(fmt::format("/proc/{}/{}", pid, file));
    auto theirs = proc::read_file(fmt::format("/proc/{}/{}", parent, file));
    return mine && theirs && *mine == *theirs;
  };
  std::error_code a, b;
  const auto exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), a);
  const auto parent_exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", parent), b);
  return !a && !b && exe == parent_exe && same("cmdline");
}

// /proc/PID/cmdline, split at its NULs.
std::vector<std::string> command_line(pid_t pid) {
  std::vector<std::string> args;
  auto text = proc::read_file(fmt::format("/proc/{}/cmdline", pid));
  if (!text) return args;
  for (size_t start = 0; start < text->size();) {
    const size_t end = text->find('\0', start);
    args.push_back(text->substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

// The programs in the order they are attached: process events first, so that a fork
// enrolls the child before its first scheduler event is looked at.
std::vector<std::pair<bpf_program*, bpf_link**>> attach_order(ingero_bpf* s) {
  return {
      {s->progs.on_fork, &s->links.on_fork},
      {s->progs.on_exec, &s->links.on_exec},
      {s->progs.on_exit, &s->links.on_exit},
      {s->progs.on_rename, &s->links.on_rename},
      {s->progs.on_oom_victim, &s->links.on_oom_victim},
      {s->progs.on_signal_generate, &s->links.on_signal_generate},
      {s->progs.on_sched_waking, &s->links.on_sched_waking},
      {s->progs.on_sched_wakeup, &s->links.on_sched_wakeup},
      {s->progs.on_sched_wakeup_new, &s->links.on_sched_wakeup_new},
      {s->progs.on_sched_switch, &s->links.on_sched_switch},
      {s->progs.on_page_alloc, &s->links.on_page_alloc},
      {s->progs.on_page_fault_user, &s->links.on_page_fault_user},
      {s->progs.on_mem_thread_exit, &s->links.on_mem_thread_exit},
      {s->progs.on_block_rq_insert, &s->links.on_block_rq_insert},
      {s->progs.on_block_rq_issue, &s->links.on_block_rq_issue},
      {s->progs.on_block_rq_merge, &s->links.on_block_rq_merge},
      {s->progs.on_block_rq_complete, &s->links.on_block_rq_complete},
      {s->progs.on_page_cache_add, &s->links.on_page_cache_add},
  };
}

// The skeleton's programs that attach_order leaves out, other than the CUDA probes (sections
// uprobe / uretprobe, attached per library by the probe plan): a program added to a .bpf.c
// file but not here would load and never run.
std::vector<std::string> programs_left_unattached(ingero_bpf* s) {
  std::set<const bpf_program*> ordered;
  for (const auto& entry : attach_order(s)) ordered.insert(entry.first);
  std::vector<std::string> left;
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, s->obj) {
    const std::string_view section = bpf_program__section_name(program);
    const bool cuda_probe = section.rfind("uprobe", 0) == 0 || section.rfind("uretprobe", 0) == 0;
    // The profile program is attached per CPU to clock events (CpuClockSampler).
    if (cuda_probe || ordered.count(program) || program == s->progs.on_cpu_sample) continue;
    left.push_back(bpf_program__name(program));
  }
  return left;
}

// What each program other than the CUDA probes ran for, from the kernel's run-time statistics
// (counted only while someone holds them on: BpfTracer::stats_), as the kProgramTimeSetting row.
Result<std::string> program_time_json(ingero_bpf* s) {
  nlohmann::json programs = nlohmann::json::object();
  std::vector<bpf_program*> timed;
  for (const auto& entry : attach_order(s)) timed.push_back(entry.first);
  timed.push_back(s->progs.on_cpu_sample);
  for (bpf_program* program : timed) {
    if (!bpf_program__autoload(program)) continue;  // switched off: never loaded
    const auto time = read_program_run_time(bpf_program__fd(program));
    if (!time)
      return Error::failure(fmt::format("reading program {}'s statistics: {}", bpf_program__name(program),
                                        strerror(errno)));
    programs[bpf_program__name(program)] = {{"runs", time->runs}, {"ns", time->ns}};
  }
  return programs.dump();
}

// What a probe hit costs on this machine (calibrated at start-up), or why it is unknown, and the
// duty cycle the run uses: written as run settings (tracing_cost_settings).
struct TracingCost {
  std::optional<ProbeCost> measured;
  std::string unknown_because;       // when not measured
  SamplingPolicy policy;
  std::string sampling_off_because;  // when the policy is off
};

class BpfTracer final : public Tracer {
 public:
  BpfTracer(const TraceOptions& opts, int64_t run_id) : opts_(opts), run_id_(run_id) {}
  ~BpfTracer() override { shutdown(); }

  Status init(const std::string& db_path);
  Status enroll(pid_t root_pid) override;
  Status attach(pid_t pid) override;
  void poll() override;
  Result<TraceTotals> stop() override;

 private:
  Status load();
  TracingCost calibrate();
  // The return probe's program fd while this run holds the kernel's statistics on, else -1
  // (--no-program-time: whoever else counts is not read).
  int timed_return_program() const { return stats_ ? bpf_program__fd(skel_->progs.cuda_call_return) : -1; }
  void time_programs();
  std::pair<std::string, std::string> program_time_setting();
  Status attach_programs();
  Status open_rings();
  Status add_to_filter(pid_t pid);
  Status probe_library(const std::string& path, bool requested);
  void track_traced_processes();
  void look_for_python_everywhere();
  std::vector<SampledFunction> stop_sampling();
  void scan_for_cuda_processes();
  void read_ranks(const std::set<pid_t>& pids);
  void read_python_paths(const std::set<pid_t>& pids);
  static int on_ring_event(void* ctx, void* data, size_t size);
  static int on_profile_sample(void* ctx, void* data, size_t size);
  Status start_profile();
  void add_profile(TraceTotals& totals);
  nlohmann::json python_walks() const;
  void consume();
  void detach_all();
  void stop_consumer();
  void shutdown();
  std::vector<std::pair<uint32_t, ib_mem_burst>> flush_memory_bursts();
  std::vector<TraceLoss> collect_losses() const;
  std::vector<std::pair<std::string, std::string>> settings() const;
  void record_problem(std::string problem);
  void add_gpu_samples(TraceTotals& totals);
  LiveTotals live_totals();
  void publish_live(bool now);
  void add_process_samples(TraceTotals& totals);
  void add_db_cap(TraceTotals& totals) const;
  void record_hang(const std::vector<pid_t>& pids, uint64_t ts_ns);

  const TraceOptions opts_;
  const int64_t run_id_;
  std::unique_ptr<EventWriter> writer_;
  SkeletonPtr skel_;
  std::unique_ptr<CallProbes> call_probes_;
  TracingCost tracing_cost_;
  bool multi_ = false;  // the CUDA probes are uprobe_multi links (uprobe_link.h)
  bool oom_from_sigkill_ = false;  // OOM kills seen as the kernel's SIGKILL (no mark_victim(task))
  std::unique_ptr<ring_buffer, RingBufferFree> rings_;
  std::unique_ptr<NvmlSampler> gpu_sampler_;
  // CPU profiles: the clock events and the samples' aggregation (the consumer thread's own).
  std::optional<CpuClockSampler> profile_clock_;
  ProfileAggregator profile_{opts_.profile_bucket_ns};
  std::unique_ptr<ProfilePython> python_;  // with profiles on
  std::chrono::steady_clock::time_point python_scanned_;
  std::unique_ptr<ProcessSampler> health_sampler_;
  // Hung threads' Python stacks and when the hang was seen: the sampler thread's until it is stopped.
  std::vector<std::pair<uint64_t, ThreadPythonStack>> hang_stacks_;
  // The kernel's BPF run-time statistics, on while this is held (the kernel drops them when it
  // closes, also when the tracer dies), or why they are not.
  UniqueFd stats_;
  std::string program_time_unknown_;

  std::atomic<bool> consuming_{false};
  std::thread consumer_;

  std::mutex mutex_;  // guards threads_, problems_ and execed_ (the consumer thread writes them)
  ThreadTable threads_;
  std::vector<std::string> problems_;
  std::set<pid_t> execed_;  // processes that exec'd since the last poll: their environment is new
  WakeWaits wake_waits_;    // the live wait estimate (opts_.live_wait_estimate)
  LatestHealth live_health_;  // worker health for the live view (its own lock)

  std::vector<ProbedLibrary> libraries_;
  std::set<std::pair<dev_t, ino_t>> probed_files_;
  // System-wide CUDA mode: when each process was last looked at, and which were enrolled.
  std::map<pid_t, std::chrono::steady_clock::time_point> checked_;
  std::set<pid_t> enrolled_;
  bool stopped_ = false;
  // The live view (opts_.live): the observer's records as they grow, and when it was last handed over.
  std::unique_ptr<ObserverTail> live_tail_;
  std::chrono::steady_clock::time_point live_at_{};
  int64_t live_cpu_ns_ = 0;  // what publishing the live view cost, by the publishing thread's CPU clock
};

Status BpfTracer::init(const std::string& db_path) {
  auto writer = EventWriter::start(db_path, run_id_, opts_.queue_capacity, opts_.db_max_bytes);
  if (!writer) return writer.error();
  writer_ = std::move(writer).value();
  if (Status s = load(); !s) return s;
  time_programs();
  tracing_cost_ = calibrate();
  const CallProbePrograms programs{
      skel_->progs.cuda_call_entry, skel_->progs.cuda_call_return, bpf_map__fd(skel_->maps.scoped_ops),
      bpf_map__fd(skel_->maps.call_stats), multi_,
      OnCpuReader(bpf_map__fd(skel_->maps.thread_stats), bpf_map__fd(skel_->maps.task_clocks)),
      timed_return_program(), skel_->bss ? reinterpret_cast<uint64_t*>(skel_->bss->call_edges) : nullptr};
  call_probes_ = std::make_unique<CallProbes>(programs, opts_.cuda_detail, tracing_cost_.policy,
                                              tracing_cost_.measured.value_or(kFallbackProbeCost),
                                              opts_.system_wide && !opts_.cuda_processes_only);
  if (Status s = attach_programs(); !s) return s;
  if (Status s = open_rings(); !s) return s;
  if (Status s = start_profile(); !s) return s;
  for (const std::string& path : opts_.library_paths)
    if (Status s = probe_library(path, true); !s) return s;
  call_probes_->start();
  consuming_ = true;
  consumer_ = std::thread([this] { consume(); });
  if (opts_.gpu_samples) gpu_sampler_ = NvmlSampler::start();
  if (opts_.health_interval_ns > 0) {
    // The traced set: the kernel's filter (a process leaves it at its last thread's exit).
    const int filter = bpf_map__fd(skel_->maps.tgid_filter);
    ProcessSamplerOptions health;
    health.interval = std::chrono::nanoseconds(opts_.health_interval_ns);
    if (opts_.live) health.on_round = [this](const std::vector<ProcessSample>& round) { live_health_.update(round); };
    if (opts_.hang_after_ns > 0) {
      health.hang_after = std::chrono::nanoseconds(opts_.hang_after_ns);
      health.on_hang = [this](const std::vector<pid_t>& pids, uint64_t ts_ns) { record_hang(pids, ts_ns); };
    }
    health_sampler_ = ProcessSampler::start(
        [filter] {
          std::vector<pid_t> pids;
          for_each_key<uint32_t>(filter, [&](uint32_t pid) { pids.push_back(static_cast<pid_t>(pid)); });
          return pids;
        },
        health);
  }
  return {};
}

// The OOM killer's tracepoint as on_oom_victim reads it: mark_victim(task, uid), from Linux 6.8
// (earlier kernels pass the pid alone). Elsewhere the kill is still seen as its SIGKILL.
bool kernel_has_oom_victim_task() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool ok = false;
  const int id = btf__find_by_name_kind(vmlinux, "btf_trace_mark_victim", BTF_KIND_TYPEDEF);
  if (id > 0) {
    const btf_type* t = btf__type_by_id(vmlinux, btf__resolve_type(vmlinux, id));
    if (t && btf_is_ptr(t)) t = btf__type_by_id(vmlinux, t->type);
    if (t && btf_is_func_proto(t) && btf_vlen(t) == 3) {
      const btf_type* task = btf__type_by_id(vmlinux, btf_params(t)[1].type);
      ok = task && btf_is_ptr(task);
    }
  }
  btf__free(vmlinux);
  return ok;
}

// open -> configure rodata and ring sizes -> load.
Status BpfTracer::load() {
  libbpf_set_print(libbpf_print);
  skel_.reset(ingero_bpf::open());
  if (!skel_) return Error::failure(fmt::format("opening the BPF object: {}", last_libbpf_warning()));
  auto* ro = skel_->rodata;
  ro->system_wide = opts_.system_wide && !opts_.cuda_processes_only;
  ro->offcpu_min_ns = opts_.offcpu_min_ns;
  ro->iowait_min_ns = opts_.iowait_min_ns;
  ro->runq_min_ns = opts_.runq_min_ns;
  ro->wakeup_bytes = opts_.ringbuf_bytes / 4;
  ro->mem_burst_pages = opts_.mem_burst_pages;
  ro->mem_burst_min_ns = opts_.mem_burst_min_ns;
  ro->call_stream_min_ns = opts_.call_stream_min_ns;
  ro->call_stacks = opts_.profile_hz != 0;  // they go through the profile's ring and symbolizer
  // Without the waking program no waker is stored: blocked intervals keep arg 0 (unknown).
  if (!opts_.wakers) bpf_program__set_autoload(skel_->progs.on_sched_waking, false);
  oom_from_sigkill_ = !opts_.oom_victim_tracepoint || !kernel_has_oom_victim_task();
  if (oom_from_sigkill_) bpf_program__set_autoload(skel_->progs.on_oom_victim, false);
  ro->oom_from_kernel_sigkill = oom_from_sigkill_;
  multi_ = kernel_has_uprobe_multi();
  if (multi_)
    for (bpf_program* probe : {skel_->progs.cuda_call_entry, skel_->progs.cuda_call_return}) use_uprobe_multi(probe);
  for (bpf_map* ring : {skel_->maps.cuda_ring, skel_->maps.sched_ring, skel_->maps.proc_ring})
    if (bpf_map__set_max_entries(ring, opts_.ringbuf_bytes) != 0)
      return Error::failure(fmt::format("sizing ring buffer {}: {}", bpf_map__name(ring), strerror(errno)));
  // Profiles: about 2 KiB a sample, 100 a second per CPU at the default rate; the ring holds
  // seconds of them. Off: the smallest ring, and the program is not loaded.
  const uint32_t profile_ring = opts_.profile_hz ? std::min<uint32_t>(opts_.ringbuf_bytes, 8u << 20)
                                                 : static_cast<uint32_t>(getpagesize());
  if (bpf_map__set_max_entries(skel_->maps.profile_ring, profile_ring) != 0)
    return Error::failure(fmt::format("sizing ring buffer profile_ring: {}", strerror(errno)));
  if (!opts_.profile_hz) bpf_program__set_autoload(skel_->progs.on_cpu_sample, false);
  if (int err = ingero_bpf::load(skel_.get()); err)
    return Error::failure(fmt::format("loading the BPF programs: {} ({})", strerror(-err), last_libbpf_warning()),
                          "pass --no-trace to run without tracing");
  return {};
}

// The tracer's CUDA probe programs on calibration_target, in this process, which is in the
// filter only while the calibration runs (before any other program is attached).
class SelfProbes final : public CalibrationProbes {
 public:
  SelfProbes(ingero_bpf* skel, CodeLocation where, bool multi) : skel_(skel), where_(std::move(where)), multi_(multi) {}
  Status attach(bool return_probe) override {
    const uint64_t flags = IB_CALL_HOT | (return_probe ? 0 : IB_CALL_ENTRY_ONLY);
    const UprobeSpec spec{where_.path, where_.offset, uint64_t{IB_OP_NONE} | flags << 40, false, getpid()};
    auto links = attach_call_probes(skel_->progs.cuda_call_entry, skel_->progs.cuda_call_return, spec,
                                    return_probe, multi_);
    if (!links) return links.error();
    links_ = std::move(links).value();
    return {};
  }
  // The probes stop firing as the close begins (and a moment after, on another CPU); the
  // closes themselves, which wait for grace periods, need not be waited for.
  void detach() override {
    auto began = closer_.close(std::move(links_));
    links_.clear();
    while (began->load() == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

 private:
  ingero_bpf* skel_;
  CodeLocation where_;
  bool multi_;
  std::vector<UprobeLink> links_;
  LinkCloser closer_;
};

// Removes what the calibration left in the counters (op none), the filter, and the calling
// threads' stats and clocks (a probe clocks a thread at its first call).
void forget_calibration(ingero_bpf* skel, uint32_t self) {
  const int filter = bpf_map__fd(skel->maps.tgid_filter);
  bpf_map_delete_elem(filter, &self);
  std::vector<ib_call_key> keys;
  for_each_key<ib_call_key>(bpf_map__fd(skel->maps.call_stats), [&](const ib_call_key& k) {
    if (k.op == IB_OP_NONE) keys.push_back(k);
  });
  for (const ib_call_key& k : keys) {
    bpf_map_delete_elem(bpf_map__fd(skel->maps.call_stats), &k);
    bpf_map_delete_elem(bpf_map__fd(skel->maps.thread_stats), &k.tid);
    bpf_map_delete_elem(bpf_map__fd(skel->maps.task_clocks), &k.tid);
  }
  const ib_call_hist_key hist{self, IB_OP_NONE};
  bpf_map_delete_elem(bpf_map__fd(skel->maps.call_hists), &hist);
}

TracingCost BpfTracer::calibrate() {
  TracingCost cost;
  cost.policy = opts_.sampling;
  cost.policy.enabled = opts_.sampling.enabled && samples_hot_calls(opts_.cuda_detail) && multi_;
  if (!multi_ && samples_hot_calls(opts_.cuda_detail))
    cost.sampling_off_because = "this kernel has no uprobe_multi links (Linux 6.6+): every call is trapped";
  else if (!samples_hot_calls(opts_.cuda_detail))
    cost.sampling_off_because = fmt::format("--cuda-detail {} traps every call", cuda_detail_name(opts_.cuda_detail));
  if (!opts_.calibrate) {
    cost.unknown_because = "the calibration was switched off";
    return cost;
  }
  auto where = calibration_target_location();
  if (!where) {
    cost.unknown_because = where.error().message;
    return cost;
  }
  const uint32_t self = static_cast<uint32_t>(getpid());
  if (Status s = add_to_filter(static_cast<pid_t>(self)); !s) {
    cost.unknown_because = s.error().message;
    return cost;
  }
  std::optional<Result<ProbeCost>> measured;
  const int return_program = timed_return_program();
  const ProgramRunTime before = read_program_run_time(return_program).value_or(ProgramRunTime{});
  {
    SelfProbes probes(skel_.get(), *where, multi_);
    measured.emplace(calibrate_probe_cost(probes));
    probes.detach();
  }  // every close has returned: the counters stand still
  forget_calibration(skel_.get(), self);
  if (!*measured) {
    cost.unknown_because = measured->error().message;
    return cost;
  }
  cost.measured = **measured;
  // The return probe's program, timed by the kernel's statistics (when they are on) over the
  // calibration's entry + return loops: what the windows' own time of it is compared with.
  const ProgramRunTime timed = read_program_run_time(return_program).value_or(ProgramRunTime{}) - before;
  if (timed.runs > 0)
    cost.measured->return_program_ns = static_cast<double>(timed.ns) / static_cast<double>(timed.runs);
  return cost;
}

// Before the calibration, so that the probe cost it measures includes what the statistics add.
void BpfTracer::time_programs() {
  if (!opts_.program_time) {
    program_time_unknown_ = "switched off (--no-program-time)";
    return;
  }
  const int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0) program_time_unknown_ = fmt::format("the kernel refused BPF run-time statistics: {}", strerror(errno));
  else stats_.reset(fd);
}

std::pair<std::string, std::string> BpfTracer::program_time_setting() {
  if (stats_) {
    auto programs = program_time_json(skel_.get());
    if (programs) return {std::string(contract::kProgramTimeSetting), std::move(programs).value()};
    return {std::string(contract::kProgramTimeUnknownSetting), programs.error().message};
  }
  return {std::string(contract::kProgramTimeUnknownSetting), program_time_unknown_};
}

Status BpfTracer::attach_programs() {
  if (auto left = programs_left_unattached(skel_.get()); !left.empty())
    return Error::failure(
        fmt::format("BPF program {} is in the object but not in attach_order (tracer.cc)", left.front()),
        "add it to attach_order, or give it a uprobe section");
  for (auto [program, link] : attach_order(skel_.get())) {
    if (!bpf_program__autoload(program)) continue;
    *link = bpf_program__attach(program);
    if (!*link)
      return Error::failure(fmt::format("attaching BPF program {}: {} ({})", bpf_program__name(program),
                                        strerror(errno), last_libbpf_warning()),
                            "pass --no-trace to run without tracing");
  }
  return {};
}

Status BpfTracer::open_rings() {
  rings_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.cuda_ring), on_ring_event, this, nullptr));
  if (!rings_) return Error::failure(fmt::format("creating the ring buffer reader: {}", strerror(errno)));
  for (bpf_map* ring : {skel_->maps.sched_ring, skel_->maps.proc_ring})
    if (int err = ring_buffer__add(rings_.get(), bpf_map__fd(ring), on_ring_event, this); err)
      return Error::failure(fmt::format("adding ring buffer {}: {}", bpf_map__name(ring), strerror(-err)));
  if (int err = ring_buffer__add(rings_.get(), bpf_map__fd(skel_->maps.profile_ring), on_profile_sample, this); err)
    return Error::failure(fmt::format("adding ring buffer profile_ring: {}", strerror(-err)));
  return {};
}

// The CPU clock events, last: the rings that take their samples are read from now on.
Status BpfTracer::start_profile() {
  if (!opts_.profile_hz) return {};
  python_ = std::make_unique<ProfilePython>(bpf_map__fd(skel_->maps.python_layouts));
  profile_.set_python_decoder(
      [python = python_.get()](pid_t pid, uint64_t code, uint64_t instr) { return python->decode(pid, code, instr); });
  auto clock = CpuClockSampler::attach(skel_->progs.on_cpu_sample, opts_.profile_hz);
  if (!clock) return clock.error();
  profile_clock_.emplace(std::move(clock).value());
  return {};
}

// The profile and what it cost, once the clock events are closed and the ring drained.
void BpfTracer::add_profile(TraceTotals& totals) {
  totals.settings.emplace_back(contract::kProfileHzSetting, std::to_string(opts_.profile_hz));
  if (!opts_.profile_hz) return;
  totals.settings.emplace_back(contract::kProfileBucketNsSetting, std::to_string(opts_.profile_bucket_ns));
  totals.settings.emplace_back(contract::kProfilePythonSetting, python_->status());
  if (stats_)
    if (auto time = read_program_run_time(bpf_program__fd(skel_->progs.on_cpu_sample)); time && time->runs > 0) {
      totals.settings.emplace_back(contract::kProfileSampleNsSetting,
                                   fmt::format("{:.1f}", static_cast<double>(time->ns) / static_cast<double>(time->runs)));
      totals.settings.emplace_back(contract::kProfileCostNsSetting, std::to_string(time->ns));
    }
  totals.settings.emplace_back(contract::kProfilePythonWalksSetting, python_walks().dump());
  SymbolCache symbols;
  totals.profile = profile_.finish(KernelSymbols::load(), symbols);
}

// The kernel's walks of Python frames by outcome (summed over the CPUs).
nlohmann::json BpfTracer::python_walks() const {
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(cpus > 0 ? cpus : 1);
  const int fd = bpf_map__fd(skel_->maps.python_walks);
  nlohmann::json out = nlohmann::json::object();
  for (uint32_t i = 0; i < IB_PY_WALK_COUNT; ++i) {
    uint64_t n = 0;
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) == 0)
      for (uint64_t v : per_cpu) n += v;
    out[contract::kPythonWalkOutcomes[i]] = n;
  }
  return out;
}

Status BpfTracer::probe_library(const std::string& path, bool requested) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (requested) return Error::bad_input(fmt::format("library {} not found: {}", path, strerror(errno)));
    return {};
  }
  if (!probed_files_.insert({st.st_dev, st.st_ino}).second) return {};
  auto library = call_probes_->probe_library(path, requested);
  if (!library) return library.error();
  libraries_.push_back(std::move(library).value());
  return {};
}

Status BpfTracer::add_to_filter(pid_t pid) {
  uint8_t one = 1;
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.tgid_filter), &key, &one, BPF_ANY) != 0)
    return Error::failure(fmt::format("enrolling pid {} in the trace filter: {}", pid, strerror(errno)));
  return {};
}

Status BpfTracer::enroll(pid_t root_pid) {
  if (!skel_) return Error::failure("the tracer is stopped");
  if (Status s = add_to_filter(root_pid); !s) return s;
  std::lock_guard lock(mutex_);
  threads_.add_root(root_pid);
  ThreadInfo& root = threads_.ensure(root_pid, root_pid);
  if (auto stat = proc::read_stat(root_pid)) root.ppid = stat->ppid;
  root.comm = proc::read_first_line(fmt::format("/proc/{}/comm", root_pid)).value_or("");
  root.uid = proc::process_uid(root_pid);
  root.start_ns = static_cast<uint64_t>(monotonic_ns());
  return {};
}

Status BpfTracer::attach(pid_t pid) {
  if (!skel_) return Error::failure("the tracer is stopped");
  auto target = proc::read_stat(pid);
  if (!target)
    return Error::bad_input(fmt::format("no running process has pid {}", pid), "check the pid with ps");
  // The target first: what it forks from now on is enrolled by the kernel; what it forked
  // before is found in /proc afterwards.
  if (Status s = add_to_filter(pid); !s) return s;
  std::vector<pid_t> processes = {pid};
  for (pid_t child : descendants_of(pid)) {
    if (Status s = add_to_filter(child); !s) return s;
    processes.push_back(child);
  }
  {
    std::lock_guard lock(mutex_);
    threads_.add_root(pid);
    enrolled_.insert(processes.begin(), processes.end());
    for (pid_t process : processes) {
      auto stat = proc::read_stat(process);
      const auto uid = proc::process_uid(process);
      for (pid_t tid : proc::thread_ids(process)) {
        ThreadInfo& t = threads_.ensure(tid, process);
        if (tid == process && stat) t.ppid = stat->ppid;
        if (tid == process && process != pid && stat && is_forked_copy(process, stat->ppid))
          threads_.mark_forked_copy(process);
        if (tid == process) t.cmdline = command_line(process);
        t.comm = proc::read_first_line(fmt::format("/proc/{}/task/{}/comm", process, tid)).value_or(t.comm);
        t.uid = uid;
      }
    }
  }
  read_ranks(std::set<pid_t>(processes.begin(), processes.end()));
  if (python_)  // at once: an attached job's first samples get their Python frames
    for (pid_t process : processes) python_->look_at(process);
  if (!proc::is_alive(pid, target->start_time))
    return Error::bad_input(fmt::format("process {} exited while it was being attached to", pid));
  return {};
}

// System-wide CUDA mode: a process is enrolled once it maps a probed library. New pids are
// looked at on the next poll; the others again every few seconds (python imports torch late).
void BpfTracer::scan_for_cuda_processes() {
  constexpr auto kRecheck = std::chrono::seconds(2);
  const auto now = std::chrono::steady_clock::now();
  const pid_t self = getpid();
  for (pid_t pid : proc::all_pids()) {
    if (pid == self || enrolled_.count(pid)) continue;
    auto [it, fresh] = checked_.try_emplace(pid, now);
    if (!fresh && now - it->second < kRecheck) continue;
    it->second = now;
    if (mapped_call_libraries(pid).empty()) continue;
    (void)attach(pid);  // it may have exited meanwhile: nothing to trace then
  }
}

// A small non-negative number from a process's environment (WORLD_SIZE), if it holds one.
std::optional<int> environment_number(pid_t pid, const char* name) {
  return small_number(proc::environment_value(pid, name));
}

// torchrun gives each rank its RANK, LOCAL_RANK and WORLD_SIZE in the environment it execs with
// (other launchers LOCAL_RANK alone); the rank's forked workers inherit them (ThreadTable follows
// the parents).
void BpfTracer::read_ranks(const std::set<pid_t>& pids) {
  for (pid_t pid : pids) {
    auto rank =
        rank_from_environment(proc::environment_value(pid, "RANK"), proc::environment_value(pid, "LOCAL_RANK"));
    if (!rank) continue;
    const auto world_size = environment_number(pid, "WORLD_SIZE");
    std::lock_guard lock(mutex_);
    threads_.set_rank(pid, *rank, world_size);
  }
}

// A process that exec'd a Python keeps the PYTHONPATH it started with (ThreadInfo::python_path).
void BpfTracer::read_python_paths(const std::set<pid_t>& pids) {
  for (pid_t pid : pids) {
    std::error_code ec;
    const std::string exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), ec).filename().string();
    if (ec || exe.rfind("python", 0) != 0) continue;
    const std::string value = proc::environment_value(pid, "PYTHONPATH").value_or("");
    std::lock_guard lock(mutex_);
    threads_.ensure(pid, pid).python_path = value;
  }
}

void BpfTracer::poll() {
  if (stopped_ || !skel_) return;
  std::set<pid_t> execed;
  {
    std::lock_guard lock(mutex_);
    execed.swap(execed_);
  }
  read_ranks(execed);
  read_python_paths(execed);
  if (opts_.cuda_processes_only) scan_for_cuda_processes();
  track_traced_processes();
  look_for_python_everywhere();
  publish_live(false);
}

// System-wide, every process is sampled: each one's Python frames are looked for, once a second
// at most (a process already looked at costs a set lookup).
void BpfTracer::look_for_python_everywhere() {
  if (!python_ || !opts_.system_wide || opts_.cuda_processes_only) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - python_scanned_ < std::chrono::seconds(1)) return;
  python_scanned_ = now;
  const pid_t self = getpid();
  for (pid_t pid : proc::all_pids())
    if (pid != self) python_->look_at(pid);
}

// Discovers the libraries the traced processes map (unless they were named), and tells the
// call probes which process maps which (per-process probes follow the processes).
void BpfTracer::track_traced_processes() {
  std::vector<uint32_t> pids;
  for_each_key<uint32_t>(bpf_map__fd(skel_->maps.tgid_filter), [&](uint32_t pid) { pids.push_back(pid); });
  std::map<pid_t, std::vector<std::string>> mapped;
  for (uint32_t pid : pids) {
    if (python_) python_->look_at(static_cast<pid_t>(pid));
    auto paths = mapped_call_libraries(static_cast<pid_t>(pid));
    if (opts_.library_paths.empty())
      // Not asked for by --cudart: a library that cannot be probed leaves its calls uncounted, as on a machine
      // without it, and is no reason to stop tracing the rest.
      for (const std::string& path : paths) (void)probe_library(path, false);
    if (!paths.empty()) mapped[static_cast<pid_t>(pid)] = std::move(paths);
  }
  call_probes_->track_processes(mapped);
}

// Stops the duty cycle; a sampled process that exited is estimated up to its exit only.
std::vector<SampledFunction> BpfTracer::stop_sampling() {
  auto sampled = call_probes_->stop(static_cast<uint64_t>(monotonic_ns()));
  std::lock_guard lock(mutex_);
  for (SampledFunction& f : sampled) {
    const ThreadInfo* main = f.pid ? threads_.find(static_cast<pid_t>(f.pid)) : nullptr;
    if (main && main->exit_ns && *main->exit_ns > f.calls.since_ns)
      f.calls.until_ns = std::min(f.calls.until_ns, *main->exit_ns);
    f.estimate = estimate_calls(f.calls);
  }
  return sampled;
}

int BpfTracer::on_ring_event(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfTracer*>(ctx);
  if (size < sizeof(ib_event)) return 0;
  ib_event event;
  memcpy(&event, data, sizeof event);
  if (event.op >= IB_OP_FORK && event.op <= IB_OP_RENAME) {
    std::lock_guard lock(self->mutex_);
    self->threads_.apply(event);
    if (event.op == IB_OP_EXEC) self->execed_.insert(static_cast<pid_t>(event.pid));
  }
  if (event.op == IB_OP_OOM_KILL && self->opts_.live) self->live_health_.add_oom_kill(static_cast<pid_t>(event.pid));
  if (event.op == IB_OP_OFFCPU_BLOCKED && self->opts_.live && self->opts_.live_wait_estimate) {
    std::lock_guard lock(self->mutex_);
    self->wake_waits_.add(event);
  }
  if (event.op == IB_OP_EXEC) {
    self->profile_.forget_process(static_cast<pid_t>(event.pid));
    if (self->python_) self->python_->forget(static_cast<pid_t>(event.pid));  // looked at again by poll()
  }
  self->writer_->push(event);
  return 0;
}

int BpfTracer::on_profile_sample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfTracer*>(ctx);
  if (size < sizeof(ib_profile_sample)) return 0;
  self->profile_.add(*static_cast<const ib_profile_sample*>(data));
  return 0;
}

// NVML's samples, or why there are none (a machine without a GPU says so, once, in the setting).
void BpfTracer::add_gpu_samples(TraceTotals& totals) {
  const std::string setting(contract::kGpuSamplerSetting);
  if (!gpu_sampler_) {
    totals.settings.emplace_back(setting, "off (--no-gpu-samples)");
    return;
  }
  GpuSamples samples = gpu_sampler_->stop();
  gpu_sampler_.reset();
  std::string why;
  for (const std::string& note : samples.notes) why += (why.empty() ? "" : "; ") + note;
  totals.settings.emplace_back(setting, samples.source == contract::kGpuSamplerNvml ? samples.source
                                                                                   : (why.empty() ? "no GPU" : why));
  if (samples.source == contract::kGpuSamplerNvml && !why.empty()) totals.settings.emplace_back(setting + "_notes", why);
  totals.gpus = std::move(samples.gpus);
  totals.gpu_samples = std::move(samples.samples);
}

// The health sampler's rows and what sampling cost its thread.
void BpfTracer::add_process_samples(TraceTotals& totals) {
  totals.settings.emplace_back(contract::kHealthIntervalNsSetting, std::to_string(opts_.health_interval_ns));
  if (!health_sampler_) return;
  totals.process_samples = health_sampler_->stop();
  for (const auto& [ts_ns, stack] : hang_stacks_)
    totals.profile.event_stacks.push_back(
        {stack.tid, ts_ns, static_cast<uint16_t>(IB_OP_HANG), add_python_stack(totals.profile, stack.frames)});
  totals.settings.emplace_back(contract::kHealthSamplerCpuNsSetting, std::to_string(health_sampler_->cpu_ns()));
  if (std::string note = health_sampler_->note(); !note.empty()) totals.problems.push_back(std::move(note));
  health_sampler_.reset();
}

// A hang was seen (on the sampler's thread): where each thread of each process waits in Python, read
// from user space, and a `hang` event of each such thread at that time, which its stack is keyed to.
// A process without an interpreter this reader knows (a shell around the job) has none.
void BpfTracer::record_hang(const std::vector<pid_t>& pids, uint64_t ts_ns) {
  for (pid_t pid : pids) {
    auto stacks = read_python_stacks(pid);
    if (!stacks) continue;
    for (ThreadPythonStack& stack : *stacks) {
      ib_event e{};
      e.ts_ns = ts_ns;
      e.pid = static_cast<uint32_t>(pid);
      e.tid = static_cast<uint32_t>(stack.tid);
      e.op = IB_OP_HANG;
      writer_->push(e);
      hang_stacks_.emplace_back(ts_ns, std::move(stack));
    }
  }
}

void BpfTracer::record_problem(std::string problem) {
  std::lock_guard lock(mutex_);
  problems_.push_back(std::move(problem));
}

void BpfTracer::consume() {
  // Programs wake this thread only when a ring is a quarter full; otherwise it
  // drains every kDrainInterval.
  constexpr int kDrainIntervalMs = 10;
  while (consuming_.load(std::memory_order_relaxed)) {
    int n = ring_buffer__poll(rings_.get(), kDrainIntervalMs);
    if (n >= 0) n = ring_buffer__consume(rings_.get());
    if (n < 0 && n != -EINTR) {
      record_problem(fmt::format("reading the ring buffers failed ({}); events after that were not stored",
                                 strerror(-n)));
      return;
    }
  }
}

void BpfTracer::detach_all() {
  profile_clock_.reset();
  // Detaching cannot fail in a way that changes what is recorded: the links close with their owner.
  if (call_probes_) (void)call_probes_->stop(static_cast<uint64_t>(monotonic_ns()));
  if (skel_) ingero_bpf::detach(skel_.get());
}

void BpfTracer::stop_consumer() {
  consuming_ = false;
  if (consumer_.joinable()) consumer_.join();
  if (rings_) ring_buffer__consume(rings_.get());  // what arrived after the last poll
}

void BpfTracer::shutdown() {
  health_sampler_.reset();  // it reads the filter map, closed below
  detach_all();
  stop_consumer();
  if (writer_) (void)writer_->finish();  // stop() finished it and kept the result; this is the error path's
  rings_.reset();
  skel_.reset();
  stats_.reset();
  stopped_ = true;
}

// The partial bursts of threads still alive (or whose exit program found no room on the
// ring): with them, a thread's page_faults / page_allocs events add up to its counters.
std::vector<std::pair<uint32_t, ib_mem_burst>> BpfTracer::flush_memory_bursts() {
  auto bursts = read_map<uint32_t, ib_mem_burst>(bpf_map__fd(skel_->maps.mem_bursts));
  for (const auto& [tid, b] : bursts) {
    auto emit = [&](uint16_t op, uint64_t start, uint64_t last, uint64_t count, uint64_t bytes) {
      ib_event e{};
      e.ts_ns = start;
      e.dur_ns = last - start;
      e.pid = b.pid;
      e.tid = tid;
      e.op = op;
      e.arg = static_cast<int64_t>(count);
      e.bytes = bytes;
      e.flags = IB_EVENT_HAS_ARG | IB_EVENT_HAS_BYTES;
      writer_->push(e);
    };
    if (b.faults) emit(IB_OP_PAGE_FAULTS, b.fault_start_ns, b.fault_last_ns, b.faults, b.fault_cow * IB_PAGE_BYTES);
    if (b.allocs) emit(IB_OP_PAGE_ALLOCS, b.alloc_start_ns, b.alloc_last_ns, b.allocs, b.alloc_bytes);
  }
  return bursts;
}

// The page counters of threads alive when tracing stopped, kept beside their bursts (mem.bpf.c),
// added to their thread_stats rows (a thread with page events alone gets one).
void add_page_counters(const std::vector<std::pair<uint32_t, ib_mem_burst>>& bursts,
                       std::vector<std::pair<uint32_t, ib_thread_stats>>& stats) {
  std::map<uint32_t, size_t> row_of;
  for (size_t i = 0; i < stats.size(); ++i) row_of[stats[i].first] = i;
  for (const auto& [tid, b] : bursts) {
    if (!b.page_faults && !b.page_allocs) continue;
    auto [it, added] = row_of.try_emplace(tid, stats.size());
    if (added) {
      ib_thread_stats fresh{};
      fresh.pid = b.pid;
      stats.emplace_back(tid, fresh);
    }
    ib_thread_stats& s = stats[it->second].second;
    s.page_faults += b.page_faults;
    s.page_faults_cow += b.page_faults_cow;
    s.page_allocs += b.page_allocs;
    s.page_alloc_bytes += b.page_alloc_bytes;
  }
}

std::vector<TraceLoss> BpfTracer::collect_losses() const {
  std::vector<uint64_t> dropped(IB_LOSS_COUNT, 0);
  const int losses_fd = bpf_map__fd(skel_->maps.losses);
  for (uint32_t i = 0; i < IB_LOSS_COUNT; ++i) bpf_map_lookup_elem(losses_fd, &i, &dropped[i]);

  std::vector<uint64_t> offered(IB_RING_COUNT, 0);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(cpus > 0 ? cpus : 1);
  const int offered_fd = bpf_map__fd(skel_->maps.ring_offered);
  for (uint32_t ring = 0; ring < IB_RING_COUNT; ++ring)
    if (bpf_map_lookup_elem(offered_fd, &ring, per_cpu.data()) == 0)
      for (uint64_t n : per_cpu) offered[ring] += n;

  std::vector<TraceLoss> losses;
  for (int i = 0; i < IB_LOSS_COUNT; ++i)
    losses.push_back({contract::kKernelLossSources[i], dropped[i],
                      i < IB_RING_COUNT ? std::optional(offered[i]) : std::nullopt});
  const uint64_t queued = writer_->written() + writer_->failed();
  losses.push_back({std::string(contract::kQueueLoss), writer_->dropped(), queued + writer_->dropped()});
  losses.push_back({std::string(contract::kWriterLoss), writer_->failed(), queued});
  return losses;
}

// --db-max-mb: the cap, and what was dropped to keep under it; the samples before the cut go too.
void BpfTracer::add_db_cap(TraceTotals& totals) const {
  if (opts_.db_max_bytes == 0) return;
  totals.settings.emplace_back(contract::kDbMaxMbSetting, std::to_string(opts_.db_max_bytes >> 20));
  const std::optional<uint64_t> cut = writer_->dropped_before_ns();
  if (!cut) return;
  totals.settings.emplace_back(contract::kEventsDroppedBeforeSetting, std::to_string(*cut));
  totals.settings.emplace_back(contract::kEventsDroppedSetting, std::to_string(writer_->dropped_for_cap()));
  auto& gpu = totals.gpu_samples;
  gpu.erase(std::remove_if(gpu.begin(), gpu.end(), [&](const GpuSample& g) { return g.ts_ns < *cut; }), gpu.end());
  auto& health = totals.process_samples;
  health.erase(std::remove_if(health.begin(), health.end(), [&](const ProcessSample& p) { return p.ts_ns < *cut; }),
               health.end());
}

std::vector<std::pair<std::string, std::string>> BpfTracer::settings() const {
  return {
      {std::string(contract::kOffcpuMinNsSetting), std::to_string(opts_.offcpu_min_ns)},
      {std::string(contract::kIowaitMinNsSetting), std::to_string(opts_.iowait_min_ns)},
      {std::string(contract::kRunqMinNsSetting), std::to_string(opts_.runq_min_ns)},
      {"ringbuf_bytes", std::to_string(opts_.ringbuf_bytes)},
      {"queue_capacity", std::to_string(opts_.queue_capacity)},
      {"system_wide", opts_.system_wide ? "1" : "0"},
      {"cuda_discovery", opts_.library_paths.empty() ? "maps" : "explicit"},
      {"cuda_detail", std::string(cuda_detail_name(opts_.cuda_detail))},
      {std::string(contract::kCallStreamMinNsSetting), std::to_string(opts_.call_stream_min_ns)},
      {"mem_burst_pages", std::to_string(opts_.mem_burst_pages)},
      {"mem_burst_min_ns", std::to_string(opts_.mem_burst_min_ns)},
      {std::string(contract::kHangAfterNsSetting), std::to_string(opts_.hang_after_ns)},
      {std::string(contract::kWakersSetting), opts_.wakers ? "1" : "0"},
      {std::string(contract::kOomKillsFromSetting),
       std::string(oom_from_sigkill_ ? contract::oom_source::kKernelSigkill : contract::oom_source::kMarkVictim)},
  };
}

// The calibrated probe cost (or why it is unknown) and the duty cycle, as run settings.
std::vector<std::pair<std::string, std::string>> tracing_cost_settings(const TracingCost& cost) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (cost.measured) {
    rows.emplace_back(contract::kProbeEntryNsSetting, fmt::format("{:.1f}", cost.measured->entry_ns));
    rows.emplace_back(contract::kProbeCallNsSetting, fmt::format("{:.1f}", cost.measured->call_ns));
    if (cost.measured->return_program_ns > 0)
      rows.emplace_back(contract::kProbeReturnProgramNsSetting, fmt::format("{:.1f}", cost.measured->return_program_ns));
  } else {
    rows.emplace_back(contract::kProbeCostUnknownSetting, cost.unknown_because);
  }
  const SamplingPolicy& p = cost.policy;
  rows.emplace_back(contract::kCallSamplingSetting, p.enabled ? contract::kCallSamplingOn : contract::kCallSamplingOff);
  if (!cost.sampling_off_because.empty())
    rows.emplace_back(contract::kCallSamplingNoteSetting, cost.sampling_off_because);
  if (p.enabled) {
    rows.emplace_back(contract::kSampleWindowNsSetting, std::to_string(p.window_ns));
    rows.emplace_back(contract::kSamplePeriodNsSetting, std::to_string(p.period_ns));
    rows.emplace_back(contract::kHotShareSetting, fmt::format("{}", p.hot_share));
  }
  return rows;
}

Result<TraceTotals> BpfTracer::stop() {
  if (stopped_ || !skel_) return Error::failure("the tracer was already stopped");
  publish_live(true);  // the final values, with the observer's last records
  std::vector<SampledFunction> sampled = stop_sampling();
  detach_all();
  stop_consumer();
  const auto bursts = flush_memory_bursts();
  Status written = writer_->finish();
  TraceTotals totals;
  totals.thread_stats = read_map<uint32_t, ib_thread_stats>(bpf_map__fd(skel_->maps.thread_stats));
  add_page_counters(bursts, totals.thread_stats);
  totals.histograms = read_map<ib_hist_key, ib_hist>(bpf_map__fd(skel_->maps.histograms));
  for (const auto& [key, slot] : read_map<ib_call_key, ib_call_slot>(bpf_map__fd(skel_->maps.call_stats)))
    totals.call_stats.emplace_back(key, slot.stats);
  totals.call_histograms = read_map<ib_call_hist_key, ib_call_hist>(bpf_map__fd(skel_->maps.call_hists));
  totals.losses = collect_losses();
  totals.settings = settings();
  for (auto& row : tracing_cost_settings(tracing_cost_)) totals.settings.push_back(std::move(row));
  totals.settings.push_back(program_time_setting());
  if (opts_.live) totals.settings.emplace_back(contract::kMetricsPublishCpuNsSetting, std::to_string(live_cpu_ns_));
  add_profile(totals);
  totals.libraries = libraries_;
  totals.cuda_detail = std::string(cuda_detail_name(opts_.cuda_detail));
  totals.sampled = std::move(sampled);
  totals.events_written = writer_->written();
  add_gpu_samples(totals);
  add_process_samples(totals);
  add_db_cap(totals);
  {
    std::lock_guard lock(mutex_);
    for (const auto& [tid, s] : totals.thread_stats) threads_.ensure(static_cast<pid_t>(tid), static_cast<pid_t>(s.pid));
    totals.threads = threads_.rows();
    totals.problems = problems_;
    assign_roles(totals, {});
    record_world_size(threads_.world_sizes(), totals);
  }
  if (!written) totals.problems.push_back("storing events failed: " + written.error().message);
  shutdown();
  return totals;
}

// What tracing cost the traced threads so far: probe hits at the calibrated cost, and the kernel
// programs' own time where the kernel times them, over the threads' on-CPU time.
std::optional<double> live_cost_ratio(const TraceTotals& view, const std::optional<ProbeCost>& probe,
                                      uint64_t programs_ns) {
  uint64_t oncpu = 0, hits = 0;
  for (const auto& [tid, s] : view.thread_stats) oncpu += s.oncpu_ns;
  for (const auto& [key, s] : view.call_stats) hits += s.calls;
  if (oncpu == 0 || (!probe && hits > 0)) return std::nullopt;
  return (static_cast<double>(hits) * (probe ? probe->call_ns : 0) + static_cast<double>(programs_ns)) / oncpu;
}

// Threads summed by role and rank; the roles as the run's end would assign them from what is known now.
std::vector<LiveThreadGroup> live_thread_groups(const TraceTotals& view) {
  std::map<pid_t, const ThreadInfo*> info;
  for (const ThreadInfo& t : view.threads) info[t.tid] = &t;
  std::map<std::pair<std::string, int>, LiveThreadGroup> groups;  // rank -1: none
  for (const auto& [tid, s] : view.thread_stats) {
    auto it = info.find(static_cast<pid_t>(tid));
    const std::string role = it != info.end() && !it->second->role.empty() ? it->second->role
                                                                            : std::string(contract::kRoleOther);
    const std::optional<int> rank = it != info.end() ? it->second->rank : std::nullopt;
    LiveThreadGroup& g = groups[{role, rank.value_or(-1)}];
    g.role = role;
    g.rank = rank;
    g.oncpu_ns += s.oncpu_ns;
    const uint64_t preempted = std::min(s.preempted_ns, s.offcpu_ns);
    const uint64_t io = std::min(s.iowait_ns, s.offcpu_ns - preempted);
    g.offcpu_preempted_ns += preempted;
    g.offcpu_io_ns += io;
    g.offcpu_blocked_ns += s.offcpu_ns - preempted - io;
    g.runq_ns += s.runq_ns;
    g.page_faults += s.page_faults;
    g.copy_on_write_bytes += s.page_faults_cow * IB_PAGE_BYTES;
  }
  std::vector<LiveThreadGroup> rows;
  for (auto& [key, g] : groups) rows.push_back(std::move(g));
  return rows;
}

// Calls per function; a duty-cycled function's count in a process is its estimate there.
std::vector<LiveCalls> live_calls(const TraceTotals& view, const std::vector<SampledFunction>& sampled) {
  std::map<uint32_t, LiveCalls> by_op;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> exact;  // (pid, op)
  for (const auto& [key, s] : view.call_stats) {
    if (key.op == IB_OP_NONE) continue;
    LiveCalls& c = by_op[key.op];
    c.calls += s.calls;
    c.errors += s.errors;
    c.timed += s.returns;
    c.timed_ns += s.total_ns;
    exact[{s.pid, key.op}] += s.calls;
  }
  for (const auto& [key, h] : view.call_histograms) {
    if (key.op == IB_OP_NONE) continue;
    LiveCalls& c = by_op[key.op];
    if (c.latency_slots.empty()) c.latency_slots.assign(IB_CALL_HIST_SLOTS, 0);
    for (int i = 0; i < IB_CALL_HIST_SLOTS; ++i) c.latency_slots[i] += h.slots[i];
  }
  for (const SampledFunction& f : sampled) {
    LiveCalls& c = by_op[f.op];
    uint64_t counted = 0;
    for (const auto& [pid_op, n] : exact)
      if (pid_op.second == f.op && (f.pid == 0 || pid_op.first == f.pid)) counted += n;
    c.calls = c.calls - std::min(c.calls, counted) + static_cast<uint64_t>(f.estimate.calls + 0.5);
    c.estimated = true;
  }
  std::vector<LiveCalls> rows;
  for (auto& [op, c] : by_op) {
    c.function = std::string(contract::op_name(static_cast<uint16_t>(op)));
    rows.push_back(std::move(c));
  }
  return rows;
}

// The observer's DataLoaders, with the rank and role of the process that iterated each.
std::vector<LiveLoaderWaits> live_loaders(const ObserverTail& tail, const TraceTotals& view) {
  std::map<pid_t, const ThreadInfo*> info;
  for (const ThreadInfo& t : view.threads) info[t.tid] = &t;
  std::vector<LiveLoaderWaits> rows;
  for (const auto& [key, l] : tail.loaders()) {
    LiveLoaderWaits w;
    w.pid = l.pid;
    w.loader = l.loader;
    if (auto it = info.find(l.pid); it != info.end()) {
      w.rank = it->second->rank;
      w.role = it->second->role;
    }
    if (w.role.empty()) w.role = std::string(contract::kRoleMain);
    w.batches = l.batch_starts.size();
    w.wait_ns = l.wait_ns;
    w.wait_buckets = l.wait_buckets;
    if (l.knobs.is_object())
      for (const char* knob : {"num_workers", "prefetch_factor", "pin_memory", "persistent_workers", "batch_size"})
        if (auto v = l.knobs.find(knob); v != l.knobs.end() && !v->is_null())
          w.knobs[knob] = v->is_string() ? v->get<std::string>() : v->dump();
    rows.push_back(std::move(w));
  }
  return rows;
}

LiveTotals BpfTracer::live_totals() {
  LiveTotals live;
  live.run_id = run_id_;
  if (opts_.observer_dir) {
    if (!live_tail_) live_tail_ = std::make_unique<ObserverTail>(*opts_.observer_dir);
    live_tail_->poll();
  }
  TraceTotals view;
  view.thread_stats = read_map<uint32_t, ib_thread_stats>(bpf_map__fd(skel_->maps.thread_stats));
  add_page_counters(read_map<uint32_t, ib_mem_burst>(bpf_map__fd(skel_->maps.mem_bursts)), view.thread_stats);
  for (const auto& [key, slot] : read_map<ib_call_key, ib_call_slot>(bpf_map__fd(skel_->maps.call_stats)))
    view.call_stats.emplace_back(key, slot.stats);
  view.call_histograms = read_map<ib_call_hist_key, ib_call_hist>(bpf_map__fd(skel_->maps.call_hists));
  {
    std::lock_guard lock(mutex_);
    for (const auto& [tid, s] : view.thread_stats) threads_.ensure(static_cast<pid_t>(tid), static_cast<pid_t>(s.pid));
    view.threads = threads_.rows();
  }
  assign_roles(view, live_tail_ ? live_tail_->roles() : RoleHints{});
  live.threads = live_thread_groups(view);
  live.calls = live_calls(view, call_probes_->sampled_now(static_cast<uint64_t>(monotonic_ns())));
  if (live_tail_) live.loaders = live_loaders(*live_tail_, view);
  if (opts_.live_wait_estimate) {
    std::lock_guard lock(mutex_);
    live.loaders = wake_waits_.estimate(view.threads);
  }
  live_health_.fill(view.threads, live);
  std::map<pid_t, ThreadClock> clocks;
  for (const auto& [tid, c] : read_map<uint32_t, ib_task_clock>(bpf_map__fd(skel_->maps.task_clocks)))
    clocks[static_cast<pid_t>(tid)] = {c.oncpu_since, c.offcpu_since};
  live.stalled_seconds = stalled_by_rank(view.threads, clocks, static_cast<uint64_t>(monotonic_ns()));
  if (gpu_sampler_)
    for (const auto& [gpu, busy] : gpu_sampler_->latest_busy()) live.gpus.push_back({gpu.index, gpu.uuid, busy});
  for (const TraceLoss& loss : collect_losses()) live.losses.push_back({loss.source, loss.dropped});
  uint64_t programs_ns = 0;
  if (stats_)
    for (const auto& entry : attach_order(skel_.get()))
      if (bpf_program__autoload(entry.first))
        if (auto time = read_program_run_time(bpf_program__fd(entry.first))) programs_ns += time->ns;
  live.tracing_cost_ratio = live_cost_ratio(view, tracing_cost_.measured, programs_ns);
  return live;
}

// At most once a second (now: at once, as the tracer stops). What it costs, by the calling thread's
// CPU clock, is summed for the run's settings.
void BpfTracer::publish_live(bool now) {
  if (!opts_.live || !skel_) return;
  const auto at = std::chrono::steady_clock::now();
  if (!now && at - live_at_ < std::chrono::seconds(1)) return;
  live_at_ = at;
  const int64_t cpu_before = thread_cpu_ns();
  opts_.live->publish(live_totals());
  live_cpu_ns_ += thread_cpu_ns() - cpu_before;
}

}  // namespace

Status validate(const TraceOptions& opts) {
  const uint32_t ring = opts.ringbuf_bytes;
  const auto page = static_cast<uint32_t>(getpagesize());
  if (ring < page || (ring & (ring - 1)) != 0)
    return Error::bad_input(fmt::format("ring buffer size {} bytes is not a power of two of at least {} bytes", ring,
                                        page),
                            "pass --ringbuf-mb 1, 2, 4, 8, 16, 32, 64, ...");
  if (opts.mem_burst_pages == 0) return Error::bad_input("memory bursts of 0 pages", "pass a positive count");
  const SamplingPolicy& p = opts.sampling;
  if (p.window_ns == 0 || p.period_ns < p.window_ns)
    return Error::bad_input(fmt::format("a sample window of {} ms in a period of {} ms", p.window_ns / 1e6,
                                        p.period_ns / 1e6),
                            "pass a --sample-window-ms above 0 and no longer than --sample-period-ms");
  if (!(p.hot_share > 0 && p.hot_share <= 1))
    return Error::bad_input(fmt::format("a hot share of {} %", p.hot_share * 100), "pass --hot-share-pct in (0, 100]");
  return {};
}

Status check_can_trace() {
  const char* hint = "run with sudo, or pass --no-trace to run without tracing";
  bool can_trace = (has_capability(CAP_BPF) && has_capability(CAP_PERFMON)) || has_capability(CAP_SYS_ADMIN);
  if (!can_trace)
    return Error::bad_input(
        fmt::format("eBPF tracing needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN); uid {} lacks them",
                    geteuid()),
        hint);
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return Error::bad_input("eBPF tracing needs kernel BTF (/sys/kernel/btf/vmlinux is missing)",
                            "use a kernel built with CONFIG_DEBUG_INFO_BTF, or pass --no-trace");
  return {};
}

Result<std::unique_ptr<Tracer>> Tracer::start(const TraceOptions& opts, const std::string& db_path, int64_t run_id) {
  if (Status s = validate(opts); !s) return s.error();
  if (Status s = check_can_trace(); !s) return s.error();
  auto tracer = std::make_unique<BpfTracer>(opts, run_id);
  if (Status s = tracer->init(db_path); !s) return s.error();  // the destructor detaches what was attached
  return std::unique_ptr<Tracer>(std::move(tracer));
}

}  // namespace ingero::tracer
