// SPDX-License-Identifier: Apache-2.0
// What an assistant reads rather than calls: the trace DB schema, each run's explain
// text, and the `investigate` prompt that walks it through a diagnosis with the tools.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "mcp/registry.h"
#include "reports/data/trace_data.h"

namespace ingero::mcp {

inline constexpr const char* kSchemaUri = "ingero://schema";
inline constexpr const char* kRunUriPrefix = "ingero://runs/";
inline constexpr const char* kExplainUriSuffix = "/explain";

// "ingero://runs/5/explain"
std::string explain_uri(int64_t run_id);
// The run id of an explain URI; nullopt for any other URI.
std::optional<int64_t> run_of_explain_uri(const std::string& uri);

// ingero://schema (common/schema.sql) and one ingero://runs/{id}/explain per run.
Status add_trace_resources(Registry& registry, std::shared_ptr<const reports::TraceFile> trace);

// The prompt `investigate` (optional argument `run`).
Status add_investigate_prompt(Registry& registry);

}  // namespace ingero::mcp
