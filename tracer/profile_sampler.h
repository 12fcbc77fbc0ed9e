// SPDX-License-Identifier: Apache-2.0
// The CPU profile's clock: one perf event on the kernel's software CPU clock
// (PERF_COUNT_SW_CPU_CLOCK, which VMs without a hardware PMU have) per online CPU, each
// running the profile program at every period. Owned: destruction detaches every link and
// closes every event.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

struct bpf_program;
struct bpf_link;

namespace ingero::tracer {

// The online CPUs, from /sys/devices/system/cpu/online ("0-3,5").
std::vector<int> online_cpus();
std::vector<int> parse_cpu_list(const std::string& text);

class CpuClockSampler {
 public:
  CpuClockSampler() = default;
  CpuClockSampler(CpuClockSampler&&) noexcept = default;
  CpuClockSampler& operator=(CpuClockSampler&&) noexcept = default;
  ~CpuClockSampler();

  // `program` at `hz` samples per second of each CPU's time (a fixed period of 1e9 / hz ns of
  // CPU clock, so that every sample stands for the same time). Nothing stays attached on error.
  static Result<CpuClockSampler> attach(bpf_program* program, unsigned hz);
  size_t cpus() const { return links_.size(); }

 private:
  struct LinkDestroyer {
    void operator()(bpf_link* link) const;
  };
  std::vector<std::unique_ptr<bpf_link, LinkDestroyer>> links_;
};

}  // namespace ingero::tracer
