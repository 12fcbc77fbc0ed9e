// SPDX-License-Identifier: Apache-2.0
// docs/formats.md describes the JSON that reports write by hand: every field of every schema MCP
// publishes (reports' *_schema(), the same lists of fields the writers use) must be named there in
// backquotes, so that a field added to a writer cannot go undocumented.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_schema.h"
#include "reports/render/report_json.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Where each property of `schema` is ("metrics.io.p99_bucket_us"), recursively through objects and arrays.
void property_paths(const json& schema, const std::string& at, std::vector<std::pair<std::string, std::string>>& out) {
  if (!schema.is_object()) return;
  if (auto properties = schema.find("properties"); properties != schema.end() && properties->is_object())
    for (const auto& [name, property] : properties->items()) {
      out.emplace_back(name, at + "." + name);
      property_paths(property, at + "." + name, out);
    }
  if (auto items = schema.find("items"); items != schema.end()) property_paths(*items, at + "[]", out);
}

// Whether `doc` names the field in backquotes, alone or as a list (`name[]`).
bool names(const std::string& doc, const std::string& name) {
  return doc.find("`" + name + "`") != std::string::npos || doc.find("`" + name + "[]`") != std::string::npos;
}

// The properties whose name `doc` never writes in backquotes, each by the first path it is at.
std::vector<std::string> undocumented(const json& schema, const std::string& root, const std::string& doc) {
  std::vector<std::pair<std::string, std::string>> paths;
  property_paths(schema, root, paths);
  std::set<std::string> named;
  std::vector<std::string> missing;
  for (const auto& [name, path] : paths)
    if (!names(doc, name) && named.insert(name).second) missing.push_back(path);
  return missing;
}

std::vector<std::pair<std::string, json>> published_schemas() {
  using namespace reports;
  return {{"run", run_header_schema()},
          {"metrics", metrics_schema()},
          {"call_latency[]", call_row_schema()},
          {"tracing_cost", tracing_cost_schema()},
          {"processes[]", process_row_schema()},
          {"causal_chains[]", causal_chain_schema()},
          {"profile", profile_schema()},
          {"slow_intervals[]", slow_interval_schema()},
          {"chain_thresholds", chain_thresholds_schema()},
          {"compare", compare_report_schema()},
          {"recommend", recommend_report_schema()}};
}

TEST(FormatsDoc, NamesEveryFieldOfEveryPublishedSchema) {
  const std::string doc = read_text(INGERO_FORMATS_DOC);
  ASSERT_FALSE(doc.empty()) << INGERO_FORMATS_DOC << " could not be read";
  std::vector<std::string> missing;
  std::set<std::string> listed;  // a name shared by several schemas is listed once
  for (const auto& [root, schema] : published_schemas())
    for (const auto& path : undocumented(schema, root, doc))
      if (listed.insert(path.substr(path.find_last_of(".]") + 1)).second) missing.push_back(path);
  std::string list;
  for (const auto& path : missing) list += "\n  " + path;
  EXPECT_TRUE(missing.empty()) << INGERO_FORMATS_DOC << " does not name these fields in backquotes:" << list;
}

// The check itself: a nested field the text does not name is found, with its path; a name
// written without backquotes, or inside a longer backquoted text, does not count.
TEST(FormatsDoc, TheCheckNamesAFieldTheTextLeavesOut) {
  using namespace json_schema;
  const json schema = object({{"documented", integer()},
                              {"rows", array_of(object({{"plain", integer()}, {"hidden", number()}}))}});
  const std::string doc = "`documented` and `rows[]`, each with plain and `hidden`, but not `plain_text`";
  EXPECT_EQ(undocumented(schema, "doc", doc), std::vector<std::string>{"doc.rows[].plain"});
  EXPECT_TRUE(undocumented(schema, "doc", doc + " `plain`").empty());
}

}  // namespace
}  // namespace ingero::mcp
