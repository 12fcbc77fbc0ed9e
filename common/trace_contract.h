// SPDX-License-Identifier: Apache-2.0
// The contract between the writers of a trace DB (tracer/, harness/) and its readers
// (reports/, mcp/): schema version, op names and categories (from the BPF header both
// sides share), thread roles, run statuses and kinds, workload modes, loss sources.
// The tables themselves are in common/schema.sql; every name a reader relies on is here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "bpf/events.h"

namespace ingero::contract {

// PRAGMA user_version of a trace DB this build writes; readers also read older ones.
inline constexpr int kSchemaVersion = 11;
inline constexpr int kOldestReadableSchema = 1;

// ---- ops (events.op, call_stats.op): codes are positions in IB_OPS, names are what
// readers use (through the ops table, never by code).
struct OpInfo {
  uint16_t code;
  std::string_view name;
  std::string_view category;
};

inline constexpr OpInfo kOps[] = {
#define IB_OP_TABLE_ENTRY(id, name, category) OpInfo{id, name, category},
    IB_OPS(IB_OP_TABLE_ENTRY)
#undef IB_OP_TABLE_ENTRY
};

std::optional<uint16_t> op_code(std::string_view name);
std::string_view op_name(uint16_t code);  // "?" when unknown

// The ops readers name in their logic, taken from IB_OPS so that a rename there reaches them.
namespace op {
constexpr bool codes_are_positions() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].code != i) return false;
  return true;
}
static_assert(codes_are_positions(), "IB_OPS codes are positions");
// A batch's wait for data and its compute, from a workload's record or the Python observer, and a
// DataLoader worker's start-up (fork to ready).
inline constexpr std::string_view kBatchWait = kOps[IB_OP_BATCH_WAIT].name;
inline constexpr std::string_view kBatchCompute = kOps[IB_OP_BATCH_COMPUTE].name;
inline constexpr std::string_view kWorkerStart = kOps[IB_OP_WORKER_START].name;
// A thread off the CPU: preempted while runnable, blocked, or blocked on I/O; then waiting in the run queue.
inline constexpr std::string_view kOffcpuPreempted = kOps[IB_OP_OFFCPU_PREEMPTED].name;
inline constexpr std::string_view kOffcpuBlocked = kOps[IB_OP_OFFCPU_BLOCKED].name;
inline constexpr std::string_view kOffcpuIo = kOps[IB_OP_OFFCPU_IO].name;
inline constexpr std::string_view kRunqWait = kOps[IB_OP_RUNQ_WAIT].name;
// Memory bursts and block I/O requests.
inline constexpr std::string_view kPageFaults = kOps[IB_OP_PAGE_FAULTS].name;
inline constexpr std::string_view kPageAllocs = kOps[IB_OP_PAGE_ALLOCS].name;
inline constexpr std::string_view kBlockIo = kOps[IB_OP_BLOCK_IO].name;
// Process events.
inline constexpr std::string_view kFork = kOps[IB_OP_FORK].name;
inline constexpr std::string_view kExit = kOps[IB_OP_EXIT].name;
inline constexpr std::string_view kThreadExit = kOps[IB_OP_THREAD_EXIT].name;
// A thread of a hung job, when the hang was seen (its Python stack in event_stacks).
inline constexpr std::string_view kHang = kOps[IB_OP_HANG].name;
}  // namespace op

namespace category {
inline constexpr std::string_view kCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCudaDriver = "cuda_driver";
inline constexpr std::string_view kNccl = "nccl";
inline constexpr std::string_view kSched = "sched";
inline constexpr std::string_view kMemory = "mm";
inline constexpr std::string_view kIo = "io";
inline constexpr std::string_view kProcess = "process";
inline constexpr std::string_view kWorkload = "workload";
inline constexpr std::string_view kLibraryCalls[] = {kCudaRuntime, kCudaDriver, kNccl};  // call_stats' categories
inline constexpr std::string_view kAll[] = {kCudaRuntime, kCudaDriver, kNccl, kSched, kMemory, kIo, kProcess, kWorkload};
}  // namespace category

bool is_cuda_category(std::string_view category);
// CUDA runtime, CUDA driver or NCCL: the calls probed with uprobes (call_stats rows).
bool is_library_call_category(std::string_view category);

// ---- thread roles (threads.role)
inline constexpr std::string_view kRoleMain = "main";      // a traced process's main loop
inline constexpr std::string_view kRoleWorker = "worker";  // a DataLoader worker process
inline constexpr std::string_view kRolePin = "pin";        // the pin-memory thread
inline constexpr std::string_view kRoleOther = "other";
inline constexpr std::string_view kRoles[] = {kRoleMain, kRoleWorker, kRolePin, kRoleOther};
// The roles that produce batches for the main thread.
inline bool is_producer_role(std::string_view role) { return role == kRoleWorker || role == kRolePin; }

// Workers and pin threads by the names loaders give them (ib-worker-N / ib-pin here,
// pt_data_worker / pt_data_pin / pt_pin_memory in PyTorch); a root process's main
// thread is 'main'; everything else 'other'.
std::string_view thread_role(std::string_view comm, bool is_main_thread, bool is_root_process);
// The order every listing of threads or processes uses: main 0, pin 1, worker 2, anything else 3.
int role_rank(std::string_view role);

// ---- runs
namespace status {
inline constexpr std::string_view kRunning = "running";
inline constexpr std::string_view kOk = "ok";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kInterrupted = "interrupted";
inline constexpr std::string_view kAbandoned = "abandoned";  // its harness died before finishing it
inline constexpr std::string_view kAll[] = {kOk, kFailed, kInterrupted, kRunning, kAbandoned};
}  // namespace status

// The state of a sweep as a whole (sweeps.status).
namespace sweep_status {
inline constexpr std::string_view kRunning = status::kRunning;
inline constexpr std::string_view kDone = "done";  // searched (and verified, where it could be)
inline constexpr std::string_view kInterrupted = status::kInterrupted;
inline constexpr std::string_view kFailed = status::kFailed;        // nothing could be searched
inline constexpr std::string_view kAbandoned = status::kAbandoned;  // its harness died
}  // namespace sweep_status

// The status a workload's result record (runs.result_json, and the record a workload prints)
// gives: a run of every epoch asked, a run stopped early on purpose (a budget, --duration),
// or one interrupted or failed.
namespace record_status {
inline constexpr std::string_view kOk = status::kOk;
inline constexpr std::string_view kStopped = "stopped";
inline constexpr std::string_view kInterrupted = status::kInterrupted;
inline constexpr std::string_view kFailed = status::kFailed;
}  // namespace record_status

// The state of a sweep's point (sweep_points.state).
namespace point_state {
inline constexpr std::string_view kPending = "pending";    // still to be measured
inline constexpr std::string_view kMeasured = "measured";  // decided by its measurements
inline constexpr std::string_view kPruned = "pruned";      // dropped: clearly slower than the best
inline constexpr std::string_view kFailed = "failed";      // its run failed
inline constexpr std::string_view kSkipped = "skipped";    // off the search's path, or past the budget
inline constexpr std::string_view kAll[] = {kMeasured, kPruned, kFailed, kSkipped, kPending};
}  // namespace point_state

// Why a sweep's point was skipped, or stopped short of its rules (sweep_points.cause); none for the
// others.
namespace point_cause {
inline constexpr std::string_view kBudget = "budget";        // the sweep's --budget ran out first
inline constexpr std::string_view kDuplicate = "duplicate";  // the same knobs as a point measured already
inline constexpr std::string_view kOffPath = "off_path";     // the coordinate search did not lead to it
}  // namespace point_cause

// The phase of a sweep's run (runs.sweep_phase).
namespace sweep_phase {
inline constexpr std::string_view kMeasure = "measure";  // the search's measurements
inline constexpr std::string_view kVerify = "verify";    // the interleaved re-runs that prove the advice
inline constexpr std::string_view kProbe = "probe";      // a budget's sizing run, not a measurement
inline constexpr std::string_view kAll[] = {kMeasure, kVerify, kProbe};
}  // namespace sweep_phase

namespace kind {
inline constexpr std::string_view kWorkload = "workload";  // ingero-bench --workload / sweep / ci
inline constexpr std::string_view kCommand = "command";    // ingero-bench trace -- CMD
inline constexpr std::string_view kAttach = "attach";      // ingero-bench trace --pid
inline constexpr std::string_view kSystem = "system";      // ingero-bench trace --duration (CUDA processes)
inline constexpr std::string_view kAll[] = {kWorkload, kCommand, kAttach, kSystem};
}  // namespace kind

// A sweep point that runs the user's own command (config.mode), its DataLoader overridden.
inline constexpr std::string_view kJobMode = "job";

// ---- workload modes (config.mode)
struct ModeInfo {
  std::string_view name;
  bool uses_workers;    // num_workers / prefetch_factor change it
  bool runs_in_python;  // run by python3 rather than LibTorch
  bool is_dataloader;   // a DataLoader configuration (the others index the tensor directly)
};
inline constexpr ModeInfo kModes[] = {
    {"direct", false, false, false},         {"direct-shuffled", false, false, false},
    {"resident", false, false, false},       {"loader", true, false, true},
    {"loader-batched", true, false, true},   {"torch-loader", true, false, true},
    {"python", true, true, true},            {"python-direct", false, true, false},
};
const ModeInfo* find_mode(std::string_view name);  // nullptr when unknown

// ---- losses.source: the rings and in-kernel maps (IB_LOSS_NAMES), then user space's
inline constexpr const char* kKernelLossSources[IB_LOSS_COUNT] = IB_LOSS_NAMES;
inline constexpr std::string_view kQueueLoss = "queue";    // the writer queue was full
inline constexpr std::string_view kWriterLoss = "writer";  // SQLite refused the rows
// Sources whose drops lose events (the others lose totals or latencies).
bool loss_drops_events(std::string_view source);

// ---- run_settings keys a reader relies on
// The WORLD_SIZE the traced torch.distributed processes were started with (when they agree):
// with the ranks in threads.rank, it tells which runs of several nodes form one job.
inline constexpr std::string_view kWorldSizeSetting = "world_size";

// Set to "observer" when the Python observer wrote a user's job's batch_wait / batch_compute
// events (a workload run's come from its own record).
inline constexpr std::string_view kBatchSourceSetting = "batch_source";
inline constexpr std::string_view kBatchSourceObserver = "observer";
// Whether the Python observer was put on a launched job's PYTHONPATH: "on", "off" (switched
// off), "unused" (on, but no Python process of the job built a DataLoader), "unreached" (below).
inline constexpr std::string_view kObserverSetting = "observer";
inline constexpr std::string_view kObserverOn = "on";
inline constexpr std::string_view kObserverOff = "off";
inline constexpr std::string_view kObserverUnused = "unused";
// On, but it reached none of the job's Python processes; run_settings.observer_unreached says why
// (a user switch, a PYTHONPATH the job replaced, python -E/-I/-S).
inline constexpr std::string_view kObserverUnreached = "unreached";
inline constexpr std::string_view kObserverUnreachedSetting = "observer_unreached";
// In a loader's knobs (loaders.knobs_json), added by the observer's reader: len(loader) at its last
// epoch, the batches an epoch takes, where the observer could tell.
inline constexpr std::string_view kBatchesPerEpochKnob = "batches_per_epoch";
// What a launched job's --override asked of its DataLoaders, as a JSON object, whether or not
// it reached one (each loader's overrides_json says what was applied).
inline constexpr std::string_view kOverridesAskedSetting = "overrides_asked";
// How the GPU's utilisation was sampled: "nvml", or why it was not (no NVML, no GPU).
inline constexpr std::string_view kGpuSamplerSetting = "gpu_sampler";
inline constexpr std::string_view kGpuSamplerNvml = "nvml";
// Worker health: how often process_samples were taken (ns, decimal; "0": not sampled), and the CPU
// time the sampling thread spent (ns), the cost of it.
inline constexpr std::string_view kHealthIntervalNsSetting = "health_interval_ns";
inline constexpr std::string_view kHealthSamplerCpuNsSetting = "health_sampler_cpu_ns";
// The live metrics (--metrics-addr, --metrics-push), only when on: what they cost the tracer's
// process in the run (ns, decimal). Gathering the totals and publishing them to the registry each
// second, by the publishing thread's CPU clock; serving /metrics, by the exposer's threads' CPU time
// over the run, and the scrapes served then (both only when serving).
inline constexpr std::string_view kMetricsPublishCpuNsSetting = "metrics_publish_cpu_ns";
inline constexpr std::string_view kMetricsServeCpuNsSetting = "metrics_serve_cpu_ns";
inline constexpr std::string_view kMetricsScrapesSetting = "metrics_scrapes";
// A hang: every traced thread of the job off the CPU with no batch delivered for this long (ns,
// decimal; --hang-after-s).
inline constexpr std::string_view kHangAfterNsSetting = "hang_after_ns";
// Where oom_kill events come from: the OOM killer's tracepoint, or (kernels before 6.8, whose
// tracepoint names the victim's pid alone) the SIGKILL the kernel itself sent.
inline constexpr std::string_view kOomKillsFromSetting = "oom_kills_from";
namespace oom_source {
inline constexpr std::string_view kMarkVictim = "mark_victim";
inline constexpr std::string_view kKernelSigkill = "kernel_sigkill";
}  // namespace oom_source

// The recording thresholds (ns, decimal): shorter off-CPU intervals, I/O waits, run-queue waits and
// CUDA calls are not stored as events, which a reader says when it counts from events.
inline constexpr std::string_view kOffcpuMinNsSetting = "offcpu_min_ns";
inline constexpr std::string_view kIowaitMinNsSetting = "iowait_min_ns";
inline constexpr std::string_view kRunqMinNsSetting = "runq_min_ns";
inline constexpr std::string_view kCallStreamMinNsSetting = "call_stream_min_ns";

// Whether the tracer recorded which thread woke each blocked interval ("1"; "0" with
// --no-wakeups): an attached job's waits are estimated from those wakers.
inline constexpr std::string_view kWakersSetting = "wakers";

// A launched job's CPU time, user and system (ns, decimal), as the harness waited for it: its
// process and every descendant that was waited for (wait4's rusage). Traced or not, so an untraced
// run of the same job is its baseline: probe traps and kernel programs are charged as system time.
inline constexpr std::string_view kJobUserNsSetting = "job_user_ns";
inline constexpr std::string_view kJobSystemNsSetting = "job_system_ns";

// Attached and system-wide runs: when the processes were attached and when the trace stopped
// watching them (CLOCK_MONOTONIC ns). The run's row spans the tracer's start-up and drain too.
inline constexpr std::string_view kTracedFromSetting = "traced_from_ns";
inline constexpr std::string_view kTracedUntilSetting = "traced_until_ns";

// --db-max-mb: the cap on the DB file (MB, decimal), and, once it was reached, the time (CLOCK_MONOTONIC
// ns) before which this run's events (and their event_stacks rows) were dropped in whole slices, and
// how many. Totals (thread_stats, call_stats, histograms) stay exact.
inline constexpr std::string_view kDbMaxMbSetting = "db_max_mb";
inline constexpr std::string_view kEventsDroppedBeforeSetting = "events_dropped_before_ns";
inline constexpr std::string_view kEventsDroppedSetting = "events_dropped";

// An attached or system-wide run's trainer: its command line as /proc showed it (JSON array), so
// that advice can name the command that measures a change.
inline constexpr std::string_view kTrainerCommandSetting = "trainer_command";

// What tracing cost: the calibrated cost of a call probed at entry only and at entry + return
// (ns, decimal), or, when the calibration could not probe, kProbeCostUnknownSetting says why.
inline constexpr std::string_view kProbeEntryNsSetting = "probe_entry_ns";
inline constexpr std::string_view kProbeCallNsSetting = "probe_call_ns";
inline constexpr std::string_view kProbeCostUnknownSetting = "probe_cost_unknown";
// The return probe's BPF program per hit in the calibration (ns, decimal; absent where the kernel's
// run-time statistics were off): duty-cycled estimates scale the calibrated cost by the windows' own
// time of it against this (call_sampling.trap_cost_scale).
inline constexpr std::string_view kProbeReturnProgramNsSetting = "probe_return_program_ns";
// The duty cycle of hot calls: "on" or "off" (--cuda-detail exact/full, or switched off), and
// when on its window, period (ns) and the share of a thread's time above which a call is hot.
inline constexpr std::string_view kCallSamplingSetting = "call_sampling";
inline constexpr std::string_view kCallSamplingOn = "on";
inline constexpr std::string_view kCallSamplingOff = "off";
inline constexpr std::string_view kCallSamplingNoteSetting = "call_sampling_note";  // why it is off
inline constexpr std::string_view kSampleWindowNsSetting = "sample_window_ns";
inline constexpr std::string_view kSamplePeriodNsSetting = "sample_period_ns";
inline constexpr std::string_view kHotShareSetting = "hot_share";
// call_sampling.rate_clock: what a duty-cycled count's rates were taken per.
namespace rate_clock {
inline constexpr std::string_view kOnCpu = "on_cpu";  // the calling threads' on-CPU seconds
inline constexpr std::string_view kWall = "wall";     // wall seconds (a caller's on-CPU time was unknown)
}  // namespace rate_clock
// What the tracer's kernel programs other than the CUDA probes (process, scheduler, memory and
// block events) ran for, from the kernel's BPF run-time statistics, switched on while tracing: a
// JSON object {program: {"runs": N, "ns": T}}. The CUDA probes' cost is their hits x the
// calibrated cost above, which includes their programs. kProgramTimeUnknownSetting says why not.
inline constexpr std::string_view kProgramTimeSetting = "bpf_program_time";
inline constexpr std::string_view kProgramTimeUnknownSetting = "bpf_program_time_unknown";
// CPU profiles (profile_* tables): the rate per CPU (0: off), the width of a time bucket (ns),
// 'ok' or why Python frames are unavailable, and what the profile program cost: its mean run time
// per sample (ns, decimal, from the kernel's run-time statistics; each run is one clock tick of a
// CPU, traced or not) and its total (ns; it is also in kProgramTimeSetting as on_cpu_sample).
inline constexpr std::string_view kProfileHzSetting = "profile_hz";
inline constexpr std::string_view kProfileBucketNsSetting = "profile_bucket_ns";
inline constexpr std::string_view kProfilePythonSetting = "profile_python";
inline constexpr std::string_view kProfileSampleNsSetting = "profile_sample_ns";
inline constexpr std::string_view kProfileCostNsSetting = "profile_cost_ns";
inline constexpr std::string_view kProfileProgram = "on_cpu_sample";  // its name in kProgramTimeSetting
// What the kernel's walks of Python frames came to (the profile's samples and the stored calls' stacks): a
// JSON object of counts by IB_PY_WALK_NAMES ("ok", "no_layout", "no_thread", "read_fault", "not_code",
// "depth_cut": read, but frames were left past the walk's bounds).
inline constexpr std::string_view kProfilePythonWalksSetting = "profile_python_walks";
inline constexpr const char* kPythonWalkOutcomes[IB_PY_WALK_COUNT] = IB_PY_WALK_NAMES;
// profile_frames.kind
namespace frame_kind {
inline constexpr std::string_view kPython = "python";
inline constexpr std::string_view kNative = "native";
inline constexpr std::string_view kKernel = "kernel";
}  // namespace frame_kind

// ---- gpu_samples.metric (percent)
namespace gpu_metric {
inline constexpr std::string_view kGpuUtil = "gpu_util";    // a kernel was running
inline constexpr std::string_view kMemUtil = "mem_util";    // the memory controller was busy
inline constexpr std::string_view kSmActive = "sm_active";  // GPM SM utilisation (Hopper on)
}  // namespace gpu_metric

// ---- histograms.metric (log2 microseconds)
inline constexpr const char* kHistogramMetrics[IB_HIST_COUNT] = IB_HIST_METRIC_NAMES;

}  // namespace ingero::contract
