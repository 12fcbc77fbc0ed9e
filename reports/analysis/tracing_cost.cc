// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/tracing_cost.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/trace_contract.h"

namespace ingero::reports {

namespace {

// A non-negative number the run recorded as a setting.
std::optional<double> setting_number(const RunContext& context, std::string_view key) {
  const auto text = context.setting(key);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !(v >= 0)) return std::nullopt;
  return v;
}

// A non-negative integer field of a stored object; none for anything else (never throws).
std::optional<int64_t> count_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    return v > static_cast<uint64_t>(INT64_MAX) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(v));
  }
  const int64_t v = it->get<int64_t>();
  return v < 0 ? std::nullopt : std::optional<int64_t>(v);
}

// The kProgramTimeSetting object, or why there is none.
Result<ProgramsCost> programs_cost(const RunContext& context) {
  const auto text = context.setting(contract::kProgramTimeSetting);
  if (!text) {
    if (auto why = context.setting(contract::kProgramTimeUnknownSetting)) return Error::failure(*why);
    return Error::failure(context.run.traced ? "this run predates timing the kernel programs" : "the run was not traced");
  }
  const nlohmann::json programs = parse_json_or_discarded(*text);  // a DB from elsewhere: capped nesting
  if (!programs.is_object()) return Error::failure("its stored program times are not a JSON object");
  ProgramsCost cost;
  for (const auto& [name, times] : programs.items()) {
    const std::optional<int64_t> runs = count_field(times, "runs"), ns = count_field(times, "ns");
    if (!runs || !ns) return Error::failure(fmt::format("its stored times of program {} are unreadable", name));
    if (name == contract::kProfileProgram) {
      cost.profile = ProgramTime{name, *runs, *ns};
      continue;
    }
    cost.programs.push_back({name, *runs, *ns});
    cost.runs += *runs;
    cost.ns += *ns;
  }
  std::stable_sort(cost.programs.begin(), cost.programs.end(),
                   [](const ProgramTime& a, const ProgramTime& b) { return a.ns > b.ns; });
  cost.traced_cpu_ns = total_counters(context.thread_stats).oncpu_ns;
  if (cost.traced_cpu_ns > 0) cost.share = static_cast<double>(cost.ns) / static_cast<double>(cost.traced_cpu_ns);
  if (cost.traced_cpu_ns > 0 && cost.profile)
    cost.profile_share = static_cast<double>(cost.profile->ns) / static_cast<double>(cost.traced_cpu_ns);
  return cost;
}

// A setting that holds a CPU time or a count, as an integer.
std::optional<int64_t> setting_count(const RunContext& context, std::string_view key) {
  const auto v = setting_number(context, key);
  if (!v || *v >= 9.2e18) return std::nullopt;  // a DB from elsewhere: past int64_t is no reading
  return static_cast<int64_t>(*v);
}

// A helper's cost, with its share of the job's CPU.
HelperCpu helper_cpu(std::string_view name, int64_t cpu_ns, std::vector<HelperCpuPart> parts,
                     const std::optional<JobCpu>& job) {
  HelperCpu h{std::string(name), cpu_ns, std::move(parts), std::nullopt};
  if (job && job->user_ns + job->system_ns > 0)
    h.job_share = static_cast<double>(cpu_ns) / static_cast<double>(job->user_ns + job->system_ns);
  return h;
}

// The live metrics' cost as recorded: publishing (the tracer's), serving (the exposer's, with its
// scrapes); none when neither was (metrics off).
std::optional<HelperCpu> live_metrics_cost(const RunContext& context, const std::optional<JobCpu>& job) {
  std::vector<HelperCpuPart> parts;
  if (const auto ns = setting_count(context, contract::kMetricsPublishCpuNsSetting))
    parts.push_back({std::string(kPublishPart), *ns, std::nullopt});
  if (const auto ns = setting_count(context, contract::kMetricsServeCpuNsSetting))
    parts.push_back({std::string(kServePart), *ns, setting_count(context, contract::kMetricsScrapesSetting)});
  if (parts.empty()) return std::nullopt;
  int64_t total = 0;
  for (const HelperCpuPart& p : parts) total += p.cpu_ns;
  return helper_cpu(kLiveMetricsHelper, total, std::move(parts), job);
}

}  // namespace

TracingCost tracing_cost(const RunContext& context) {
  TracingCost cost;
  cost.calls_probed = !context.calls.empty() || !context.thread_hits.empty();
  cost.entry_ns = setting_number(context, contract::kProbeEntryNsSetting);
  cost.call_ns = setting_number(context, contract::kProbeCallNsSetting);
  cost.unknown_because = context.setting(contract::kProbeCostUnknownSetting).value_or("");
  if (!cost.known() && cost.unknown_because.empty())
    cost.unknown_because = context.run.traced ? "this run predates the probe calibration" : "the run was not traced";
  cost.sampling_on = context.setting(contract::kCallSamplingSetting) == contract::kCallSamplingOn;
  cost.sampling_note = context.setting(contract::kCallSamplingNoteSetting).value_or("");
  cost.hot_share = setting_number(context, contract::kHotShareSetting);

  std::map<int64_t, const ThreadRecord*> threads;
  for (const ThreadRecord& t : context.threads) threads[t.tid] = &t;
  // A thread's traced time: its lifetime within the run where known (a thread that never leaves the
  // CPU has its on-CPU time accounted only when it does), at least its on- and off-CPU time.
  std::map<int64_t, int64_t> time_by_tid;
  for (const ThreadStatsRecord& s : context.thread_stats)
    time_by_tid[s.tid] = s.counters.oncpu_ns + s.counters.offcpu_ns;
  const int64_t run_end = context.run.end_ns.value_or(0);
  for (const ThreadRecord& t : context.threads) {
    const int64_t from = std::max(t.start_ns.value_or(context.run.start_ns), context.run.start_ns);
    const int64_t until = t.exit_ns.value_or(run_end);
    if (until > from) time_by_tid[t.tid] = std::max(time_by_tid[t.tid], until - from);
  }
  auto row_for = [&](int64_t tid, int64_t pid) {
    ThreadTracingCost row{tid, pid, {}, {}, 0, 0, time_by_tid.count(tid) ? time_by_tid[tid] : 0, 0};
    if (auto it = threads.find(tid); it != threads.end()) {
      row.role = it->second->role;
      row.comm = it->second->comm;
    }
    return row;
  };
  for (const ThreadHits& h : context.thread_hits) {
    ThreadTracingCost row = row_for(h.tid, h.pid);
    row.hits = h.calls;
    if (cost.known()) {
      const int64_t returned = std::min(h.returns, h.calls);
      row.cost_ns = static_cast<double>(h.calls - returned) * *cost.entry_ns + static_cast<double>(returned) * *cost.call_ns;
      if (row.time_ns > 0) row.share = row.cost_ns / static_cast<double>(row.time_ns);
    }
    cost.threads.push_back(row);
  }
  std::stable_sort(cost.threads.begin(), cost.threads.end(),
                   [](const ThreadTracingCost& a, const ThreadTracingCost& b) { return a.share > b.share; });
  for (const ThreadTracingCost& t : cost.threads)
    if (t.role == contract::kRoleMain && (!cost.main || t.hits > cost.main->hits)) cost.main = t;
  if (!cost.main)
    for (const ThreadRecord& t : context.threads)
      if (t.role == contract::kRoleMain) {
        cost.main = row_for(t.tid, t.pid);
        break;
      }
  for (const SampledCallRecord& r : context.sampled)
    cost.sampled.push_back({r.op, r.pid, r.windows, r.duty_share(),
                            count_estimate(r.estimated_calls, r.estimated_low, r.estimated_high, r.duty_share()),
                            r.rate_clock,
                            r.trap_cost_scale});
  const auto user = setting_number(context, contract::kJobUserNsSetting);
  const auto system = setting_number(context, contract::kJobSystemNsSetting);
  if (user && system) cost.job_cpu = JobCpu{static_cast<int64_t>(*user), static_cast<int64_t>(*system)};
  if (const auto sampler = setting_count(context, contract::kHealthSamplerCpuNsSetting))
    cost.health_sampler = helper_cpu(kHealthSamplerHelper, *sampler, {}, cost.job_cpu);
  cost.live_metrics = live_metrics_cost(context, cost.job_cpu);
  if (auto programs = programs_cost(context)) cost.programs = std::move(programs).value();
  else cost.programs_unknown_because = programs.error().message;
  return cost;
}

}  // namespace ingero::reports
