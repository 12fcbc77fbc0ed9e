// SPDX-License-Identifier: Apache-2.0
// An MCP server over stdio (protocol revision 2025-06-18, with 2025-03-26 and
// 2024-11-05 accepted): lifecycle, method dispatch and parameter checks over
// what a Registry offers.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/json_rpc.h"
#include "mcp/registry.h"

namespace ingero::mcp {

inline constexpr const char* kLatestProtocolVersion = "2025-06-18";
// The longest message (one line) read; a longer one is skipped unbuffered and answered with an error.
inline constexpr size_t kMaxMessageBytes = 16u << 20;

// Newest first.
const std::vector<std::string>& supported_protocol_versions();

// The client's requested revision when supported, else the newest supported.
std::string negotiate_protocol_version(const std::string& requested);

struct ServerInfo {
  std::string name;
  std::string title;
  std::string version;
  std::string instructions;  // optional guidance for the client's model
};

class Server {
 public:
  Server(ServerInfo info, Registry registry);

  // One line in (without its newline), the response out; nullopt for
  // notifications, client responses and blank lines. No I/O.
  std::optional<nlohmann::json> handle(const std::string& line);

  // Answers each line of `in` on `out`, one line per response, flushed (a line over
  // kMaxMessageBytes gets an Invalid Request error naming the limit, with a null id);
  // diagnostics go to `log` only. stop_signal (when given) is asked before each read and
  // after each message: a signal number stops the session there. Returns 0 at end of input,
  // 1 when `out` fails, 128 + the signal when stopped by one.
  int serve(std::istream& in, std::ostream& out, std::ostream& log, const std::function<int()>& stop_signal = {});

  bool initialized() const { return initialized_; }
  const std::string& protocol_version() const { return protocol_version_; }  // empty before initialize

 private:
  using Outcome = std::variant<nlohmann::json, RpcError>;
  using Method = Outcome (Server::*)(const nlohmann::json& params);
  struct MethodEntry {
    const char* name;
    Method method;
    bool before_initialize;  // allowed before the initialize request
  };
  static const std::vector<MethodEntry>& methods();

  Outcome dispatch(const Message& request);
  Outcome initialize(const nlohmann::json& params);
  Outcome ping(const nlohmann::json& params);
  Outcome list_tools(const nlohmann::json& params);
  Outcome call_tool(const nlohmann::json& params);
  Outcome list_prompts(const nlohmann::json& params);
  Outcome get_prompt(const nlohmann::json& params);
  Outcome list_resources(const nlohmann::json& params);
  Outcome list_resource_templates(const nlohmann::json& params);
  Outcome read_resource(const nlohmann::json& params);

  ServerInfo info_;
  Registry registry_;
  bool initialized_ = false;
  std::string protocol_version_;
  std::string client_;  // "name version" from clientInfo, for the log
};

}  // namespace ingero::mcp
