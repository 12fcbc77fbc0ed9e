// SPDX-License-Identifier: Apache-2.0
// JSON Schemas of the trace tools: the builders of common/json_schema.h, and the shapes of the report JSON
// (reports/render/report_json.h) that the tools return. Clients validate structuredContent
// against these (the TypeScript SDK with Ajv), so every field says whether it can be null.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_schema.h"

namespace ingero::mcp::schemas {

using nlohmann::json;
using json_schema::Properties;
using json_schema::any;
using json_schema::array_of;
using json_schema::arguments;
using json_schema::boolean;
using json_schema::integer;
using json_schema::nullable;
using json_schema::number;
using json_schema::object;
using json_schema::string;
using json_schema::string_enum;
using json_schema::with_optional;

// Report pieces, each reports/render/report_json.h's schema of what its writer writes.
json run_header();
json metrics();
json call_row();
json tracing_cost();
json process_row();
json causal_chain();
json profile();  // explain's "profile", get_profile's
json slow_interval_summary();
json chain_thresholds();
json compare_report();
json recommend_report();

}  // namespace ingero::mcp::schemas
