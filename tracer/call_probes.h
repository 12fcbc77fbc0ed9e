// SPDX-License-Identifier: Apache-2.0
// The uprobes on the CUDA and NCCL libraries' functions, and the duty cycle of the hot ones.
//
// Every planned function of a library is probed once for every process (exact counts, as
// the in-kernel counters keep them). A thread that calls a function so often that its traps
// would cost it more than the policy's share (is_hot, from the counters' rates and the
// calibrated cost of a hit) makes that function per-process: every traced process mapping
// the library gets its own exact probes, and the hot process's are attached for a window
// and detached for the rest of each period; its count is estimated from the windows
// (duty_cycle.h). System-wide, with no process filter, the every-process probes themselves
// are duty-cycled. The switch is one way: a function sampled in a process stays sampled.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "tracer/caller_clock.h"
#include "tracer/cuda_probes.h"
#include "tracer/duty_cycle.h"
#include "tracer/trace_totals.h"
#include "tracer/uprobe_link.h"

struct bpf_program;

namespace ingero::tracer {

// A library given by hand (--cudart), checked before any run: an ELF shared object that defines
// at least one CUDA runtime, driver or NCCL function probed here; else bad input naming `flag`.
Status check_call_library(const std::string& flag, const std::string& path);

// What the probes need from the loaded BPF object.
struct CallProbePrograms {
  bpf_program* entry = nullptr;
  bpf_program* exit = nullptr;
  int scoped_ops_fd = -1;   // scoped_ops (cuda.bpf.c)
  int call_stats_fd = -1;   // call_stats: the exact counters the rates and windows are read from
  bool multi = false;       // the programs were loaded as uprobe_multi (uprobe_link.h)
  OnCpuReader oncpu;        // the callers' on-CPU time (none: windows are timed on the wall clock)
  // The return program's fd while this run holds the kernel's BPF run-time statistics on: the
  // windows time it (trap_cost_scale). -1 (--no-program-time): others' counting is not read.
  int timed_return_program_fd = -1;
  // call_edges (cuda.bpf.c) in the skeleton's mmapped .bss, IB_OP_COUNT of them: every attach and
  // close of a function's probes is counted there as it begins and as it ends, so that the kernel
  // times no call across one. None: calls are timed across edges (tests without the BPF object).
  uint64_t* call_edges = nullptr;
};

class CallProbes {
 public:
  CallProbes(CallProbePrograms programs, CudaDetail detail, SamplingPolicy policy, ProbeCost cost,
             bool every_process);
  ~CallProbes();
  CallProbes(const CallProbes&) = delete;
  CallProbes& operator=(const CallProbes&) = delete;

  // Probes the library's planned functions for every process. `requested`: the user named it
  // (--cudart), so one that cannot be read or probed at all is bad input.
  Result<ProbedLibrary> probe_library(const std::string& path, bool requested);
  // The traced processes now and the probed libraries each maps: per-process functions get
  // their probes in new ones; processes gone lose theirs.
  void track_processes(const std::map<pid_t, std::vector<std::string>>& mapped);
  // Starts finding and duty-cycling hot functions (nothing to do when the policy is off).
  void start();
  // Stops sampling and detaches every probe. What was sampled, up to end_ns (or where a process
  // ended); the caller estimates it once its span is final.
  std::vector<SampledFunction> stop(uint64_t end_ns);
  // The functions duty-cycled so far, each estimated from its finished windows up to now_ns (a live
  // view: stop() hands back the final ones).
  std::vector<SampledFunction> sampled_now(uint64_t now_ns) const;

 private:
  struct Target {  // one planned function in one library file
    std::string path;
    std::string match_path;  // canonical, as /proc/PID/maps names it
    uint64_t offset = 0;
    uint64_t cookie = 0;
    bool return_probe = false;
  };
  using Links = std::vector<UprobeLink>;
  struct Function {
    std::vector<Target> targets;
    Links every_process;               // while not per-process
    bool per_process = false;
    std::map<pid_t, Links> processes;  // per-process probes (a sampled one's: its window's)
  };
  struct ThreadCalls {
    uint32_t pid = 0;
    uint64_t calls = 0;
  };
  using Counters = std::map<std::pair<uint32_t, uint32_t>, ThreadCalls>;  // (tid, op)
  // The callers' on-CPU time and the call counters read at an edge of a window: at an open the
  // time, then the counters; at a close the counters on both sides of the time. The return probe's
  // program time is read at both edges too, as the window's gauge of what its traps cost. The calls a
  // reader sees between its lookups (held off its CPU, say) fall to the gap at an open and to the
  // window at a close, so that neither the window's rate nor the gaps' share leans either way.
  struct EdgeReading {
    Counters before;                     // a close's, before the time
    std::map<uint32_t, uint64_t> oncpu;  // tid -> ns
    Counters counters;                   // after the time
    ProgramRunTime return_program;       // the return probe's program, at the time
  };
  struct Sampling {  // one function duty-cycled in one process (pid 0: every process)
    pid_t pid = 0;
    uint16_t op = 0;
    SampledCalls calls;
    WindowSchedule schedule;
    bool attached = false;
    bool ended = false;
    uint64_t next_ns = 0;     // the next attach (detached) or detach (attached)
    uint64_t window_start = 0;
    Counters at_start;  // the counters as the window began
    std::shared_ptr<std::atomic<uint64_t>> closing;  // the last window's close began (its end)
    CallerMarks callers;               // the callers' on-CPU time at the last edge
    uint64_t gap_oncpu_ns = 0;         // theirs in the gap before the open (or last) window
    Counters at_open;                  // the counters as the open window's callers were timed
    ProgramRunTime program_at_open;    // the return probe's program then
    std::shared_ptr<EdgeReading> at_close;  // read as the close began
  };


  Status attach(const Target& target, pid_t pid, bool scoped, Links& into) const;
  // Hands `links` of op to the closer, the edge counted as it begins and once they are all gone.
  std::shared_ptr<std::atomic<uint64_t>> close(uint16_t op, Links links, std::function<void()> at_begin = nullptr);

  Counters read_counters() const;
  static Counters read_counters(int call_stats_fd);
  double cost_ns(uint32_t op) const;
  bool return_probed(uint16_t op) const;
  const Target* first_target(uint16_t op) const;
  Links attach_in(const Function& function, pid_t pid, bool scoped, Status& status) const;
  void count_window(Sampling& s);
  std::vector<uint32_t> callers_of(const Counters& counters, pid_t pid, uint16_t op) const;
  EdgeReading read_open_edge(const std::vector<uint32_t>& tids) const;
  std::function<void()> read_close_edge_into(const std::vector<uint32_t>& tids, std::shared_ptr<EdgeReading>& into) const;
  void end_sampling(Sampling& s, uint64_t until_ns);
  static uint64_t calls_of(const Counters& counters, pid_t pid, uint16_t op);
  bool sampling(pid_t pid, uint16_t op) const;
  void read_libraries(pid_t pid);
  void make_per_process(uint16_t op, Function& function);
  void begin_sampling(pid_t pid, uint16_t op, uint64_t now);
  void decide(uint64_t now);
  void step(Sampling& s, uint64_t now);
  void end_window(Sampling& s);
  void run();

  const CallProbePrograms programs_;
  const CudaDetail detail_;
  const SamplingPolicy policy_;
  const ProbeCost cost_;
  const bool every_process_;
  LinkCloser closer_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::map<uint16_t, Function> functions_;
  std::map<pid_t, std::set<std::string>> process_libraries_;
  std::vector<Sampling> sampled_;
  Counters last_counts_;  // at the last decision
  uint64_t last_decision_ns_ = 0;
};

}  // namespace ingero::tracer
