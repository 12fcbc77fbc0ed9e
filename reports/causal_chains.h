// Causal chains: for each slow interval (a CUDA call in its latency tail, or the
// main loop waiting for a batch), what the threads on the path that fed it were
// doing at every instant of it, summed per cause as clipped interval overlap.
//
// The waiting thread's own state splits the interval: waiting for a CPU, on CPU,
// or blocked. While the main loop is blocked waiting for a batch, that time is
// shared among the producers (workers, pin thread) active at each instant, by
// what they were doing: on CPU, waiting for a CPU, allocating pinned memory,
// starting up. Instants when no producer was active stay unattributed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/run_metrics.h"
#include "reports/trace_data.h"

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

enum class CauseKind { cpu_wait, blocked, on_cpu, pinned_alloc, startup, unattributed };

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
  int64_t page_faults = 0;         // on those threads, inside the slow intervals
  int64_t forks = 0;               // process start-ups since the previous batch
};

struct CausalChain {
  int rank = 0;
  std::string severity;       // HIGH | MEDIUM | LOW
  std::string victim;         // the slow op: a CUDA function or batch_wait
  std::string victim_role;    // role of the thread it ran on
  Cause cause;
  std::string cause_label;
  int64_t calls_explained = 0;
  int64_t victim_calls = 0;   // slow intervals of that op
  int64_t lost_ns = 0;        // time attributed to this cause
  int64_t victim_ns = 0;      // total time of the slow intervals of that op
  double share_of_victim = 0;
  double share_of_window = 0;
  ChainEvidence evidence;
  std::vector<std::string> timeline;  // [SYSTEM] / [HOST] / [CUDA] or [LOADER] / [CAUSE]
  std::string summary;
  std::string root_cause;
  std::string recommendation;
};

struct CauseShare {
  std::string code;
  std::string label;
  int64_t ns = 0;
  double share = 0;
};

// Each op with slow intervals: how many, how long, and where the time went.
struct VictimSummary {
  std::string op;
  std::string selection;  // which intervals were taken, in words
  int64_t count = 0;
  int64_t total_ns = 0;
  std::vector<CauseShare> causes;  // largest first, unattributed included
};

struct ChainAnalysis {
  ChainThresholds thresholds;
  std::vector<VictimSummary> victims;
  std::vector<CausalChain> chains;  // ranked by lost time
};

enum class WaitSelection {
  slow_or_input_bound,  // every wait when the run is input-bound, else only the tail
  every_wait,           // every wait (compare: the whole waiting time is decomposed)
};

struct ChainInputs {
  const RunContext& context;
  const EventSet& events;
  const TimeWindow& window;
  const RunMetrics& metrics;
  const std::vector<CudaLatencyRow>& cuda;
  WaitSelection waits = WaitSelection::slow_or_input_bound;
  bool include_cuda = true;
};

ChainAnalysis analyze_causal_chains(const ChainInputs& inputs);

}  // namespace ingero::reports
