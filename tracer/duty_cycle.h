// SPDX-License-Identifier: Apache-2.0
// Duty-cycled probes for hot calls, as values: when a function's traps cost a thread too
// much (is_hot), its probes in that process are attached for a window and detached for the
// rest of each period (a detached uprobe is the only one that costs nothing), and its count
// is estimated from the windows (estimate_calls). No BPF here: the tracer drives it, the
// tests replay it.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace ingero::tracer {

// The cost of probing one call, calibrated on this machine at start-up.
struct ProbeCost {
  double entry_ns = 0;  // a call probed at entry only (one trap)
  double call_ns = 0;   // a call probed at entry and return (two traps)
  // The return probe's BPF program, per hit, in the calibration (the kernel's run-time
  // statistics); 0: not timed. The gauge a job's windows compare theirs with (trap_cost_scale).
  double return_program_ns = 0;
  double per_call_ns(bool return_probe) const { return return_probe ? call_ns : entry_ns; }
};
// What a run assumes when the calibration could not probe: the H200's per-hit cost
// (results/gpu-h200-tracer-on-real-jobs.md), so hot calls are still found.
inline constexpr ProbeCost kFallbackProbeCost{0.84e3, 1.15e3};

struct SamplingPolicy {
  bool enabled = true;                  // false: every call trapped (--cuda-detail exact, full)
  double hot_share = 0.01;              // hot: traps would cost a thread more than this share of its time
  uint64_t window_ns = 5'000'000;       // probes attached this long ...
  uint64_t period_ns = 50'000'000;      // ... once every period, at a random place within it
  uint64_t decide_every_ns = 100'000'000;  // how often the rates are looked at
  double duty() const { return period_ns ? static_cast<double>(window_ns) / static_cast<double>(period_ns) : 1.0; }
};

// The share of a thread's time its traps on one function take at calls_per_s.
double trap_share(double calls_per_s, bool return_probe, const ProbeCost& cost);
bool is_hot(double calls_per_s, bool return_probe, const ProbeCost& cost, const SamplingPolicy& policy);

// The calling threads' own clock around one window: their on-CPU time (from the scheduler
// programs) in the detached gap before it and in it, and in it their calls and the time their
// probe hits took (calls of every probed function x the calibrated cost). Calls are made only
// while a thread runs, so a rate per on-CPU second does not move when the caller is preempted
// or blocked, which a rate per wall second does: on a busy machine the windows, whose end waits
// for the tracer's thread to get a CPU, stretch over the busy moments and read low.
struct CallerTime {
  uint64_t gap_before_ns = 0;
  uint64_t window_ns = 0;
  uint64_t calls = 0;  // by the threads timed (a thread first seen calling in the window is not)
  double trapped_ns = 0;
  // Calls the window's probes counted outside the span its callers were timed over (as the probes
  // went in before the first reading, or out after the last): the gaps' time holds them, and
  // they are counted already.
  uint64_t counted_in_gaps = 0;
};

// A BPF program's runs and their nanoseconds, on every CPU, as the kernel's run-time statistics
// (BPF_STATS_RUN_TIME) count them; no runs where they are off.
struct ProgramRunTime {
  uint64_t runs = 0;
  uint64_t ns = 0;
};
ProgramRunTime operator-(const ProgramRunTime& later, const ProgramRunTime& earlier);

// One attached window: from the end of the attach to the start of the detach, the calls it
// counted (read while detached, so exact), and the share of the calling threads' time their
// probe hits took meanwhile (calls of every probed function x the calibrated cost, weighted by
// the function's calls per thread). A thread trapped that much ran its own code only the rest
// of the window, so its unprobed rate is the window's rate / (1 - that share). `callers`: the
// same on the callers' on-CPU clock, where it could be read.
struct SampleWindow {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t calls = 0;
  double trapped_share = 0;
  std::optional<CallerTime> callers;
  ProgramRunTime return_program;  // the return probe's program while the window's probes were in
};
// Past this share a window says little about the unprobed rate: the share is capped here.
inline constexpr double kMaxTrappedShare = 0.9;
// Fewer windows with a rate than this give the detached time no rate: the count is a lower bound.
inline constexpr long kMinRatedWindows = 2;

// One function in one process (or every process, system-wide) since it became hot.
struct SampledCalls {
  uint64_t since_ns = 0;       // when sampling began
  uint64_t until_ns = 0;       // where the estimate ends: the trace's end, or the process's exit
  uint64_t calls_before = 0;   // counted exactly before sampling began
  std::vector<SampleWindow> windows;
  // The callers' on-CPU time after the last window, up to until_ns, where it could be read.
  std::optional<uint64_t> callers_tail_ns;
  // ProbeCost::return_program_ns where the function has a return probe and it was timed; else 0.
  double calibrated_return_program_ns = 0;

  uint64_t probed_calls() const;   // calls_before + every window's calls: what was trapped
  uint64_t attached_ns() const;
  double duty_share() const;       // attached / (until - since)
};

// What a trap cost the job against the calibration: the return probe's program time per hit in the
// function's windows (those where its own returns were nearly all the program's runs) over its
// time per hit in the calibration. That program runs inside the trap,
// on the calling thread's CPU, amid the job's own use of the caches, so it slows with the trap: on
// the H200 the two ratios moved together over 14 runs (results/gpu-h200-launch-sampling.md, call
// 17), where the calibration alone, run earlier and on another CPU, missed by -10 to +2 %. Empty
// (the calibrated cost stands) when either was not timed or the windows' return hits are too few.
std::optional<double> trap_cost_scale(const SampledCalls& sampled);
inline constexpr uint64_t kMinTimedReturnHits = 1000;
// The return program is shared by every probed function and process: a window whose program runs
// exceed its own calls by more than this share (other functions' returns, some of them written
// out, which costs more) is left out of the gauge.
inline constexpr double kMaxForeignReturnShare = 0.1;
inline constexpr double kMinTrapCostScale = 0.5;
inline constexpr double kMaxTrapCostScale = 3.0;

// The count over the whole trace, with a 95 % interval: the calls before, the windows', and
// each detached gap at the unprobed rate of the windows on either side of it, pooled (their
// calls over their untrapped time; the gap after the last window at that window's rate). Rates and gaps are on the callers'
// on-CPU clock where every window and gap has it, else on the wall clock (on_cpu_clock says which). The interval takes the rates'
// variation from one window to the next (successive differences, as for a systematic sample),
// at least their counting noise, and the cost of a hit from half to twice the calibrated one
// (what a hit costs inside a real loop was measured up to twice the calibration's); with fewer
// than three windows it is as wide as the estimate. "Calibrated" is scaled by trap_cost_scale
// first, where that was measured. Never an interval of no width: where the detached time cannot be
// given a rate (fewer than kMinRatedWindows windows in which the callers ran, or windows trapped
// past kMaxTrappedShare at twice the cost) only a lower bound is known, and calls is that bound.
struct CallEstimate {
  double calls = 0;
  double low = 0;
  double high = 0;  // infinite: a lower bound only (calls == low)
  bool on_cpu_clock = false;
  std::optional<double> trap_cost_scale;  // what the calibrated cost was scaled by (none: it stood)
};
CallEstimate estimate_calls(const SampledCalls& sampled);

// Where each window of a duty cycle goes: one per period, at a uniformly random offset
// within it, so that a job whose steps repeat at the period is not seen at one phase only.
class WindowSchedule {
 public:
  WindowSchedule(const SamplingPolicy& policy, uint64_t start_ns, uint64_t seed);
  // The start of the next window, at or after `now`; advances to the following period.
  uint64_t next_start(uint64_t now_ns);
  uint64_t window_ns() const { return window_ns_; }

 private:
  uint64_t window_ns_;
  uint64_t period_ns_;
  uint64_t period_start_;
  std::mt19937_64 random_;
};

}  // namespace ingero::tracer
