// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "mcp/registry.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

ToolSpec tool_named(const std::string& name) {
  ToolSpec tool;
  tool.name = name;
  tool.input_schema = json{{"type", "object"}};
  tool.handler = [](const json&) -> Result<ToolAnswer> { return ToolAnswer{json::object(), "ok"}; };
  return tool;
}

PromptSpec prompt_named(const std::string& name) {
  PromptSpec prompt;
  prompt.name = name;
  prompt.render = [](const PromptArguments&) -> Result<std::string> { return std::string("text"); };
  return prompt;
}

// Serves URIs under its prefix; counts its reads.
class PrefixProvider : public ResourceProvider {
 public:
  explicit PrefixProvider(std::string prefix) : prefix_(std::move(prefix)) {}
  Result<std::vector<ResourceEntry>> list() const override {
    return std::vector<ResourceEntry>{ResourceEntry{prefix_ + "1", "one", "", "", "text/plain"}};
  }
  Result<std::optional<ResourceContents>> read(const std::string& uri) const override {
    if (uri.rfind(prefix_, 0) != 0) return std::optional<ResourceContents>();
    return std::optional<ResourceContents>(ResourceContents{uri, "text/plain", "from " + prefix_});
  }

 private:
  std::string prefix_;
};

class FailingProvider : public ResourceProvider {
 public:
  Result<std::vector<ResourceEntry>> list() const override { return Error::failure("trace DB unreadable"); }
  Result<std::optional<ResourceContents>> read(const std::string&) const override {
    return Error::failure("trace DB unreadable");
  }
};

TEST(McpRegistry, DuplicateNamesAreRefused) {
  Registry registry;
  ASSERT_TRUE(registry.add_tool(tool_named("list_runs")).ok());
  const Status again = registry.add_tool(tool_named("list_runs"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, "tool 'list_runs' is already registered");
  EXPECT_EQ(registry.tools().size(), 1u);

  ASSERT_TRUE(registry.add_prompt(prompt_named("p")).ok());
  EXPECT_FALSE(registry.add_prompt(prompt_named("p")).ok());

  ASSERT_TRUE(registry.add_resource(ResourceEntry{"x://a", "a", "", "", ""}, "text").ok());
  EXPECT_FALSE(registry.add_resource(ResourceEntry{"x://a", "a2", "", "", ""}, "other").ok());
}

TEST(McpRegistry, InvalidSpecsAreRefused) {
  Registry registry;
  EXPECT_FALSE(registry.add_tool(tool_named("")).ok());
  EXPECT_FALSE(registry.add_tool(tool_named("has space")).ok());
  ToolSpec no_object = tool_named("t1");
  no_object.input_schema = json{{"type", "string"}};
  EXPECT_FALSE(registry.add_tool(no_object).ok());
  ToolSpec bad_output = tool_named("t2");
  bad_output.output_schema = json{{"type", "array"}};
  EXPECT_FALSE(registry.add_tool(bad_output).ok());
  ToolSpec no_handler = tool_named("t3");
  no_handler.handler = nullptr;
  EXPECT_FALSE(registry.add_tool(no_handler).ok());

  PromptSpec repeated = prompt_named("p");
  repeated.arguments = {{"run", "", true}, {"run", "", false}};
  EXPECT_FALSE(registry.add_prompt(repeated).ok());
  EXPECT_FALSE(registry.add_resource(ResourceEntry{"", "nameless uri", "", "", ""}, "").ok());
  EXPECT_FALSE(registry.add_provider(nullptr).ok());
  EXPECT_TRUE(registry.tools().empty());
  EXPECT_TRUE(registry.prompts().empty());
}

TEST(McpRegistry, LookupKeepsRegistrationOrder) {
  Registry registry;
  for (const char* name : {"b", "a", "c"}) ASSERT_TRUE(registry.add_tool(tool_named(name)).ok());
  EXPECT_EQ(registry.tool_names(), (std::vector<std::string>{"b", "a", "c"}));
  ASSERT_NE(registry.find_tool("a"), nullptr);
  EXPECT_EQ(registry.find_tool("a")->name, "a");
  EXPECT_EQ(registry.find_tool("d"), nullptr);
}

TEST(McpRegistry, ResourcesComeFromFixedEntriesThenProviders) {
  Registry registry;
  ASSERT_TRUE(registry.add_resource(ResourceEntry{"x://readme", "readme", "", "", "text/markdown"}, "# hi").ok());
  ASSERT_TRUE(registry.add_provider(std::make_shared<PrefixProvider>("x://runs/")).ok());
  ASSERT_TRUE(registry.add_provider(std::make_shared<PrefixProvider>("x://")).ok());

  auto listed = registry.list_resources();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].uri, "x://readme");

  auto fixed = registry.read_resource("x://readme");
  ASSERT_TRUE(fixed.ok() && fixed->has_value());
  EXPECT_EQ((*fixed)->text, "# hi");
  EXPECT_EQ((*fixed)->mime_type, "text/markdown");

  auto first_claim = registry.read_resource("x://runs/7");
  ASSERT_TRUE(first_claim.ok() && first_claim->has_value());
  EXPECT_EQ((*first_claim)->text, "from x://runs/") << "the first provider that claims a URI reads it";

  auto nobody = registry.read_resource("y://other");
  ASSERT_TRUE(nobody.ok());
  EXPECT_FALSE(nobody->has_value());
}

TEST(McpRegistry, ProviderErrorsPassThrough) {
  Registry registry;
  ASSERT_TRUE(registry.add_provider(std::make_shared<FailingProvider>()).ok());
  auto listed = registry.list_resources();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().message, "trace DB unreadable");
  EXPECT_FALSE(registry.read_resource("x://a").ok());
}

}  // namespace
}  // namespace ingero::mcp
