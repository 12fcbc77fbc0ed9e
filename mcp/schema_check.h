// SPDX-License-Identifier: Apache-2.0
// A small JSON Schema subset, enough for MCP tool input and output schemas:
// type (one name or an array of names), properties, required,
// additionalProperties: false, enum, minimum, maximum, minLength, items.
// Other keywords are ignored, so a schema may carry more than is checked.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ingero::mcp {

struct SchemaViolation {
  std::string path;     // where, as "run", "filter.min", "ids[2]"; empty for the value itself
  std::string problem;  // what, as "must be an integer", "is required"

  // "<subject> '<path>' <problem>", or "<whole> <problem>" at the root:
  // describe("argument", "arguments") -> "argument 'run' must be an integer".
  std::string describe(const std::string& subject, const std::string& whole) const;
};

// The first violation of `schema` by `value`, or nullopt when it conforms.
std::optional<SchemaViolation> check_schema(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace ingero::mcp
