// SPDX-License-Identifier: Apache-2.0
#include "mcp/registry.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace ingero::mcp {
namespace {

using nlohmann::json;

// The character set later MCP revisions require of tool names; clients
// already choke on others (spaces, slashes) when mapping tools to functions.
bool valid_tool_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

bool object_schema(const json& schema) {
  return schema.is_object() && schema.value("type", json()) == "object";
}

Status check_tool(const ToolSpec& tool) {
  if (!valid_tool_name(tool.name)) {
    return Error::bad_input(fmt::format("tool name '{}' is not valid", tool.name),
                            "use 1 to 128 characters from A-Z a-z 0-9 _ - .");
  }
  if (!object_schema(tool.input_schema)) {
    return Error::bad_input(fmt::format("tool '{}': inputSchema must be a JSON Schema with \"type\": \"object\"", tool.name));
  }
  if (!tool.output_schema.is_null() && !object_schema(tool.output_schema)) {
    return Error::bad_input(fmt::format("tool '{}': outputSchema must be null or a JSON Schema with \"type\": \"object\"", tool.name));
  }
  if (!tool.handler) return Error::bad_input(fmt::format("tool '{}' has no handler", tool.name));
  return {};
}

Status check_prompt(const PromptSpec& prompt) {
  if (prompt.name.empty()) return Error::bad_input("a prompt needs a name");
  if (!prompt.render) return Error::bad_input(fmt::format("prompt '{}' has no render function", prompt.name));
  std::set<std::string> seen;
  for (const auto& argument : prompt.arguments) {
    if (argument.name.empty() || !seen.insert(argument.name).second) {
      return Error::bad_input(fmt::format("prompt '{}': argument name '{}' is empty or repeated", prompt.name, argument.name));
    }
  }
  return {};
}

template <class Spec>
const Spec* find_named(const std::vector<Spec>& specs, const std::string& name) {
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const Spec& s) { return s.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

template <class Spec>
std::vector<std::string> names(const std::vector<Spec>& specs) {
  std::vector<std::string> out;
  for (const auto& spec : specs) out.push_back(spec.name);
  return out;
}

Error duplicate(const char* kind, const std::string& name) {
  return Error::bad_input(fmt::format("{} '{}' is already registered", kind, name));
}

}  // namespace

Status Registry::add_tool(ToolSpec tool) {
  if (auto status = check_tool(tool); !status) return status;
  if (find_tool(tool.name)) return duplicate("tool", tool.name);
  tools_.push_back(std::move(tool));
  return {};
}

Status Registry::add_prompt(PromptSpec prompt) {
  if (auto status = check_prompt(prompt); !status) return status;
  if (find_prompt(prompt.name)) return duplicate("prompt", prompt.name);
  prompts_.push_back(std::move(prompt));
  return {};
}

Status Registry::add_resource(ResourceEntry entry, std::string text) {
  if (entry.uri.empty() || entry.name.empty()) return Error::bad_input("a resource needs a URI and a name");
  const bool taken = std::any_of(fixed_.begin(), fixed_.end(),
                                 [&](const FixedResource& r) { return r.entry.uri == entry.uri; });
  if (taken) return duplicate("resource", entry.uri);
  fixed_.push_back(FixedResource{std::move(entry), std::move(text)});
  return {};
}

Status Registry::add_provider(std::shared_ptr<const ResourceProvider> provider) {
  if (!provider) return Error::bad_input("a resource provider must not be null");
  providers_.push_back(std::move(provider));
  return {};
}

const ToolSpec* Registry::find_tool(const std::string& name) const { return find_named(tools_, name); }
const PromptSpec* Registry::find_prompt(const std::string& name) const { return find_named(prompts_, name); }
std::vector<std::string> Registry::tool_names() const { return names(tools_); }
std::vector<std::string> Registry::prompt_names() const { return names(prompts_); }

Result<std::vector<ResourceEntry>> Registry::list_resources() const {
  std::vector<ResourceEntry> out;
  for (const auto& fixed : fixed_) out.push_back(fixed.entry);
  for (const auto& provider : providers_) {
    auto listed = provider->list();
    if (!listed) return listed.error();
    out.insert(out.end(), listed->begin(), listed->end());
  }
  return out;
}

std::vector<ResourceTemplate> Registry::resource_templates() const {
  std::vector<ResourceTemplate> out;
  for (const auto& provider : providers_) {
    auto templates = provider->templates();
    out.insert(out.end(), templates.begin(), templates.end());
  }
  return out;
}

Result<std::optional<ResourceContents>> Registry::read_resource(const std::string& uri) const {
  for (const auto& fixed : fixed_) {
    if (fixed.entry.uri == uri) return std::optional<ResourceContents>(ResourceContents{uri, fixed.entry.mime_type, fixed.text});
  }
  for (const auto& provider : providers_) {
    auto read = provider->read(uri);
    if (!read || read->has_value()) return read;
  }
  return std::optional<ResourceContents>();
}

}  // namespace ingero::mcp
