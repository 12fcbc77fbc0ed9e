// SPDX-License-Identifier: Apache-2.0
// JSON-RPC 2.0 framing for the MCP stdio transport: one message per line in,
// one response object out. Knows nothing about MCP methods.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace ingero::mcp {

// JSON-RPC 2.0 error codes, plus the one MCP defines for resources.
namespace rpc_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
}  // namespace rpc_code

struct RpcError {
  int code = rpc_code::kInternalError;
  std::string message;
  nlohmann::json data;  // omitted from the response when null
};

// One well-formed incoming message.
struct Message {
  enum class Kind { request, notification, response };
  Kind kind = Kind::request;
  nlohmann::json id;      // string or integer for requests; null otherwise
  std::string method;     // empty for responses
  nlohmann::json params;  // object or array as sent; null when absent
};

// A line that is not a usable message, answered with `error` under `id`
// (null when the id could not be read).
struct BadMessage {
  nlohmann::json id;
  RpcError error;
};

// Parses one line (without its newline). Batches are rejected: MCP
// 2025-06-18 removed JSON-RPC batching.
std::variant<Message, BadMessage> parse_message(std::string_view line);

nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result);
nlohmann::json error_response(const nlohmann::json& id, const RpcError& error);

// Serialises one response as a single line (no embedded newline); invalid
// UTF-8 coming from tool output is replaced rather than aborting the server.
std::string to_line(const nlohmann::json& message);

}  // namespace ingero::mcp
