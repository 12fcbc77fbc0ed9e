// SPDX-License-Identifier: Apache-2.0
// JSON Schemas of the trace tools: a few builders, and the shapes of the report JSON
// (reports/report_json.h) that the tools return. Clients validate structuredContent
// against these (the TypeScript SDK with Ajv), so every field says whether it can be null.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ingero::mcp::schemas {

using nlohmann::json;
using Properties = std::vector<std::pair<std::string, json>>;

json integer(const std::string& description = {});
json number(const std::string& description = {});
json string(const std::string& description = {});
json boolean(const std::string& description = {});
json any(const std::string& description);  // any JSON value (e.g. a stored configuration)
json string_enum(const std::vector<std::string>& values, const std::string& description = {});
json nullable(json schema);  // the same, or null
json array_of(json items, const std::string& description = {});
// An output object: every property listed is required; more may be added later.
json object(const Properties& properties, const std::string& description = {});
// The object schema with more properties that are present only sometimes.
json with_optional(json object_schema, const Properties& properties);
// A tool's arguments: only those listed, `required` of them required.
json arguments(const Properties& properties, const std::vector<std::string>& required = {});

// Report pieces, as report_json.cc writes them.
json run_header();
json metrics();
json call_row();
json tracing_cost();  // as report_json.cc writes it
json process_row();
json causal_chain();
json slow_interval_summary();
json chain_thresholds();
json compare_report();
json recommend_report();

}  // namespace ingero::mcp::schemas
