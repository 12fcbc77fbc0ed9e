// SPDX-License-Identifier: Apache-2.0
#include "reports/text/verdict_text.h"

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/format.h"

namespace ingero::reports {

std::string verdict_words(const RunMetrics& m) {
  if (m.run_error.empty() || m.run_error == contract::status::kInterrupted) return input_bound_name(m.verdict);
  if (m.verdict == InputBound::run_failed) return fmt::format("none (the run failed: {})", m.run_error);
  if (m.verdict == InputBound::nothing_measured)
    return fmt::format("none (the run ended before it measured anything: {})", m.run_error);
  return input_bound_name(m.verdict);
}

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
      if (w.receive_cpu_ns)
        text += fmt::format(
            ", plus {} estimated around the batches' arrival ({} of it runnable but waiting for a CPU; receiving a "
            "batch takes about {} of CPU, from the wake-up to the next index hand-off; {} without this estimate)",
            format_duration_ns(static_cast<double>(w.receive_ns)),
            format_duration_ns(static_cast<double>(w.receive_runq_ns)),
            format_duration_ns(static_cast<double>(*w.receive_cpu_ns)), format_percent(w.blocked_share()));
      else
        text += "; the time next() spends receiving a batch is not estimated (no index hand-off was seen)";
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
    std::string line = fmt::format("GPU                busy {} of the {} (NVML: share of time a kernel ran, {} GPU{})",
                                   format_percent(*m.gpu_util), m.gpu_over_loop ? "training loop" : "window",
                                   m.gpus_sampled, m.gpus_sampled == 1 ? "" : "s");
    if (m.sm_active) line += fmt::format("; SM activity {} (GPM)", format_percent(*m.sm_active));
    lines.push_back(line);
  } else if (!gpu_sampler_setting.empty() && gpu_sampler_setting != contract::kGpuSamplerNvml) {
    lines.push_back("GPU                " + gpu_sampler_setting);
  }
  if (m.startup_batches > 0 && m.startup) {
    std::string line = fmt::format(
        "start-up           the first batch of {} epoch{} waited {} in all ({}): counted apart from the waiting "
        "share, which is {} with it",
        m.startup_batches, m.startup_batches == 1 ? "" : "s",
        format_seconds(static_cast<double>(m.startup_wait_ns) / 1e9), startup_wait_text(*m.startup),
        m.wait_fraction_with_startup ? format_percent(*m.wait_fraction_with_startup) : "—");
    if (const std::string share = startup_share_text(*m.startup); !share.empty()) line += "; " + share;
    lines.push_back(line);
  }
  if (m.main_host_share)
    lines.push_back(fmt::format("main thread        on CPU outside CUDA calls {} of its time",
                                format_percent(*m.main_host_share)));
  return lines;
}

std::string startup_wait_text(const EpochStartup& s) {
  if (s.waited_for == StartupWait::iterator_setup)
    return "the iterator's set-up: no workers, so the sampler's order and the first batch's fetch";
  const std::string persistent = s.persistent_workers ? "; persistent workers start once, later epochs refill "
                                                        "their queues"
                                                      : "";
  if (!s.worker_ready_ns)
    return fmt::format("the workers starting, fork to ready not measured{}", persistent);
  return fmt::format("the workers starting: fork to ready {} per worker, measured over {}{}",
                     format_duration_ns(static_cast<double>(*s.worker_ready_ns)), format_count(s.workers_started),
                     persistent);
}

std::string startup_share_text(const EpochStartup& s) {
  if (!s.share_of_epoch || !s.batches_per_epoch) return "";
  return fmt::format("an epoch of {} batches pays {} of it each time: {} of the epoch (estimated at the steady "
                     "pace of {} a batch)",
                     format_count(*s.batches_per_epoch), format_duration_ns(static_cast<double>(s.per_epoch_ns())),
                     format_percent(*s.share_of_epoch),
                     s.steady_step_ns ? format_duration_ns(static_cast<double>(*s.steady_step_ns)) : "—");
}

}  // namespace ingero::reports
