// SPDX-License-Identifier: Apache-2.0
// One uprobe (or uretprobe) link on a function of a library file, owned.
//
// Where the kernel has uprobe_multi links (Linux 6.6+), every CUDA probe is one: its close
// removes the breakpoint at once and only then waits for the RCU grace periods (tens of ms),
// so a duty cycle can detach a hot function's probes without the job being trapped while the
// close waits. A perf-event uprobe link keeps trapping until late in its close (measured on
// the CPU machine: about 40 % of a 100 ms close), so older kernels keep their probes attached
// for the whole trace, exact, and hot calls are not duty-cycled there.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

struct bpf_program;
struct bpf_link;

namespace ingero::tracer {

// Whether this kernel creates uprobe_multi links (probed once, with a program of its own).
bool kernel_has_uprobe_multi();
// Loads `program` as a uprobe_multi program; call before the BPF object is loaded.
void use_uprobe_multi(bpf_program* program);

struct UprobeSpec {
  std::string path;
  uint64_t offset = 0;  // in the file
  uint64_t cookie = 0;
  bool retprobe = false;
  pid_t pid = -1;       // -1: every process; else that process only
};

class UprobeLink {
 public:
  UprobeLink() = default;
  UprobeLink(UprobeLink&&) noexcept = default;
  UprobeLink& operator=(UprobeLink&&) noexcept = default;
  ~UprobeLink();
  explicit operator bool() const { return fd_ || link_; }

  // Attaches `program` as `spec` says: a uprobe_multi link where the program was loaded as one
  // (use_uprobe_multi), else a perf-event uprobe through libbpf.
  static Result<UprobeLink> attach(bpf_program* program, const UprobeSpec& spec, bool multi);

 private:
  struct LinkDestroyer {
    void operator()(bpf_link* link) const;
  };
  UniqueFd fd_;                                     // uprobe_multi
  std::unique_ptr<bpf_link, LinkDestroyer> link_;  // perf event
};

// A call's probes on one function, as spec says (its retprobe field is ignored): with a return
// probe, that first, so that every counted entry has its return timed; then the entry probe.
Result<std::vector<UprobeLink>> attach_call_probes(bpf_program* entry, bpf_program* exit, UprobeSpec spec,
                                                   bool return_probe, bool multi);

// Closes links off the calling thread, several at once (their grace periods then overlap), so
// that a duty cycle's schedule does not wait for them. The destructor waits for every close.
class LinkCloser {
 public:
  ~LinkCloser();
  // The returned time (CLOCK_MONOTONIC ns) is set when the close begins, before any of its links
  // goes: calls up to it are counted; 0 until then. `at_begin` runs just before it is set, once,
  // on a closing thread, with every link still in; `at_end` once every link of the close is gone.
  std::shared_ptr<std::atomic<uint64_t>> close(std::vector<UprobeLink> links,
                                               std::function<void()> at_begin = nullptr,
                                               std::function<void()> at_end = nullptr);
  void wait();  // every close handed over so far has returned

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

}  // namespace ingero::tracer
