// SPDX-License-Identifier: Apache-2.0
#include "mcp/trace_resources.h"

#include <sstream>

#include <fmt/format.h>

#include "common/schema_sql.h"
#include "reports/documents/trace_reports.h"
#include "reports/render/report_text.h"

namespace ingero::mcp {
namespace {

// The explain text of every run, listed from the DB when asked (runs may be added while
// the server runs) and rendered when read.
class ExplainResources : public ResourceProvider {
 public:
  explicit ExplainResources(std::shared_ptr<const reports::TraceFile> trace) : trace_(std::move(trace)) {}

  Result<std::vector<ResourceEntry>> list() const override {
    auto runs = trace_->runs();
    if (!runs) return runs.error();
    std::vector<ResourceEntry> entries;
    for (const auto& run : *runs) {
      entries.push_back(ResourceEntry{explain_uri(run.run_id), fmt::format("run-{}-explain", run.run_id),
                                      fmt::format("Explain run {}: {}", run.run_id, run.label),
                                      "`ingero-bench explain` text of the run: timings, verdict, CUDA latency, "
                                      "per-role table, causal chains",
                                      "text/plain"});
    }
    return entries;
  }

  std::vector<ResourceTemplate> templates() const override {
    return {ResourceTemplate{std::string(kRunUriPrefix) + "{run}" + kExplainUriSuffix, "run-explain",
                             "Explain a run", "`ingero-bench explain` text of one run by id", "text/plain"}};
  }

  Result<std::optional<ResourceContents>> read(const std::string& uri) const override {
    const auto run_id = run_of_explain_uri(uri);
    if (!run_id) return std::optional<ResourceContents>();
    auto exists = holds_run(*run_id);
    if (!exists) return exists.error();
    if (!*exists) return std::optional<ResourceContents>();  // not found, not a failure
    reports::ExplainOptions options;
    options.db = trace_->path();
    options.run = *run_id;
    auto report = reports::make_explain_report(*trace_, options);
    if (!report) return report.error();
    std::ostringstream text;
    reports::render_text(*report, text);
    return std::optional<ResourceContents>(ResourceContents{uri, "text/plain", text.str()});
  }

 private:
  Result<bool> holds_run(int64_t run_id) const {
    auto runs = trace_->runs();
    if (!runs) return runs.error();
    for (const auto& run : *runs)
      if (run.run_id == run_id) return true;
    return false;
  }

  std::shared_ptr<const reports::TraceFile> trace_;
};

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
}

std::string investigate_text(const std::optional<std::string>& run) {
  const std::string subject = run ? "run " + *run : "the run the user asks about (else the last run)";
  const std::string arg = run ? "run: " + *run : "run";
  return fmt::format(
      "Investigate where the time of {subject} in this ingero-bench trace DB went, with the ingero-bench tools, "
      "in this order:\n"
      "1. list_runs: find {subject}; note its mode, configuration, status and epoch median, and which other runs "
      "differ from it by one setting.\n"
      "2. get_trace_stats {{{arg}}}: state the verdict (how input-bound it is and the share of time spent waiting "
      "for data), the CUDA/NCCL functions with the most time and their p50/p99, saying whether those percentiles "
      "are exact or log2 bucket bounds, and whether any events were lost (or losses are unknown).\n"
      "3. get_per_process_breakdown {{{arg}, by: \"role\"}}: where the CPU time, run-queue waits and page faults "
      "are (main loop, workers, pin thread); ask by: \"process\" when one role stands out.\n"
      "4. get_causal_chains {{{arg}}}: the HIGH and MEDIUM chains first; a chain's lost time is an upper bound on "
      "what removing its cause saves, not a saving. For each suggested change, say whether a run of this DB "
      "measured it (give that run's id and both epoch medians) or that it is unmeasured (give the command the "
      "tool returned to measure it).\n"
      "5. get_recommendation: the measured best configuration, its speed-up and interval, and whether re-runs "
      "verified it.\n"
      "Rules: quote only numbers the tools returned, with their units; never estimate the effect of an "
      "unmeasured change, say it is unmeasured. Say when the data is incomplete (events lost, losses unknown, "
      "percentiles that are bucket bounds). Use compare_runs to explain the difference between two runs, "
      "get_timeline to show what happened around one slow interval, and run_sql (tables in the ingero://schema "
      "resource) only for what the other tools do not answer.",
      fmt::arg("subject", subject), fmt::arg("arg", arg));
}

}  // namespace

std::string explain_uri(int64_t run_id) { return fmt::format("{}{}{}", kRunUriPrefix, run_id, kExplainUriSuffix); }

std::optional<int64_t> run_of_explain_uri(const std::string& uri) {
  const std::string prefix = kRunUriPrefix;
  const std::string suffix = kExplainUriSuffix;
  if (uri.size() <= prefix.size() + suffix.size() || uri.compare(0, prefix.size(), prefix) != 0 ||
      uri.compare(uri.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string id = uri.substr(prefix.size(), uri.size() - prefix.size() - suffix.size());
  if (!all_digits(id)) return std::nullopt;
  return std::stoll(id);
}

Status add_trace_resources(Registry& registry, std::shared_ptr<const reports::TraceFile> trace) {
  // The schema the tools see: an older file is read through an upgrade to this one.
  if (Status s = registry.add_resource(
          ResourceEntry{kSchemaUri, "schema", "Trace DB schema",
                        "common/schema.sql: every table and column of the trace DB, with comments; what run_sql "
                        "queries",
                        "application/sql"},
          schema::kSchemaSql);
      !s)
    return s;
  return registry.add_provider(std::make_shared<ExplainResources>(std::move(trace)));
}

Status add_investigate_prompt(Registry& registry) {
  PromptSpec prompt;
  prompt.name = "investigate";
  prompt.title = "Investigate a run";
  prompt.description =
      "Walks through a diagnosis: list_runs, get_trace_stats (verdict), get_per_process_breakdown, "
      "get_causal_chains, get_recommendation, quoting only the tools' numbers.";
  prompt.arguments = {{"run", "run id to investigate (default: the one the user names, else the last run)", false}};
  prompt.render = [](const PromptArguments& args) -> Result<std::string> {
    const auto run = args.find("run");
    if (run == args.end() || run->second.empty()) return investigate_text(std::nullopt);
    if (!all_digits(run->second))
      return Error::bad_input(fmt::format("run '{}' is not a run id", run->second),
                              "pass a run id from list_runs, such as 5");
    return investigate_text(run->second);
  };
  return registry.add_prompt(std::move(prompt));
}

}  // namespace ingero::mcp
