// SPDX-License-Identifier: Apache-2.0
// Causal chains: for each slow interval (a CUDA call in its latency tail, or the
// main loop waiting for a batch), what the threads on the path that fed it were
// doing at every instant of it, summed per cause as clipped interval overlap.
//
// The waiting thread's own state splits the interval: waiting for a CPU, on CPU,
// waiting for I/O, or blocked otherwise. While the main loop is blocked waiting for
// a batch, that time is shared among the producers (workers, pin thread) active at
// each instant, by what they were doing: on CPU, waiting for a CPU, allocating
// pinned memory, waiting for I/O (reading the dataset from storage), starting up (from fork until the worker reported ready: measured, worker_start
// events). Instants when no producer was active stay unattributed.
//
// The time a cause overlapped is an upper bound on what removing the cause saves,
// not the saving: only a run without it measures that (sweep, recommend).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/profile_analysis.h"
#include "reports/analysis/run_metrics.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// Stated thresholds; rendered with every report.
struct ChainThresholds {
  double slow_vs_p50 = 10.0;           // a slow call lasts ≥ max(p99, 10 × p50, 1 ms)
  int64_t slow_min_ns = 1'000'000;
  double explains_share = 0.10;        // a cause explains a call when it covers ≥ 10 % of it
  double min_chain_share = 0.01;       // causes under 1 % of the slow intervals' time are dropped
  double high_share_of_window = 0.10;  // HIGH: lost time ≥ 10 % of the analysed wall time
  double medium_share_of_window = 0.02;  // MEDIUM: ≥ 2 %; LOW below
};

enum class CauseKind { cpu_wait, blocked, on_cpu, pinned_alloc, startup, io_wait, unattributed };

// How much of the analysed time a chain overlapped (ChainThresholds); ordered, so that a floor
// compares as a number.
enum class Severity { low, medium, high };
const char* severity_name(Severity severity);  // "LOW", "MEDIUM", "HIGH"
std::optional<Severity> parse_severity(const std::string& name);

struct Cause {
  CauseKind kind = CauseKind::unattributed;
  std::string role;       // the threads it happened on: main, worker, pin, other
  bool producer = false;  // on a producer thread rather than the waiting thread itself
  std::string code() const;  // e.g. "worker.on_cpu", "main.cpu_wait"
  bool operator<(const Cause& other) const;
};

struct ChainEvidence {
  int threads = 0;                 // threads the cause was seen on
  int64_t context_switches = 0;    // recorded off-CPU intervals overlapping the slow intervals
  int64_t offcpu_overlap_ns = 0;
  int64_t page_faults = 0;         // on those threads, inside the slow intervals (from fault bursts)
  int64_t forks = 0;               // process start-ups since the previous batch
  int64_t io_wait_ns = 0;          // on those threads, inside the slow intervals: slept in I/O wait
  int64_t read_bytes = 0;          //   and block I/O completed for them
};

// A configuration change a chain suggests: one knob of the workload configuration.
struct Change {
  std::string knob;   // mode | num_workers | prefetch_factor | pin_memory | persistent_workers
  std::string value;  // "loader-batched", "4", "on", ...
};

// A change no DataLoader argument makes, so the job's code must: a sampler that does not build a
// whole epoch's order up front (RandomSampler permutes every index when the epoch starts).
inline constexpr const char* kSamplerKnob = "sampler";
inline constexpr const char* kCheaperSampler = "cheaper";

// Whether the trace DB holds a run that differs from the analysed one by that change alone.
struct ChangeCheck {
  Change change;
  std::optional<int64_t> run_id;        // the run that measured it
  std::string label;
  std::optional<double> this_median_s;  // the analysed run's epoch median
  std::optional<double> other_median_s; // the changed configuration's
  std::string command;                  // when unmeasured: the command that measures both
};

// Where the user's code made a chain's slow intervals, from the stacks the intervals carry
// (event_stacks): the innermost frame of the user's own code (a Python frame outside the
// interpreter's library and installed packages; else the innermost Python frame; else the innermost
// native frame), the one most of them share.
struct CallSite {
  std::string kind;  // contract::frame_kind
  std::string function;
  std::string file;  // empty when unknown
  std::optional<int64_t> line;
  int64_t intervals = 0;   // slow intervals made there
  int64_t with_stack = 0;  // slow intervals whose stack was stored
};

// Numbers only: the words for a chain (its label, timeline, root cause and advice) come from
// reports/text/chain_text.h, which renderers call.
struct CausalChain {
  int rank = 0;
  Severity severity = Severity::low;
  std::string victim;         // the slow op: a CUDA function or batch_wait
  std::string victim_role;    // role of the thread it ran on
  Cause cause;
  int64_t calls_explained = 0;
  int64_t victim_calls = 0;   // slow intervals of that op
  int64_t lost_ns = 0;        // time the cause overlapped the slow intervals (an upper bound on the saving)
  int64_t victim_ns = 0;      // total time of the slow intervals of that op
  double share_of_victim = 0;
  double share_of_window = 0;
  ChainEvidence evidence;
  // A GPU-bound job's loader chain: the waits it explains do not limit the step, so it names no
  // loader change (and is LOW whatever its share).
  bool loader_change_withheld = false;
  // An on-CPU cause with a CPU profile: the top functions of its threads' role by self samples
  // over the analysed window (profile_frames_for), and the role's samples they are shares of.
  std::vector<FrameShare> frames;
  int64_t profile_samples = 0;
  // The main thread's split when the chain is the main thread's (host-bound or building batches).
  std::optional<CpuSplit> split;
  std::optional<CallSite> site;     // where the slow intervals were made (add_call_sites)
  std::vector<Change> changes;      // the configuration changes the cause calls for
  std::vector<ChangeCheck> checks;  // filled by explain from the other runs in the DB
};

struct CauseShare {
  Cause cause;
  int64_t ns = 0;
  double share = 0;
};

// Which of an op's intervals were taken as slow.
enum class VictimSelection {
  calls_in_tail,      // a CUDA call from its threshold on (slow_threshold)
  waits_in_tail,      // batch waits from their threshold on
  every_wait,         // every batch wait: compare decomposes the whole waiting time
  every_wait_input_bound,  // every batch wait, because the run is input-bound (`verdict`)
};

// Each op with slow intervals: how many, how long, and where the time went.
struct VictimSummary {
  std::string op;
  VictimSelection selection = VictimSelection::calls_in_tail;
  LatencyStats stats;        // the op's latency, which the tail's threshold comes from
  int64_t threshold_ns = 0;  // the shortest interval taken
  InputBound verdict = InputBound::unknown;  // every_wait_input_bound: the run's
  int64_t count = 0;
  int64_t total_ns = 0;
  std::vector<CauseShare> causes;  // largest first, unattributed included
};

struct ChainAnalysis {
  ChainThresholds thresholds;
  std::map<std::string, int> producers;  // producer threads on the path, per role (worker, pin)
  std::vector<VictimSummary> victims;
  std::vector<CausalChain> chains;  // ranked by lost time
};

enum class WaitSelection {
  slow_or_input_bound,  // every wait when the run is input-bound, else only the tail
  every_wait,           // every wait (compare: the whole waiting time is decomposed)
};

// A call is slow from max(p99, slow_vs_p50 × p50, slow_min_ns) on.
int64_t slow_threshold(const LatencyStats& stats, const ChainThresholds& limits);

// The ops a chain analysis reads for the threads it looks at.
const std::vector<std::string>& activity_ops();

// victims: the slow calls of each op in `calls` (at least their threshold), every batch
// wait, and the forks; activity: the activity_ops() of the threads involved (the victims'
// and the producers'), overlapping the victims.
struct ChainInputs {
  const RunContext& context;
  const EventSet& victims;
  const EventSet& activity;
  const TimeWindow& window;
  const RunMetrics& metrics;
  const std::vector<CallLatencyRow>& calls;
  WaitSelection waits = WaitSelection::slow_or_input_bound;
  bool include_calls = true;
};

ChainAnalysis analyze_causal_chains(const ChainInputs& inputs);

// HIGH, MEDIUM or LOW by the share of the analysed wall time a cause overlapped.
Severity severity_of(double share_of_window, const ChainThresholds& limits);

// A host-bound job's chain (nothing waited, the main thread was busy on the CPU outside CUDA
// calls): its victim is the main loop itself, its cause the main thread on CPU, its time the
// main threads' CPU time outside CUDA calls. Empty unless the verdict is host-bound, or compute-bound
// on the CPU (cpu_compute_bound), whose chain names no change.
inline constexpr const char* kMainBusyVictim = "main_on_cpu";
// The victim of a chain on what every epoch's first batch waits for (EpochStartup).
inline constexpr const char* kEpochStartVictim = "epoch_start";
// The run's producer threads by role (workers, pin threads), whether or not any fed a wait: what
// a host-bound job's chain, its changes and its words say ran beside the main thread.
std::map<std::string, int> run_producers(const RunContext& context);
std::optional<CausalChain> host_bound_chain(const RunContext& context, const RunMetrics& metrics,
                                            const TimeWindow& window, const std::vector<CallLatencyRow>& calls);
// Every epoch's start-up (its first batch's wait) when it is a share of the whole epoch that matters
// (EpochStartup::matters): its cause the workers starting or the iterator's set-up, its time the
// first batches' waits, its share the estimated share of an epoch; its change persistent_workers
// (workers started each epoch) or a cheaper sampler (the set-up that is left).
std::optional<CausalChain> epoch_startup_chain(const RunMetrics& metrics);

}  // namespace ingero::reports
