// SPDX-License-Identifier: Apache-2.0
#include "mcp/json_rpc.h"

#include <fmt/format.h>

#include "common/json_text.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

BadMessage invalid_request(json id, std::string message) {
  return BadMessage{std::move(id), RpcError{rpc_code::kInvalidRequest, std::move(message), nullptr}};
}

// MCP narrows JSON-RPC ids to strings and integers (no null, no fractions).
bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

// Takes the parsed object apart: its params are moved into the message, never copied.
std::variant<Message, BadMessage> parse_object(json&& object) {
  const auto id_it = object.find("id");
  const bool has_id = id_it != object.end();
  if (has_id && !valid_id(*id_it)) {
    return invalid_request(nullptr, "'id' must be a string or an integer");
  }
  const json id = has_id ? *id_it : json(nullptr);  // a string or an integer: flat

  const auto version = object.find("jsonrpc");
  if (version == object.end() || *version != "2.0") {
    return invalid_request(id, "'jsonrpc' must be \"2.0\"");
  }

  const auto method = object.find("method");
  if (method == object.end()) {
    // A reply to a server-to-client request; this server sends none, so it is dropped.
    if (has_id && (object.contains("result") || object.contains("error"))) {
      return Message{Message::Kind::response, id, {}, nullptr};
    }
    return invalid_request(id, "'method' is missing");
  }
  if (!method->is_string()) return invalid_request(id, "'method' must be a string");

  const auto params = object.find("params");
  if (params != object.end() && !params->is_object() && !params->is_array()) {
    return invalid_request(id, "'params' must be an object");
  }

  Message message;
  message.kind = has_id ? Message::Kind::request : Message::Kind::notification;
  message.id = id;
  message.method = method->get<std::string>();
  if (params != object.end()) message.params = std::move(*params);
  return message;
}

}  // namespace

std::variant<Message, BadMessage> parse_message(std::string_view line) {
  // Capped nesting: the value is walked recursively later (schema checks, dumps).
  auto parsed = parse_json(line);
  if (!parsed) {
    return BadMessage{nullptr,
                      RpcError{rpc_code::kParseError, fmt::format("parse error: {}", parsed.error().message), nullptr}};
  }
  if (parsed->is_array()) {
    return invalid_request(nullptr, "batches (JSON arrays) are not supported: send one message per line");
  }
  if (!parsed->is_object()) return invalid_request(nullptr, "a message must be a JSON object");
  return parse_object(std::move(*parsed));
}

json result_response(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_response(const json& id, const RpcError& error) {
  json body{{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) body["data"] = error.data;
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(body)}};
}

std::string to_line(const json& message) {
  // dump() without indentation escapes control characters, so the line has no newline.
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ingero::mcp
