// SPDX-License-Identifier: Apache-2.0
// Builders of JSON Schemas (draft 2020-12 subset): the MCP tools' input and output schemas, and
// the shapes of the report JSON (reports/render/json_shape.h), which write a value and its schema from
// one list of fields. Output objects name every field they always carry as required, and say
// of each whether it can be null.
#pragma once

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ingero::json_schema {

using nlohmann::json;
using Properties = std::vector<std::pair<std::string, json>>;

json integer(const std::string& description = {});
json number(const std::string& description = {});
json string(const std::string& description = {});
json boolean(const std::string& description = {});
json any(const std::string& description);  // any JSON value (e.g. a stored configuration)
json string_enum(const std::vector<std::string>& values, const std::string& description = {});
// The same from a list of names in the contract (common/trace_contract.h): contract::status::kAll.
template <size_t N>
json string_enum_of(const std::string_view (&values)[N], const std::string& description = {}) {
  return string_enum(std::vector<std::string>(std::begin(values), std::end(values)), description);
}
json nullable(json schema);  // the same, or null
json array_of(json items, const std::string& description = {});
// An output object: every property listed is required; more may be added later.
json object(const Properties& properties, const std::string& description = {});
// The object schema with more properties that are present only sometimes.
json with_optional(json object_schema, const Properties& properties);
// A tool's arguments: only those listed, `required` of them required.
json arguments(const Properties& properties, const std::vector<std::string>& required = {});

}  // namespace ingero::json_schema
