// SPDX-License-Identifier: Apache-2.0
// What `ingero-bench mcp --db FILE` offers an AI assistant over one trace DB: tools that
// answer with the same analysis explain / compare / recommend print (reports/documents/trace_reports.h),
// a read-only SQL tool, the schema and each run's explain text as resources, and the
// `investigate` prompt. Every tool only reads; the DB file is never written.
#pragma once

#include <chrono>
#include <memory>

#include "common/result.h"
#include "mcp/registry.h"
#include "mcp/server.h"
#include "mcp/sql_tool.h"
#include "reports/data/trace_data.h"

namespace ingero::mcp {

inline constexpr int64_t kTimelineDefaultLimit = 500;
inline constexpr int64_t kTimelineMaxLimit = 5000;

struct TraceToolOptions {
  std::chrono::milliseconds sql_time_limit = kSqlTimeLimit;  // run_sql's deadline per query
};

// Tools (list_runs, get_trace_stats, get_causal_chains, get_profile, get_per_process_breakdown,
// compare_runs, get_recommendation, get_timeline, run_sql), resources (ingero://schema,
// ingero://runs/{id}/explain) and the `investigate` prompt over an open trace. The
// registry's handlers share ownership of the trace.
Result<Registry> make_trace_registry(std::shared_ptr<const reports::TraceFile> trace,
                                     const TraceToolOptions& options = {});

// The server's name, version and instructions for the client's model.
ServerInfo trace_server_info(const reports::TraceFile& trace, const std::string& version);

}  // namespace ingero::mcp
