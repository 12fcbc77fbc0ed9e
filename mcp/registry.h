// SPDX-License-Identifier: Apache-2.0
// What an MCP server offers: tools, prompts and resources, each described
// once and looked up by name. No JSON-RPC here; server.h does the protocol.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ingero::mcp {

// A tool's successful answer: `structured` becomes structuredContent (an
// object conforming to the tool's outputSchema), `text` a short summary.
struct ToolAnswer {
  nlohmann::json structured;
  std::string text;
};

// Runs with arguments already validated against the tool's inputSchema. An
// Error is the tool's own failure (e.g. a run that does not exist): the
// client gets it as an isError result, not a protocol error.
using ToolHandler = std::function<Result<ToolAnswer>(const nlohmann::json& arguments)>;

struct ToolSpec {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;   // a JSON Schema with "type": "object"
  nlohmann::json output_schema;  // the same, or null for a tool without structured output
  ToolHandler handler;
};

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

using PromptArguments = std::map<std::string, std::string>;
// Given the arguments (required ones present, unknown ones refused), the
// text of the single user message.
using PromptRender = std::function<Result<std::string>(const PromptArguments& arguments)>;

struct PromptSpec {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  PromptRender render;
};

struct ResourceEntry {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
};

struct ResourceTemplate {
  std::string uri_template;  // RFC 6570, e.g. "ingero://runs/{run}"
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
};

struct ResourceContents {
  std::string uri;
  std::string mime_type;
  std::string text;
};

// Resources that exist at call time (e.g. one per run in a trace DB).
class ResourceProvider {
 public:
  virtual ~ResourceProvider() = default;
  virtual Result<std::vector<ResourceEntry>> list() const = 0;
  virtual std::vector<ResourceTemplate> templates() const { return {}; }
  // nullopt: the URI is not this provider's; an Error: it is, but reading failed.
  virtual Result<std::optional<ResourceContents>> read(const std::string& uri) const = 0;
};

class Registry {
 public:
  // Each refuses an invalid spec or a name (URI) already taken.
  Status add_tool(ToolSpec tool);
  Status add_prompt(PromptSpec prompt);
  Status add_resource(ResourceEntry entry, std::string text);  // a fixed text
  Status add_provider(std::shared_ptr<const ResourceProvider> provider);

  // In registration order.
  const std::vector<ToolSpec>& tools() const { return tools_; }
  const std::vector<PromptSpec>& prompts() const { return prompts_; }
  const ToolSpec* find_tool(const std::string& name) const;
  const PromptSpec* find_prompt(const std::string& name) const;
  std::vector<std::string> tool_names() const;
  std::vector<std::string> prompt_names() const;

  // Fixed resources first, then each provider in turn; the first to claim a URI reads it.
  Result<std::vector<ResourceEntry>> list_resources() const;
  std::vector<ResourceTemplate> resource_templates() const;
  Result<std::optional<ResourceContents>> read_resource(const std::string& uri) const;

 private:
  struct FixedResource {
    ResourceEntry entry;
    std::string text;
  };

  std::vector<ToolSpec> tools_;
  std::vector<PromptSpec> prompts_;
  std::vector<FixedResource> fixed_;
  std::vector<std::shared_ptr<const ResourceProvider>> providers_;
};

}  // namespace ingero::mcp
