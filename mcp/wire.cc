// SPDX-License-Identifier: Apache-2.0
#include "mcp/wire.h"

namespace ingero::mcp::wire {
namespace {

using nlohmann::json;

// Optional string fields are left out when empty rather than sent as "".
void put_optional(json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

json text_content(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

}  // namespace

json tool_entry(const ToolSpec& tool) {
  json entry{{"name", tool.name}, {"inputSchema", tool.input_schema}};
  put_optional(entry, "title", tool.title);
  put_optional(entry, "description", tool.description);
  if (!tool.output_schema.is_null()) entry["outputSchema"] = tool.output_schema;
  return entry;
}

json prompt_entry(const PromptSpec& prompt) {
  json arguments = json::array();
  for (const auto& argument : prompt.arguments) {
    json item{{"name", argument.name}, {"required", argument.required}};
    put_optional(item, "description", argument.description);
    arguments.push_back(std::move(item));
  }
  json entry{{"name", prompt.name}, {"arguments", std::move(arguments)}};
  put_optional(entry, "title", prompt.title);
  put_optional(entry, "description", prompt.description);
  return entry;
}

json resource_entry(const ResourceEntry& resource) {
  json entry{{"uri", resource.uri}, {"name", resource.name}};
  put_optional(entry, "title", resource.title);
  put_optional(entry, "description", resource.description);
  put_optional(entry, "mimeType", resource.mime_type);
  return entry;
}

json template_entry(const ResourceTemplate& resource) {
  json entry{{"uriTemplate", resource.uri_template}, {"name", resource.name}};
  put_optional(entry, "title", resource.title);
  put_optional(entry, "description", resource.description);
  put_optional(entry, "mimeType", resource.mime_type);
  return entry;
}

json tool_result(const ToolAnswer& answer) {
  json result{{"content", json::array({text_content(answer.text)})}, {"isError", false}};
  if (answer.structured.is_object()) result["structuredContent"] = answer.structured;
  return result;
}

json tool_error_result(const Error& error) {
  // No structuredContent: it would not match the outputSchema, and clients skip validation on isError.
  return json{{"content", json::array({text_content(error_text(error))})}, {"isError", true}};
}

json prompt_result(const PromptSpec& prompt, const std::string& text) {
  json message{{"role", "user"}, {"content", text_content(text)}};
  json result{{"messages", json::array({std::move(message)})}};
  put_optional(result, "description", prompt.description);
  return result;
}

json read_result(const ResourceContents& contents) {
  json item{{"uri", contents.uri}, {"text", contents.text}};
  put_optional(item, "mimeType", contents.mime_type);
  return json{{"contents", json::array({std::move(item)})}};
}

std::string error_text(const Error& error) {
  if (error.hint.empty()) return error.message;
  return error.message + "\nfix: " + error.hint;
}

}  // namespace ingero::mcp::wire
