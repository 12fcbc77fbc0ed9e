// SPDX-License-Identifier: Apache-2.0
#include "tracer/profile_sampler.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "common/proc_files.h"
#include "common/unique_fd.h"

namespace ingero::tracer {

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::istringstream ranges(text);
  std::string range;
  while (std::getline(ranges, range, ',')) {
    int first = 0, last = 0;
    const int n = sscanf(range.c_str(), "%d-%d", &first, &last);
    if (n < 1) continue;
    if (n == 1) last = first;
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<int> online_cpus() {
  return parse_cpu_list(proc::read_first_line("/sys/devices/system/cpu/online").value_or("0"));
}

void CpuClockSampler::LinkDestroyer::operator()(bpf_link* link) const { bpf_link__destroy(link); }

CpuClockSampler::~CpuClockSampler() = default;

Result<CpuClockSampler> CpuClockSampler::attach(bpf_program* program, unsigned hz) {
  if (hz == 0) return Error::bad_input("a profile rate of 0 Hz", "pass --profile-hz 0 to switch profiles off");
  CpuClockSampler sampler;
  for (int cpu : online_cpus()) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 1'000'000'000ull / hz;  // the CPU clock counts nanoseconds
    UniqueFd event(static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC)));
    if (!event) {
      if (errno == ENODEV) continue;  // went offline since the list was read
      return Error::failure(fmt::format("opening the CPU clock event on CPU {}: {}", cpu, strerror(errno)),
                            "pass --profile-hz 0 to trace without CPU profiles");
    }
    bpf_link* link = bpf_program__attach_perf_event(program, event.get());
    if (!link)
      return Error::failure(fmt::format("attaching the profile program on CPU {}: {}", cpu, strerror(errno)),
                            "pass --profile-hz 0 to trace without CPU profiles");
    event.release();  // the link closes it
    sampler.links_.emplace_back(link);
  }
  if (sampler.links_.empty()) return Error::failure("no online CPU to sample", "pass --profile-hz 0");
  return sampler;
}

}  // namespace ingero::tracer
