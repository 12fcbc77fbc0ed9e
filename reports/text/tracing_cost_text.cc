// SPDX-License-Identifier: Apache-2.0
#include "reports/text/tracing_cost_text.h"

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/format.h"

namespace ingero::reports {

namespace {

std::string thread_name(const ThreadTracingCost& t) {
  if (!t.role.empty() && t.role != "other") return fmt::format("the {} thread ({} {})", t.role, t.tid, t.comm);
  return fmt::format("thread {} {}", t.tid, t.comm);
}

std::string share_of(const ThreadTracingCost& t) {
  return fmt::format("{} of {} ({} probed calls)", format_percent(t.share), thread_name(t), format_count(t.hits));
}

// "the tracer's scheduler, memory, process and block programs ran 212 ms (1,204,332 runs, 176 ns
// each): 0.3 % of the traced threads' 70.1 s on CPU ..."
std::string programs_line(const ProgramsCost& p) {
  std::string line = fmt::format("the tracer's scheduler, memory, process and block programs ran {} ({} runs",
                                 format_duration_ns(static_cast<double>(p.ns)), format_count(p.runs));
  if (p.runs > 0) line += fmt::format(", {} each", format_duration_ns(static_cast<double>(p.ns) / static_cast<double>(p.runs)));
  line += ")";
  if (p.share)
    line += fmt::format(": {} of the traced threads' {} on CPU (the programs' own time, by the kernel's BPF "
                        "statistics: entering them costs more, and they also ran for other processes' events)",
                        format_percent(*p.share), format_duration_ns(static_cast<double>(p.traced_cpu_ns)));
  return line;
}

// "the CPU profile's sampling program ran 14.7 ms (1,034 clock ticks, 14.2 µs each): 0.3 % of ..."
std::string profile_line(const ProgramsCost& p) {
  std::string line = fmt::format("the CPU profile's sampling program ran {} ({} clock ticks",
                                 format_duration_ns(static_cast<double>(p.profile->ns)), format_count(p.profile->runs));
  if (p.profile->runs > 0)
    line += fmt::format(", {} each",
                        format_duration_ns(static_cast<double>(p.profile->ns) / static_cast<double>(p.profile->runs)));
  line += ")";
  if (p.profile_share)
    line += fmt::format(": {} of the traced threads' {} on CPU", format_percent(*p.profile_share),
                        format_duration_ns(static_cast<double>(p.traced_cpu_ns)));
  return line;
}

// "the job used 41.2 s of CPU: 32.0 s user, 9.2 s system ..."
std::string job_cpu_line(const JobCpu& cpu) {
  return fmt::format("the job used {} of CPU: {} user, {} system (its processes, as they were waited for; "
                     "probe traps and the kernel programs are charged to its system time, so an untraced run's "
                     "is the baseline that measures them)",
                     format_duration_ns(static_cast<double>(cpu.user_ns + cpu.system_ns)),
                     format_duration_ns(static_cast<double>(cpu.user_ns)),
                     format_duration_ns(static_cast<double>(cpu.system_ns)));
}

// What one of the tracer's helpers was there for, in words.
struct HelperWords {
  std::string_view opening;  // before its CPU time
  std::string_view after;    // after it
  std::string_view what;     // in parentheses, when its parts were not measured apart
};

HelperWords helper_words(std::string_view name) {
  if (name == kHealthSamplerHelper)
    return {"the worker-health sampler read /proc for", "of its own CPU",
            "memory, descriptors, /dev/shm, where processes slept"};
  if (name == kLiveMetricsHelper) return {"the live metrics took", "of CPU", ""};
  return {"", "of CPU", ""};
}

// "gathering and publishing each second 9 ms", "serving 30 scrapes 5 ms"
std::string helper_part_words(const HelperCpuPart& p) {
  const std::string ns = format_duration_ns(static_cast<double>(p.cpu_ns));
  if (p.part == kPublishPart) return "gathering and publishing each second " + ns;
  if (p.part == kServePart)
    return p.count ? fmt::format("serving {} scrapes {}", format_count(*p.count), ns) : "serving scrapes " + ns;
  return fmt::format("{} {}", p.part, ns);
}

// "the worker-health sampler read /proc for 9.1 ms of its own CPU (memory, ...): 0.3 % of the job's CPU";
// "the live metrics took 14 ms of CPU (gathering and publishing each second 9 ms, serving 30 scrapes
// 5 ms): 0.4 % of the job's CPU"
std::string helper_cpu_line(const HelperCpu& h) {
  const HelperWords words = helper_words(h.name);
  std::string line = fmt::format("{} {} {}", words.opening.empty() ? "the " + h.name + " took" : std::string(words.opening),
                                 format_duration_ns(static_cast<double>(h.cpu_ns)), words.after);
  std::string detail(words.what);
  if (!h.parts.empty()) {
    detail.clear();
    for (const HelperCpuPart& p : h.parts) detail += (detail.empty() ? "" : ", ") + helper_part_words(p);
  }
  if (!detail.empty()) line += " (" + detail + ")";
  if (h.job_share) line += fmt::format(": {} of the job's CPU", format_percent(*h.job_share));
  return line;
}

// What a sampled count's rates were taken per, as a clause ("" when the trace did not record it).
std::string rate_clock_clause(const std::string& clock) {
  if (clock == contract::rate_clock::kOnCpu) return ", its rate per second its calling threads ran";
  if (clock == contract::rate_clock::kWall) return ", its rate per wall second (a calling thread's on-CPU time could not be read)";
  return "";
}

// What the windows' traps were taken to cost, as a clause.
std::string trap_cost_clause(const std::optional<double>& scale) {
  if (!scale) return "; the windows' traps taken at the calibrated cost";
  return fmt::format("; the windows' traps taken at {:.2f}x the calibrated cost, as measured in the job", *scale);
}

// The CUDA and NCCL probes' cost and their duty cycle: nothing when none was probed.
std::vector<std::string> probe_lines(const TracingCost& cost) {
  std::vector<std::string> lines;
  if (!cost.calls_probed) return lines;
  std::string first;
  if (!cost.known()) {
    first = "tracing cost unknown: " + cost.unknown_because;
  } else {
    const ThreadTracingCost* top = cost.threads.empty() ? nullptr : &cost.threads.front();
    first = "tracing cost ≈ ";
    if (cost.main) first += share_of(*cost.main);
    if (top && (!cost.main || top->tid != cost.main->tid)) first += (cost.main ? "; at most " : "") + share_of(*top);
    if (!cost.main && !top) first += "0 (no probe fired)";
    first += fmt::format(" (a probed call costs {} at entry only, {} with its return, calibrated on this machine)",
                         format_duration_ns(*cost.entry_ns), format_duration_ns(*cost.call_ns));
  }
  if (cost.sampled.empty())
    first += cost.sampling_on ? "; exact counts for all functions"
                              : "; exact counts for all functions (no duty cycle" +
                                    (cost.sampling_note.empty() ? std::string(")") : ": " + cost.sampling_note + ")");
  lines.push_back(first);
  for (const SampledFunction& f : cost.sampled)
    lines.push_back(fmt::format("{} sampled {} of the time in {} ({} windows): count {}{}{}; a slow {} in the "
                                "detached {} is not stored: it shows only as its thread's time off CPU and "
                                "between the exact sync and copy calls around it",
                                f.function, format_percent(f.duty_share),
                                f.pid ? fmt::format("process {}", f.pid) : std::string("every process"), f.windows,
                                format_calls(0, f.estimate), rate_clock_clause(f.rate_clock), trap_cost_clause(f.trap_cost_scale), f.function,
                                format_percent(1 - f.duty_share)));
  return lines;
}

}  // namespace

std::string cut_calls_text(const std::string& function, int64_t cut) {
  return fmt::format("{}: {} probed calls could not be timed (their entry and their return were not both seen in "
                     "one probing window, or a return came without its entry): they are counted, and left out of "
                     "its latencies, slow calls and chains",
                     function, format_count(cut));
}

std::vector<std::string> tracing_cost_lines(const TracingCost& cost) {
  std::vector<std::string> lines = probe_lines(cost);
  if (cost.programs) lines.push_back(programs_line(*cost.programs));
  if (cost.programs && cost.programs->profile) lines.push_back(profile_line(*cost.programs));
  if (cost.job_cpu) lines.push_back(job_cpu_line(*cost.job_cpu));
  if (cost.health_sampler) lines.push_back(helper_cpu_line(*cost.health_sampler));
  if (cost.live_metrics) lines.push_back(helper_cpu_line(*cost.live_metrics));
  return lines;
}

}  // namespace ingero::reports
