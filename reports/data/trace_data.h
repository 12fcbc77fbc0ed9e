// SPDX-License-Identifier: Apache-2.0
// Reading a trace DB (common/schema.sql), the one home of the readers' SQL: runs, their
// threads, exact totals, histograms, settings and losses, and the events an analysis needs,
// no more. A reader never writes: the file is opened read-only (immutable when its
// directory cannot be written), and an older schema is upgraded in a private in-memory copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "reports/data/count_estimate.h"
#include "common/sqlite.h"

namespace ingero::reports {

// The hint readers give with a file that cannot be read as a trace DB.
extern const char* const kTraceDbHint;

struct RunRecord {
  int64_t run_id = 0;
  std::string label;
  std::string kind;
  std::string status;          // as stored, except 'running' runs whose harness is gone: 'abandoned'
  std::string error;           // why it failed or was abandoned
  nlohmann::json config;       // null when absent or unparsable
  nlohmann::json result;       // null when absent or unparsable
  nlohmann::json machine;      // object; may lack keys
  nlohmann::json targets;      // attach: the pids asked for; null otherwise
  std::vector<std::string> command;  // argv of a launched command (trace -- CMD, workload runs)
  double started_unix = 0;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> root_pid;
  bool traced = false;
  std::string node;
  std::optional<int64_t> sweep_id;
  std::string sweep_point;
  std::string sweep_phase;
};

struct ThreadRecord {
  int64_t tid = 0;
  int64_t pid = 0;
  std::optional<int64_t> ppid;
  std::string comm;
  std::string role;  // main | worker | pin | other
  std::optional<int64_t> start_ns;
  std::optional<int64_t> exit_ns;
  std::optional<int64_t> rank;
  std::optional<int64_t> exit_code;
};

// The scheduler, memory and I/O counters of one thread (the thread_stats columns), or
// their sum over a process or a role.
struct ThreadCounters {
  int64_t voluntary_switches = 0;
  int64_t involuntary_switches = 0;
  int64_t oncpu_ns = 0;
  int64_t offcpu_ns = 0;
  int64_t offcpu_max_ns = 0;  // the longest single off-CPU period
  int64_t runq_count = 0;
  int64_t runq_ns = 0;
  int64_t page_allocs = 0;
  int64_t page_alloc_bytes = 0;
  int64_t page_faults = 0;
  int64_t io_count = 0;
  int64_t io_bytes = 0;
  int64_t io_ns = 0;
  int64_t iowait_count = 0;       // blocked intervals slept in I/O wait (0 in traces before schema 5)
  int64_t iowait_ns = 0;
  int64_t cache_pages_added = 0;  // pages its reads brought into the page cache

  // Adds every counter except offcpu_max_ns, which keeps the larger of the two.
  ThreadCounters& operator+=(const ThreadCounters& other);
};

struct ThreadStatsRecord {
  int64_t tid = 0;
  int64_t pid = 0;
  ThreadCounters counters;
};

ThreadCounters total_counters(const std::vector<ThreadStatsRecord>& thread_stats);

// One function duty-cycled in one process (pid 0: every process), as call_sampling holds it.
struct SampledCallRecord {
  int64_t pid = 0;
  std::string op;
  int64_t since_ns = 0;
  int64_t until_ns = 0;
  int64_t windows = 0;
  int64_t attached_ns = 0;
  int64_t probed_calls = 0;
  int64_t estimated_calls = 0;
  int64_t estimated_low = 0;
  std::optional<int64_t> estimated_high;
  std::string rate_clock;  // contract::rate_clock; empty where the file predates it
  std::optional<double> trap_cost_scale;  // the calibrated cost's scale in the job; none: it stood
  double duty_share() const {
    return until_ns > since_ns ? static_cast<double>(attached_ns) / static_cast<double>(until_ns - since_ns) : 1.0;
  }
};

// One window in which a duty-cycled function was probed (call_sampling_windows): outside the
// windows of its process, its calls were not seen.
struct SampledWindowRecord {
  int64_t pid = 0;  // 0: every process
  std::string op;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t calls = 0;
};

// One probed function's totals over the run (call_stats summed over threads) and its log2
// nanosecond latency histogram (call_histograms summed over processes). The counters hold the
// calls that were probed: every call, unless the function was duty-cycled somewhere, when
// `estimate` holds the whole count.
struct CallTotals {
  std::string op;
  std::string category;
  int64_t calls = 0;
  int64_t returns = 0;
  int64_t errors = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  int64_t bytes = 0;
  int64_t streamed = 0;
  // Probed calls not timed because a duty cycle's window cut them (call_stats.cut_calls); none: a
  // file before schema version 9.
  std::optional<int64_t> cut;
  std::vector<int64_t> histogram;
  std::optional<CountEstimate> estimate;
  // Every timed call is also an event: percentiles can be exact.
  bool every_call_stored() const { return streamed == returns && !estimate; }
  int64_t count() const { return estimate ? estimate->calls : calls; }  // best figure for the calls made
};

// Probe hits on one thread: calls entered while probed, and of them those whose return was probed too.
struct ThreadHits {
  int64_t tid = 0;
  int64_t pid = 0;
  int64_t calls = 0;
  int64_t returns = 0;
};

// One process's exact totals of one probed function (call_stats summed over its threads).
struct ProcessCallTotals {
  int64_t pid = 0;
  CallTotals totals;  // without a histogram
};

// A run whose threads carry torch.distributed ranks: which, and the world size the tracer
// recorded for them (run_settings, contract::kWorldSizeSetting), when it did.
struct RunRanks {
  int64_t run_id = 0;
  std::vector<int64_t> ranks;  // ascending, distinct
  std::optional<int64_t> world_size;
};

// A DataLoader the Python observer saw in a user's job (loaders table).
struct LoaderRecord {
  int64_t pid = 0;
  int64_t loader = 0;
  nlohmann::json knobs;      // object: num_workers, prefetch_factor, pin_memory, ...
  nlohmann::json overrides;  // {"applied", "original"} or {"error"}; null when none
  int64_t epochs = 0;
  int64_t batches = 0;
  int64_t wait_ns = 0;
  std::vector<int64_t> workers;
};

struct GpuRecord {
  int64_t gpu = 0;
  std::string name;
};
// One NVML sample (gpu_samples); metric is a contract::gpu_metric name, value a percentage.
struct GpuSample {
  int64_t gpu = 0;
  int64_t ts_ns = 0;
  std::string metric;
  double value = 0;
};

// Everything about a run except its events.
struct RunContext {
  RunRecord run;
  std::vector<ThreadRecord> threads;
  std::vector<ThreadStatsRecord> thread_stats;
  // histograms[metric][pid] = counts per log2 slot
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> histograms;
  std::map<std::string, std::string> settings;
  // Per source; empty optional when the run never recorded them (its harness died).
  std::optional<std::map<std::string, int64_t>> losses;
  std::vector<CallTotals> calls;  // most total time first
  std::vector<SampledCallRecord> sampled;  // duty-cycled functions (empty: every count exact)
  std::vector<ThreadHits> thread_hits;     // probe hits per thread (the tracing cost)
  std::map<int64_t, int64_t> cuda_ns_by_tid;  // time inside probed CUDA calls, per thread
  std::vector<LoaderRecord> loaders;          // most batches first
  std::vector<GpuRecord> gpus;
  std::vector<GpuSample> gpu_samples;         // in time order

  // A run_settings value, or none when the run did not record it.
  std::optional<std::string> setting(std::string_view key) const {
    auto it = settings.find(std::string(key));
    return it == settings.end() ? std::nullopt : std::optional(it->second);
  }
};

// One event as the analysis holds it. arg: how many faults or allocations a memory
// burst counts, the worker id of a worker_start, the batch index of a batch_* event.
struct Event {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t tid = 0;
  int64_t arg = 0;  // the op's arg; for an op without one (block_io), its bytes
  int64_t end_ns() const { return ts_ns + dur_ns; }
};
using EventList = std::vector<Event>;

// Events of several ops, each list in time order.
struct EventSet {
  std::map<std::string, EventList, std::less<>> by_op;
  const EventList& of(std::string_view op) const;
  size_t total() const;
};

// Which events to read: ops by name; only those overlapping [from, until) when set; only
// of these threads when non-empty; only those lasting at least min_dur_ns when set.
struct EventFilter {
  std::vector<std::string> ops;
  std::optional<int64_t> from_ns;
  std::optional<int64_t> until_ns;
  std::vector<int64_t> tids;
  std::optional<int64_t> min_dur_ns;
};

// One event with every column, for timelines (MCP get_timeline, exports, reports).
struct EventRow {
  std::string op;
  std::string category;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  std::optional<int64_t> ret, bytes, arg, stream;
};
struct TimelineQuery {
  std::optional<int64_t> pid;
  std::optional<int64_t> tid;
  std::optional<int64_t> from_ns;   // events overlapping [from, until)
  std::optional<int64_t> until_ns;
  std::vector<std::string> categories;  // empty: all
  int64_t limit = 1000;
};
struct Timeline {
  std::vector<EventRow> events;  // in time order
  bool truncated = false;        // more events matched than the limit
};

struct SweepRecord {
  int64_t sweep_id = 0;
  std::string status;        // as stored, except 'running' sweeps whose harness is gone: 'abandoned'
  nlohmann::json request;
  nlohmann::json rules;
  std::string baseline_point;
  std::string recommended_point;
  double started_unix = 0;
  std::optional<double> ended_unix;
};

struct SweepPointRecord {
  std::string point;
  int64_t position = 0;
  nlohmann::json config;
  std::string state;
  std::string reason;
  std::string cause;  // contract::point_cause, "" for none
};

// One row of process_samples (the worker-health sampler): a field is empty where /proc could not tell.
struct ProcessSampleRecord {
  int64_t pid = 0;
  int64_t ts_ns = 0;
  std::optional<int64_t> rss_bytes, pss_bytes, private_dirty_bytes, swap_bytes;
  std::optional<int64_t> fds, fd_limit;
  std::optional<int64_t> shm_size_bytes, shm_free_bytes;
  std::optional<std::string> wchan;  // where the process's main thread slept; empty while it ran
};

// A process's copy-on-write bytes (the bytes of its page_faults bursts) per kCopyOnWriteBucketNs of
// the bursts' ends: only where the tracer counted them (bursts with bytes; older traces have none).
struct CopyOnWriteBytes {
  int64_t pid = 0;
  int64_t until_ns = 0;  // the latest burst end in the bucket
  int64_t bytes = 0;     // zero where the process faulted without copying
};
inline constexpr int64_t kCopyOnWriteBucketNs = 100'000'000;

struct OpCount {
  std::string op;
  std::string category;
  int64_t count = 0;
};

// A run's CPU profile as the tracer interned it (profile_frames, profile_stacks, profile_samples):
// frames and stacks by id, and the samples per thread, stack and time bucket.
struct ProfileFrame {
  std::string kind;  // contract::frame_kind
  std::string name;
  std::string file;  // empty when NULL
  std::optional<int64_t> line;
  std::string line_kind;  // 'executing' | 'first' | empty
};
struct ProfileStackNode {
  std::optional<int64_t> parent_id;  // none at the outermost frame
  int64_t frame_id = 0;
};
struct ProfileSampleRow {
  int64_t tid = 0;
  int64_t stack_id = 0;
  int64_t bucket_ns = 0;
  int64_t samples = 0;
};
// The event an event_stacks row names: its thread, start and op name.
struct EventKey {
  int64_t tid = 0;
  int64_t ts_ns = 0;
  std::string op;
  bool operator<(const EventKey& o) const { return std::tie(tid, ts_ns, op) < std::tie(o.tid, o.ts_ns, o.op); }
};
// One event's stack (event_stacks): its frames, innermost first.
struct EventStackRecord {
  int64_t tid = 0;
  int64_t ts_ns = 0;
  std::vector<ProfileFrame> frames;
};

struct ProfileRecord {
  std::map<int64_t, ProfileFrame> frames;
  std::map<int64_t, ProfileStackNode> stacks;
  std::vector<ProfileSampleRow> samples;  // by bucket, thread, stack
  std::map<EventKey, int64_t> event_stacks;  // the stack that made each event (in the window) that has one
  bool empty() const { return samples.empty(); }
  // A stack's frame ids, the sampled code first; stops at a missing or repeated node.
  std::vector<int64_t> frames_of(int64_t stack_id) const;
};

class TraceFile {
 public:
  // Checks that path exists, is SQLite, has a readable schema version and the trace
  // tables; every problem is bad input naming the file and what to do.
  static Result<std::unique_ptr<TraceFile>> open(const std::string& path);

  const std::string& path() const { return path_; }
  const sql::Connection& db() const { return db_; }
  int schema_version() const { return schema_version_; }
  // How the file was opened when it was not the plain way (immutable, upgraded copy).
  const std::vector<std::string>& notes() const { return notes_; }

  Result<std::vector<RunRecord>> runs() const;
  // The run with that id, or the newest finished run (not one still being written) when id
  // is empty. A run with no events and no result record is bad input.
  Result<RunRecord> run(std::optional<int64_t> run_id) const;
  Result<RunContext> context(const RunRecord& run) const;
  Result<EventSet> events(int64_t run_id, const EventFilter& filter) const;
  Result<Timeline> timeline(int64_t run_id, const TimelineQuery& query) const;
  // Events per op starting in [from, until) (all of the run when unset), from the index.
  Result<std::vector<OpCount>> count_events(int64_t run_id, std::optional<int64_t> from_ns,
                                            std::optional<int64_t> until_ns) const;
  // The sweep with that id, or the last one; empty when the DB holds none (or not that id).
  Result<std::optional<SweepRecord>> sweep(std::optional<int64_t> sweep_id) const;
  Result<std::vector<SweepPointRecord>> sweep_points(int64_t sweep_id) const;
  // The end of the run's last event, for runs that never recorded their end.
  Result<std::optional<int64_t>> last_event_end(int64_t run_id) const;
  // Per process, the call totals of every probed function of one category (contract::category).
  Result<std::vector<ProcessCallTotals>> process_calls(int64_t run_id, std::string_view category) const;
  // Every window of the run's duty-cycled functions, by process, function and time.
  Result<std::vector<SampledWindowRecord>> sampled_windows(int64_t run_id) const;
  // The run's process_samples, by process and time (none in files before schema version 10).
  Result<std::vector<ProcessSampleRecord>> process_samples(int64_t run_id) const;
  Result<std::vector<CopyOnWriteBytes>> copy_on_write_bytes(int64_t run_id) const;
  // The stacks of the run's events of one op (event_stacks), by thread and time.
  Result<std::vector<EventStackRecord>> event_stacks(int64_t run_id, std::string_view op) const;
  // The largest batch's tensor bytes (the observer's batch_wait bytes); empty where none was counted.
  Result<std::optional<int64_t>> largest_batch_bytes(int64_t run_id) const;
  // Every run with ranked threads, by run id.
  Result<std::vector<RunRanks>> ranked_runs() const;
  // The run's CPU profile: samples whose bucket starts in [from, until) (all when unset), with the
  // frames and stacks they use. Empty when none was taken (or the file predates profiles).
  Result<ProfileRecord> profile(int64_t run_id, std::optional<int64_t> from_ns, std::optional<int64_t> until_ns) const;
  // Durations of one op's events starting in [from, until), for exact percentiles.
  Result<std::vector<int64_t>> durations(int64_t run_id, const std::string& op, std::optional<int64_t> from_ns,
                                         std::optional<int64_t> until_ns) const;

 private:
  TraceFile(sql::Connection db, std::string path, int version, std::vector<std::string> notes)
      : db_(std::move(db)), path_(std::move(path)), schema_version_(version), notes_(std::move(notes)) {}
  Result<bool> run_has_events(int64_t run_id) const;
  std::string run_id_list() const;
  int64_t newest_running_run() const;
  Result<std::map<std::string, int64_t>> op_codes() const;

  sql::Connection db_;
  std::string path_;
  int schema_version_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace ingero::reports
