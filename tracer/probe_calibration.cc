// SPDX-License-Identifier: Apache-2.0
#include "tracer/probe_calibration.h"

#include <algorithm>
#include <ctime>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/proc_files.h"

namespace ingero::tracer {

#if defined(__x86_64__)
asm(".text\n"
    ".globl ingero_calibration_target\n"
    ".type ingero_calibration_target, @function\n"
    "ingero_calibration_target:\n"
    "  push %rbp\n"
    "  mov %rsp, %rbp\n"
    "  addq $1, (%rdi)\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size ingero_calibration_target, .-ingero_calibration_target\n");
#else
__attribute__((noinline)) void calibration_target(uint64_t* sink) {
  *sink += 1;
  asm volatile("" ::: "memory");
}
#endif

namespace {

// Between calls the loop reads 32 KiB (a cache line at a time), as a launch's own user code
// touches its data: a trap's cost includes refilling what the kernel's entry evicted, which a
// loop of bare calls would not see.
constexpr size_t kWorkBytes = 32 << 10;

double loop_ns(int calls) {
  static std::vector<uint64_t> work(kWorkBytes / sizeof(uint64_t), 1);
  uint64_t sink = 0;
  // On this thread's CPU clock: a trap and its program run in the trapping thread's context and are
  // charged to it, while time preempted is not a probe's cost (on a busy machine wall time doubled it).
  const double start = static_cast<double>(thread_cpu_ns());
  for (int i = 0; i < calls; ++i) {
    for (size_t j = 0; j < work.size(); j += 8) sink += work[j];
    calibration_target(&sink);
  }
  const double ns = static_cast<double>(thread_cpu_ns()) - start;
  asm volatile("" ::"r"(sink));
  return ns;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The probed loop's time per call above the unprobed loop of the same round.
Result<double> probed_loop_ns(CalibrationProbes& probes, bool return_probe, int calls, double unprobed_ns) {
  if (Status s = probes.attach(return_probe); !s) return s.error();
  const double probed = loop_ns(calls);
  probes.detach();
  return std::max(0.0, (probed - unprobed_ns) / calls);
}

}  // namespace

Result<ProbeCost> calibrate_probe_cost(CalibrationProbes& probes, const CalibrationPlan& plan) {
  if (plan.rounds < 1 || plan.calls < 1) return Error::bad_input("a probe calibration needs rounds and calls");
  (void)loop_ns(plan.calls);  // warm the loop
  std::vector<double> entry, call;
  for (int round = 0; round < plan.rounds; ++round) {
    const double unprobed = loop_ns(plan.calls);
    auto e = probed_loop_ns(probes, false, plan.calls, unprobed);
    if (!e) return e.error();
    auto c = probed_loop_ns(probes, true, plan.calls, unprobed);
    if (!c) return c.error();
    entry.push_back(*e);
    call.push_back(*c);
  }
  return ProbeCost{median(entry), median(call)};
}

Result<CodeLocation> calibration_target_location() {
  const auto address = reinterpret_cast<uint64_t>(&calibration_target);
  auto maps = proc::read_file("/proc/self/maps");
  if (!maps) return Error::failure("cannot read /proc/self/maps");
  size_t pos = 0;
  while (pos < maps->size()) {
    size_t end = maps->find('\n', pos);
    if (end == std::string::npos) end = maps->size();
    const std::string line = maps->substr(pos, end - pos);
    pos = end + 1;
    uint64_t start = 0, stop = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &stop, perms, &offset,
               &path_at) < 4)
      continue;
    if (address < start || address >= stop) continue;
    const std::string path = path_at > 0 ? line.substr(static_cast<size_t>(path_at)) : "";
    if (path.empty() || path.front() != '/' || path.find(" (deleted)") != std::string::npos)
      return Error::failure(fmt::format("this program's code is not in a file that can be probed ({})",
                                        path.empty() ? "anonymous memory" : path));
    return CodeLocation{path, address - start + offset};
  }
  return Error::failure("the calibration function is in no mapping of /proc/self/maps");
}

}  // namespace ingero::tracer
