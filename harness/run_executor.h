// One run, start to finish: DB row, tracer attached before the child's first
// instruction, the child supervised (signals forwarded, libraries probed as they
// are mapped), tracer drained, the workload's record and batch timings stored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "tracer/trace_db.h"
#include "tracer/tracer.h"

namespace ingero::harness {

struct RunRequest {
  std::string label;
  std::string kind;                        // "workload" | "command"
  std::vector<std::string> argv;
  std::optional<std::string> config_json;  // workload runs
  std::optional<std::string> result_path;  // where a workload child writes its record
};

struct TraceSettings {
  bool enabled = true;
  tracer::TraceOptions options;
};

struct RunOutcome {
  int64_t run_id = 0;
  int exit_code = 0;        // the child's, shell style
  std::string status;       // ok | failed | interrupted
  std::string child_exit;   // "exited with status 0", "was killed by signal 9 (Killed)"
  std::optional<nlohmann::json> result;  // the workload's record, when it wrote one
  std::optional<tracer::TraceSummary> trace;
};

Result<RunOutcome> execute_run(const RunRequest& request, tracer::TraceDb& db, const TraceSettings& trace,
                               const std::string& machine_json);

}  // namespace ingero::harness
