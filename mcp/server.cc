// SPDX-License-Identifier: Apache-2.0
#include "mcp/server.h"

#include <algorithm>
#include <istream>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mcp/schema_check.h"
#include "mcp/wire.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

RpcError invalid_params(std::string message, json data = nullptr) {
  return RpcError{rpc_code::kInvalidParams, std::move(message), std::move(data)};
}

// A handler's Error outside tools/call: the caller's input when it says so, else ours.
RpcError rpc_error_from(const Error& error) {
  const int code = error.exit_code == kExitBadInput ? rpc_code::kInvalidParams : rpc_code::kInternalError;
  return RpcError{code, wire::error_text(error), nullptr};
}

std::string known_list(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

// A string member, or nullptr when it is missing or not a string.
const std::string* string_member(const json& params, const char* key) {
  const auto it = params.find(key);
  return it != params.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

enum class LineRead { line, too_long, end };

// The next line of `in` without its newline (the last may lack one). A line longer than `limit` is
// read to its end and dropped as it goes, so that a client cannot make the server hold any size.
LineRead read_line(std::istream& in, std::string& line, size_t limit) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  bool too_long = false;
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      if (too_long) return LineRead::too_long;
      return line.empty() ? LineRead::end : LineRead::line;
    }
    if (c == '\n') return too_long ? LineRead::too_long : LineRead::line;
    if (too_long) continue;
    if (line.size() < limit) {
      line.push_back(static_cast<char>(c));
    } else {
      too_long = true;
      std::string().swap(line);
    }
  }
}

// Every result is one page: a cursor is accepted and nextCursor never sent.
std::optional<RpcError> check_cursor(const json& params, const char* method) {
  const auto cursor = params.find("cursor");
  if (cursor == params.end() || cursor->is_string() || cursor->is_null()) return std::nullopt;
  return invalid_params(fmt::format("{}: 'cursor' must be a string", method));
}

// An optional object member; absent or null gives {}.
std::variant<json, RpcError> object_member(const json& params, const char* key, const char* method) {
  const auto it = params.find(key);
  if (it == params.end() || it->is_null()) return json::object();
  if (!it->is_object()) return invalid_params(fmt::format("{}: '{}' must be an object", method, key));
  return *it;
}

std::optional<RpcError> check_tool_arguments(const ToolSpec& tool, const json& arguments) {
  const auto violation = check_schema(arguments, tool.input_schema);
  if (!violation) return std::nullopt;
  return invalid_params(
      fmt::format("invalid arguments for tool '{}': {}", tool.name, violation->describe("argument", "arguments")),
      json{{"tool", tool.name}, {"path", violation->path}});
}

// Holding tools to their outputSchema here turns a tool bug into a clear
// server error instead of a validation failure inside the client.
std::optional<RpcError> check_tool_output(const ToolSpec& tool, const ToolAnswer& answer) {
  if (tool.output_schema.is_null()) return std::nullopt;
  const auto violation = check_schema(answer.structured, tool.output_schema);
  if (!violation) return std::nullopt;
  return RpcError{rpc_code::kInternalError,
                  fmt::format("tool '{}' returned structuredContent that does not match its outputSchema: {}",
                              tool.name, violation->describe("field", "structuredContent")),
                  nullptr};
}

std::variant<PromptArguments, RpcError> prompt_arguments(const PromptSpec& prompt, const json& given) {
  PromptArguments arguments;
  for (const auto& [key, value] : given.items()) {
    const bool known = std::any_of(prompt.arguments.begin(), prompt.arguments.end(),
                                   [&](const PromptArgument& a) { return a.name == key; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& argument : prompt.arguments) names.push_back(argument.name);
      return invalid_params(fmt::format("prompt '{}': unknown argument '{}'; known: {}", prompt.name, key, known_list(names)));
    }
    if (!value.is_string()) {
      return invalid_params(fmt::format("prompt '{}': argument '{}' must be a string", prompt.name, key));
    }
    arguments[key] = value.get<std::string>();
  }
  for (const auto& argument : prompt.arguments) {
    if (argument.required && arguments.count(argument.name) == 0) {
      return invalid_params(fmt::format("prompt '{}': missing required argument '{}'", prompt.name, argument.name));
    }
  }
  return arguments;
}

// "name version" from clientInfo, for the log; tolerant of what is missing.
std::string client_label(const json& params) {
  const auto info = params.find("clientInfo");
  if (info == params.end() || !info->is_object()) return "an unnamed client";
  const std::string* name = string_member(*info, "name");
  const std::string* version = string_member(*info, "version");
  return fmt::format("{} {}", name ? *name : "?", version ? *version : "?");
}

json capabilities() {
  return json{{"tools", {{"listChanged", false}}},
              {"prompts", {{"listChanged", false}}},
              {"resources", {{"subscribe", false}, {"listChanged", false}}}};
}

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

}  // namespace

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> versions{kLatestProtocolVersion, "2025-03-26", "2024-11-05"};
  return versions;
}

std::string negotiate_protocol_version(const std::string& requested) {
  const auto& supported = supported_protocol_versions();
  const bool known = std::find(supported.begin(), supported.end(), requested) != supported.end();
  return known ? requested : supported.front();
}

Server::Server(ServerInfo info, Registry registry) : info_(std::move(info)), registry_(std::move(registry)) {}

const std::vector<Server::MethodEntry>& Server::methods() {
  static const std::vector<MethodEntry> table{
      {"initialize", &Server::initialize, true},
      {"ping", &Server::ping, true},
      {"tools/list", &Server::list_tools, false},
      {"tools/call", &Server::call_tool, false},
      {"prompts/list", &Server::list_prompts, false},
      {"prompts/get", &Server::get_prompt, false},
      {"resources/list", &Server::list_resources, false},
      {"resources/templates/list", &Server::list_resource_templates, false},
      {"resources/read", &Server::read_resource, false},
  };
  return table;
}

std::optional<json> Server::handle(const std::string& line) {
  // A trailing CR (CRLF senders) or a blank line is framing noise, not a message.
  const std::string text = !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
  if (blank(text)) return std::nullopt;

  auto parsed = parse_message(text);
  if (const auto* bad = std::get_if<BadMessage>(&parsed)) return error_response(bad->id, bad->error);
  const auto& message = std::get<Message>(parsed);
  // Notifications (initialized, cancelled, ...) need nothing from a synchronous
  // server; responses answer requests this server never sends.
  if (message.kind != Message::Kind::request) return std::nullopt;

  auto outcome = dispatch(message);
  if (auto* error = std::get_if<RpcError>(&outcome)) return error_response(message.id, *error);
  return result_response(message.id, std::move(std::get<json>(outcome)));
}

Server::Outcome Server::dispatch(const Message& request) {
  const auto& table = methods();
  const auto entry = std::find_if(table.begin(), table.end(),
                                  [&](const MethodEntry& e) { return request.method == e.name; });
  if (entry == table.end()) {
    return RpcError{rpc_code::kMethodNotFound, fmt::format("method '{}' is not supported", request.method), nullptr};
  }
  if (!initialized_ && !entry->before_initialize) {
    return RpcError{rpc_code::kInvalidRequest,
                    fmt::format("server not initialized: send 'initialize' before '{}'", request.method), nullptr};
  }
  if (!request.params.is_null() && !request.params.is_object()) {
    return invalid_params(fmt::format("{}: 'params' must be an object", request.method));
  }
  static const json kNoParams = json::object();
  const json& params = request.params.is_null() ? kNoParams : request.params;
  try {
    return (this->*(entry->method))(params);
  } catch (const std::exception& e) {
    // A throwing handler is a server bug; the session survives it.
    return RpcError{rpc_code::kInternalError, fmt::format("internal error in '{}': {}", request.method, e.what()), nullptr};
  }
}

Server::Outcome Server::initialize(const json& params) {
  std::string requested;
  if (const auto it = params.find("protocolVersion"); it != params.end()) {
    if (!it->is_string()) {
      return invalid_params(fmt::format("initialize: 'protocolVersion' must be a string such as \"{}\"", kLatestProtocolVersion));
    }
    requested = it->get<std::string>();
  }
  // A missing version is treated like an unknown one: offer the newest and let the client decide.
  protocol_version_ = negotiate_protocol_version(requested);
  initialized_ = true;
  client_ = client_label(params);

  json server_info{{"name", info_.name}, {"version", info_.version}};
  if (!info_.title.empty()) server_info["title"] = info_.title;
  json result{{"protocolVersion", protocol_version_}, {"capabilities", capabilities()}, {"serverInfo", server_info}};
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  return result;
}

Server::Outcome Server::ping(const json&) { return json::object(); }

Server::Outcome Server::list_tools(const json& params) {
  if (auto error = check_cursor(params, "tools/list")) return *error;
  json tools = json::array();
  for (const auto& tool : registry_.tools()) tools.push_back(wire::tool_entry(tool));
  return json{{"tools", std::move(tools)}};
}

Server::Outcome Server::call_tool(const json& params) {
  const std::string* name = string_member(params, "name");
  if (!name) return invalid_params("tools/call: 'name' must be a string");
  const ToolSpec* tool = registry_.find_tool(*name);
  if (!tool) {
    return invalid_params(fmt::format("unknown tool '{}'; known: {}", *name, known_list(registry_.tool_names())));
  }
  auto arguments = object_member(params, "arguments", "tools/call");
  if (auto* error = std::get_if<RpcError>(&arguments)) return *error;
  if (auto error = check_tool_arguments(*tool, std::get<json>(arguments))) return *error;

  auto answer = tool->handler(std::get<json>(arguments));
  if (!answer) return wire::tool_error_result(answer.error());
  if (auto error = check_tool_output(*tool, *answer)) return *error;
  return wire::tool_result(*answer);
}

Server::Outcome Server::list_prompts(const json& params) {
  if (auto error = check_cursor(params, "prompts/list")) return *error;
  json prompts = json::array();
  for (const auto& prompt : registry_.prompts()) prompts.push_back(wire::prompt_entry(prompt));
  return json{{"prompts", std::move(prompts)}};
}

Server::Outcome Server::get_prompt(const json& params) {
  const std::string* name = string_member(params, "name");
  if (!name) return invalid_params("prompts/get: 'name' must be a string");
  const PromptSpec* prompt = registry_.find_prompt(*name);
  if (!prompt) {
    return invalid_params(fmt::format("unknown prompt '{}'; known: {}", *name, known_list(registry_.prompt_names())));
  }
  auto given = object_member(params, "arguments", "prompts/get");
  if (auto* error = std::get_if<RpcError>(&given)) return *error;
  auto arguments = prompt_arguments(*prompt, std::get<json>(given));
  if (auto* error = std::get_if<RpcError>(&arguments)) return *error;

  auto text = prompt->render(std::get<PromptArguments>(arguments));
  if (!text) return rpc_error_from(text.error());
  return wire::prompt_result(*prompt, *text);
}

Server::Outcome Server::list_resources(const json& params) {
  if (auto error = check_cursor(params, "resources/list")) return *error;
  auto listed = registry_.list_resources();
  if (!listed) return rpc_error_from(listed.error());
  json resources = json::array();
  for (const auto& resource : *listed) resources.push_back(wire::resource_entry(resource));
  return json{{"resources", std::move(resources)}};
}

Server::Outcome Server::list_resource_templates(const json& params) {
  if (auto error = check_cursor(params, "resources/templates/list")) return *error;
  json templates = json::array();
  for (const auto& resource : registry_.resource_templates()) templates.push_back(wire::template_entry(resource));
  return json{{"resourceTemplates", std::move(templates)}};
}

Server::Outcome Server::read_resource(const json& params) {
  const std::string* uri = string_member(params, "uri");
  if (!uri) return invalid_params("resources/read: 'uri' must be a string");
  auto read = registry_.read_resource(*uri);
  if (!read) return rpc_error_from(read.error());
  if (!read->has_value()) {
    return RpcError{rpc_code::kResourceNotFound, fmt::format("resource not found: '{}'", *uri), json{{"uri", *uri}}};
  }
  return wire::read_result(**read);
}

int Server::serve(std::istream& in, std::ostream& out, std::ostream& log, const std::function<int()>& stop_signal) {
  log << fmt::format("mcp: {} {} serving on stdio (protocol {})\n", info_.name, info_.version, kLatestProtocolVersion);
  // A signal that arrived during a message (or interrupted the read) ends the session after it.
  const auto stopped = [&]() -> int {
    const int sig = stop_signal ? stop_signal() : 0;
    if (sig != 0) {
      log << fmt::format("mcp: stopping on signal {}\n", sig);
      log.flush();
    }
    return sig;
  };
  std::string line;
  for (;;) {
    if (const int sig = stopped()) return 128 + sig;
    const LineRead read = read_line(in, line, kMaxMessageBytes);
    if (read == LineRead::end) break;
    const bool was_initialized = initialized_;
    const auto response =
        read == LineRead::too_long
            ? std::optional<json>(error_response(
                  nullptr, RpcError{rpc_code::kInvalidRequest,
                                    fmt::format("a message longer than {} MiB (the limit per line) was skipped",
                                                kMaxMessageBytes >> 20),
                                    json{{"max_bytes", kMaxMessageBytes}}}))
            : handle(line);
    if (!was_initialized && initialized_) {
      log << fmt::format("mcp: initialized by {} (protocol {})\n", client_, protocol_version_);
    }
    if (!response) continue;
    if (const auto error = response->find("error"); error != response->end()) {
      log << fmt::format("mcp: error {}: {}\n", error->value("code", 0), error->value("message", ""));
    }
    out << to_line(*response) << '\n';
    out.flush();
    if (!out) {
      log << "mcp: cannot write the response; stopping\n";
      return 1;
    }
  }
  if (const int sig = stopped()) return 128 + sig;
  log << "mcp: end of input; stopping\n";
  log.flush();
  return 0;
}

}  // namespace ingero::mcp
