// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "common/json_schema.h"
#include "common/trace_contract.h"
#include "mcp/schema_check.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "run": {"type": "integer", "minimum": 1, "maximum": 100},
    "name": {"type": "string", "minLength": 2},
    "mode": {"enum": ["fast", "slow"]},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "maybe": {"type": ["string", "null"]},
    "ids": {"type": "array", "items": {"type": "integer"}},
    "filter": {"type": "object", "properties": {"min": {"type": "number"}},
               "required": ["min"], "additionalProperties": false}
  },
  "required": ["run"],
  "additionalProperties": false
})");

// The violation as the server words it for tool arguments.
std::string violation(const json& value, const json& schema = kSchema) {
  const auto found = check_schema(value, schema);
  return found ? found->describe("argument", "arguments") : "";
}

TEST(McpSchema, ConformingValuesPass) {
  EXPECT_EQ(violation(json{{"run", 1}}), "");
  EXPECT_EQ(violation(json::parse(R"({"run": 100, "name": "ab", "mode": "slow", "ratio": 0.5, "flag": true,
                                    "maybe": null, "ids": [1, 2], "filter": {"min": 3}})")),
            "");
  EXPECT_EQ(violation(json{{"run", 2.0}}), "") << "2.0 is an integer in JSON Schema";
  EXPECT_EQ(violation(json{{"run", 1}, {"maybe", "text"}}), "");
  EXPECT_EQ(violation(json{{"run", 1}, {"ratio", 3}}), "") << "an integer is a number";
}

// An enumeration from the contract takes every name it lists, and null only where it is nullable.
TEST(McpSchema, ContractEnumerationsAndTheirNull) {
  const json phase = json_schema::string_enum_of(contract::sweep_phase::kAll);
  for (const auto name : contract::sweep_phase::kAll) EXPECT_EQ(violation(json(name), phase), "") << name;
  EXPECT_NE(violation(json("warmup"), phase), "");
  EXPECT_NE(violation(json(nullptr), phase), "");
  const json maybe_phase = json_schema::nullable(phase);
  EXPECT_EQ(violation(json(nullptr), maybe_phase), "");
  EXPECT_EQ(violation(json("probe"), maybe_phase), "");
  EXPECT_NE(violation(json("warmup"), maybe_phase), "");
}

TEST(McpSchema, TypeViolationsNameThePath) {
  EXPECT_EQ(violation(json{{"run", "7"}}), "argument 'run' must be an integer");
  EXPECT_EQ(violation(json{{"run", 1.5}}), "argument 'run' must be an integer");
  EXPECT_EQ(violation(json{{"run", 1}, {"name", 3}}), "argument 'name' must be a string");
  EXPECT_EQ(violation(json{{"run", 1}, {"ratio", "x"}}), "argument 'ratio' must be a number");
  EXPECT_EQ(violation(json{{"run", 1}, {"flag", 0}}), "argument 'flag' must be a boolean");
  EXPECT_EQ(violation(json{{"run", 1}, {"maybe", 5}}), "argument 'maybe' must be a string or null");
  EXPECT_EQ(violation(json{{"run", 1}, {"ids", "1,2"}}), "argument 'ids' must be an array");
  EXPECT_EQ(violation(json::array()), "arguments must be an object");
}

TEST(McpSchema, NestedPaths) {
  EXPECT_EQ(violation(json::parse(R"({"run": 1, "ids": [1, "two"]})")), "argument 'ids[1]' must be an integer");
  EXPECT_EQ(violation(json::parse(R"({"run": 1, "filter": {"min": "low"}})")), "argument 'filter.min' must be a number");
  EXPECT_EQ(violation(json::parse(R"({"run": 1, "filter": {}})")), "argument 'filter.min' is required");
  EXPECT_EQ(violation(json::parse(R"({"run": 1, "filter": {"min": 1, "max": 2}})")),
            "argument 'filter.max' is not allowed (known: min)");
}

TEST(McpSchema, RequiredAndAdditionalProperties) {
  EXPECT_EQ(violation(json::object()), "argument 'run' is required");
  const std::string extra = violation(json{{"run", 1}, {"runs", 2}});
  EXPECT_EQ(extra.rfind("argument 'runs' is not allowed (known: ", 0), 0u) << extra;
  EXPECT_NE(extra.find("run"), std::string::npos);
  // Without additionalProperties: false, unknown keys pass.
  EXPECT_EQ(violation(json{{"x", 1}}, json{{"type", "object"}}), "");
}

TEST(McpSchema, Bounds) {
  EXPECT_EQ(violation(json{{"run", 0}}), "argument 'run' must be >= 1");
  EXPECT_EQ(violation(json{{"run", 101}}), "argument 'run' must be <= 100");
  EXPECT_EQ(violation(json{{"run", 1}, {"name", "a"}}), "argument 'name' must be at least 2 characters long");
  EXPECT_EQ(violation(json{{"run", 1}, {"name", "é"}}), "argument 'name' must be at least 2 characters long")
      << "minLength counts characters, not bytes";
  EXPECT_EQ(violation(json{{"run", 1}, {"name", "éé"}}), "");
}

TEST(McpSchema, Enum) {
  EXPECT_EQ(violation(json{{"run", 1}, {"mode", "medium"}}), R"(argument 'mode' must be one of "fast", "slow")");
}

TEST(McpSchema, UnknownKeywordsAndNonObjectSchemasConstrainNothing) {
  EXPECT_EQ(violation(json{{"a", 1}}, json::parse(R"({"type": "object", "patternProperties": {"x": false}})")), "");
  EXPECT_EQ(violation(json{{"a", 1}}, json(true)), "");
  EXPECT_EQ(violation(json{{"a", 1}}, json::parse(R"({"type": "whatever"})")), "");
}

TEST(McpSchema, DescribeForOutput) {
  const auto found = check_schema(json{{"sum", "3"}}, json::parse(R"({"type":"object","properties":{"sum":{"type":"integer"}}})"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, "sum");
  EXPECT_EQ(found->describe("field", "structuredContent"), "field 'sum' must be an integer");
}

}  // namespace
}  // namespace ingero::mcp
