// SPDX-License-Identifier: Apache-2.0
// The MCP result shapes (revision 2025-06-18) built from registry values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "mcp/registry.h"

namespace ingero::mcp::wire {

nlohmann::json tool_entry(const ToolSpec& tool);
nlohmann::json prompt_entry(const PromptSpec& prompt);
nlohmann::json resource_entry(const ResourceEntry& resource);
nlohmann::json template_entry(const ResourceTemplate& resource);

// tools/call results: a text summary plus structuredContent, or the tool's
// own failure as isError with the message and its fix.
nlohmann::json tool_result(const ToolAnswer& answer);
nlohmann::json tool_error_result(const Error& error);

nlohmann::json prompt_result(const PromptSpec& prompt, const std::string& text);
nlohmann::json read_result(const ResourceContents& contents);

// "message" or "message\nfix: hint".
std::string error_text(const Error& error);

}  // namespace ingero::mcp::wire
