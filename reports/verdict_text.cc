// SPDX-License-Identifier: Apache-2.0
#include "reports/verdict_text.h"

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/format.h"

namespace ingero::reports {

std::string wait_basis_text(const RunMetrics& m) {
  switch (m.batch_source) {
    case BatchSource::none: return "no batch timings";
    case BatchSource::workload_record: return "the workload's own timings (result record)";
    case BatchSource::workload_events: return "the workload's batch_wait events";
    case BatchSource::observer: return "the observer: every DataLoader next() the job made, timed in the job";
    case BatchSource::wakeups: {
      if (!m.wakeups) return "estimated from wake-ups";
      const WakeupWaits& w = *m.wakeups;
      std::string text = fmt::format(
          "estimated from wake-ups: the main thread blocked until a loader worker ({}) or the pin-memory thread ({}) "
          "woke it",
          format_duration_ns(static_cast<double>(w.by_workers_ns)), format_duration_ns(static_cast<double>(w.by_pin_ns)));
      if (w.pin_short_ns > 0)
        text += fmt::format("; {} if the pin thread's waits under {} were GIL hand-offs, not batches",
                            format_percent(w.share_without_short_pin()),
                            format_duration_ns(static_cast<double>(kGilSwitchIntervalNs)));
      return text;
    }
  }
  return "";
}

std::vector<std::string> evidence_lines(const RunMetrics& m, const std::string& gpu_sampler_setting) {
  std::vector<std::string> lines;
  if (m.gpu_util) {
    std::string line = fmt::format("GPU                busy {} of the window (NVML: share of time a kernel ran, {} GPU{})",
                                   format_percent(*m.gpu_util), m.gpus_sampled, m.gpus_sampled == 1 ? "" : "s");
    if (m.sm_active) line += fmt::format("; SM activity {} (GPM)", format_percent(*m.sm_active));
    lines.push_back(line);
  } else if (!gpu_sampler_setting.empty() && gpu_sampler_setting != contract::kGpuSamplerNvml) {
    lines.push_back("GPU                " + gpu_sampler_setting);
  }
  if (m.main_host_share)
    lines.push_back(fmt::format("main thread        on CPU outside CUDA calls {} of its time",
                                format_percent(*m.main_host_share)));
  return lines;
}

}  // namespace ingero::reports
