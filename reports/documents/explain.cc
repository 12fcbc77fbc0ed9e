// SPDX-License-Identifier: Apache-2.0
#include "reports/documents/explain.h"

#include "common/trace_contract.h"
#include "reports/text/run_text.h"

namespace ingero::reports {

ExplainReport make_explain_report(const RunAnalysis& a, std::optional<double> since_s, bool per_process) {
  ExplainReport report;
  report.run = run_header(a, since_s);
  report.metrics = a.metrics;
  report.calls = a.calls;
  auto processes = process_table(a.context);
  report.roles = role_totals(a.context, processes);
  if (per_process) report.processes = std::move(processes);
  report.chains = a.chains;
  report.chain_words = describe_chains(a.chains, a.context, a.metrics, a.calls);
  report.health = a.health;
  report.health_words = describe_health(a.health);
  report.ranks = a.ranks;
  report.loaders = a.context.loaders;
  report.gpu_sampler = a.context.setting(contract::kGpuSamplerSetting).value_or("");
  report.tracing_cost = tracing_cost(a.context);
  report.notes = data_notes(a);
  report.profile = a.profile;
  report.profile_taken = a.profile_taken;
  return report;
}

}  // namespace ingero::reports
