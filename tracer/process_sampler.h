// SPDX-License-Identifier: Apache-2.0
// Worker health, sampled from /proc at a low rate on a thread of its own: each traced process's
// memory (smaps_rollup), its open descriptors against its soft RLIMIT_NOFILE, and the /dev/shm
// it sees (through /proc/PID/root: its own mount namespace), and where its main thread sleeps
// (a hang's evidence). Rows of process_samples.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingero::tracer {

// One process at one time; a field is empty where /proc could not tell (the process exited
// between two reads, or a file is missing on this kernel).
struct ProcessSample {
  pid_t pid = 0;
  uint64_t ts_ns = 0;  // CLOCK_MONOTONIC
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> pss_bytes;
  std::optional<uint64_t> private_dirty_bytes;
  std::optional<uint64_t> swap_bytes;
  std::optional<uint64_t> fds;
  std::optional<uint64_t> fd_limit;  // empty also when unlimited
  std::optional<uint64_t> shm_size_bytes;
  std::optional<uint64_t> shm_free_bytes;
  std::optional<std::string> wchan;  // where the main thread slept (/proc/PID/wchan); empty while it ran
};

// Reads one sample of pid under proc_root ("/proc"; tests hand in a directory of their own): rss and
// swap from status, and with_rollup, pss, private dirty (and rss, swap) from smaps_rollup, which walks
// the process's page tables (6-25 µs per MB resident here). Empty when the process is gone.
std::optional<ProcessSample> read_process_sample(const std::string& proc_root, pid_t pid, uint64_t ts_ns,
                                                 bool with_rollup = true);
// VmRSS and VmSwap of /proc/PID/status, in bytes.
void parse_status(std::string_view text, ProcessSample& sample);
// The CPU time of the whole process (utime + stime of /proc/PID/stat), in clock ticks.
std::optional<uint64_t> parse_stat_cpu_ticks(std::string_view text);

// The fields of smaps_rollup ("Rss:   123 kB" lines) this sampler keeps, in bytes.
void parse_smaps_rollup(std::string_view text, ProcessSample& sample);
// The soft "Max open files" of /proc/PID/limits; empty when unlimited or absent.
std::optional<uint64_t> parse_open_files_limit(std::string_view text);

struct ProcessSamplerOptions {
  std::chrono::nanoseconds interval{std::chrono::milliseconds(500)};
  // smaps_rollup costs the reader time in proportion to the process's memory: a process's rollups,
  // the next one's expected cost included (its RSS x its last read's cost per byte), are kept within
  // this share of the CPU time the process itself has run. The first waits too: a large process
  // forked a moment ago has run nothing yet. Rows in between have no pss or private dirty.
  double rollup_share = 0.003;
  double rollup_ns_per_rss_mb = 10'000;  // a process's expected cost before its first rollup
  std::string proc_root = "/proc";
  std::size_t max_samples = 2'000'000;  // beyond it samples are counted in a note, not kept
  // Handed each round's samples as they are taken, on the sampler's thread (the live view).
  std::function<void(const std::vector<ProcessSample>&)> on_round;
  // A hang: for hang_after, the sampled processes together ran less than hang_cpu_share of one CPU
  // (one clock tick each aside: /proc counts CPU time in ticks), and at its end every one's main thread
  // sleeps (wchan): no batch can come. on_hang is called once per such span, on the sampler's thread,
  // with the processes and the time it was seen.
  std::chrono::nanoseconds hang_after{0};  // 0: hangs are not watched
  double hang_cpu_share = 0.02;
  std::function<void(const std::vector<pid_t>& pids, uint64_t ts_ns)> on_hang;
};

class ProcessSampler {
 public:
  // pids() lists the processes to sample now (the tracer's traced set); it is called on the
  // sampler's thread.
  using PidSource = std::function<std::vector<pid_t>()>;
  static std::unique_ptr<ProcessSampler> start(PidSource pids, const ProcessSamplerOptions& options = {});

  // Stops the thread and hands back every sample, ordered by time. Call once.
  std::vector<ProcessSample> stop();
  // What was not kept (max_samples), in words; empty when nothing was lost.
  std::string note() const;
  // CPU time the sampler's thread spent (ns), for the cost of sampling.
  uint64_t cpu_ns() const;

  ~ProcessSampler();
  ProcessSampler(const ProcessSampler&) = delete;
  ProcessSampler& operator=(const ProcessSampler&) = delete;

 private:
  struct Impl;
  explicit ProcessSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingero::tracer
