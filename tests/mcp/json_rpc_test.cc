// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "mcp/json_rpc.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

Message parse_ok(const std::string& line) {
  auto parsed = parse_message(line);
  EXPECT_TRUE(std::holds_alternative<Message>(parsed)) << line;
  return std::holds_alternative<Message>(parsed) ? std::get<Message>(parsed) : Message{};
}

BadMessage parse_bad(const std::string& line) {
  auto parsed = parse_message(line);
  EXPECT_TRUE(std::holds_alternative<BadMessage>(parsed)) << line;
  return std::holds_alternative<BadMessage>(parsed) ? std::get<BadMessage>(parsed) : BadMessage{};
}

TEST(McpJsonRpc, RequestWithIntegerId) {
  const Message m = parse_ok(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
  EXPECT_EQ(m.kind, Message::Kind::request);
  EXPECT_EQ(m.id, 7);
  EXPECT_EQ(m.method, "tools/list");
  EXPECT_EQ(m.params, json({{"cursor", "x"}}));
}

TEST(McpJsonRpc, RequestWithStringIdAndNoParams) {
  const Message m = parse_ok(R"({"jsonrpc":"2.0","id":"a-1","method":"ping"})");
  EXPECT_EQ(m.kind, Message::Kind::request);
  EXPECT_EQ(m.id, "a-1");
  EXPECT_TRUE(m.params.is_null());
}

TEST(McpJsonRpc, NotificationHasNoId) {
  const Message m = parse_ok(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(m.kind, Message::Kind::notification);
  EXPECT_TRUE(m.id.is_null());
}

TEST(McpJsonRpc, ClientResponseIsRecognised) {
  const Message m = parse_ok(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  EXPECT_EQ(m.kind, Message::Kind::response);
}

TEST(McpJsonRpc, MalformedJsonIsAParseErrorWithNullId) {
  for (const char* line : {"{", "not json", R"({"jsonrpc":"2.0","id":1,"method":"ping"} trailing)", ""}) {
    const BadMessage bad = parse_bad(line);
    EXPECT_EQ(bad.error.code, rpc_code::kParseError) << line;
    EXPECT_TRUE(bad.id.is_null()) << line;
    EXPECT_NE(bad.error.message.find("parse error"), std::string::npos);
  }
}

TEST(McpJsonRpc, NestingBeyondTheCapIsAParseError) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const BadMessage bad = parse_bad(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":)" + deep + "}");
  EXPECT_EQ(bad.error.code, rpc_code::kParseError);
  EXPECT_NE(bad.error.message.find("deeper than 256 levels"), std::string::npos) << bad.error.message;
  // Within the cap, params arrive whole.
  const std::string nested = std::string(100, '[') + std::string(100, ']');
  const Message m = parse_ok(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + nested + "}}");
  EXPECT_TRUE(m.params["x"].is_array());
}

TEST(McpJsonRpc, InvalidRequests) {
  const struct {
    const char* line;
    const char* words;
    json id;
  } cases[] = {
      {R"({"id":1,"method":"ping"})", "'jsonrpc' must be \"2.0\"", 1},
      {R"({"jsonrpc":"1.0","id":1,"method":"ping"})", "'jsonrpc' must be \"2.0\"", 1},
      {R"({"jsonrpc":2.0,"id":1,"method":"ping"})", "'jsonrpc' must be \"2.0\"", 1},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", "'method' must be a string", 1},
      {R"({"jsonrpc":"2.0","id":1})", "'method' is missing", 1},
      {R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})", "'params' must be an object", 1},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", "'id' must be a string or an integer", nullptr},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", "'id' must be a string or an integer", nullptr},
      {R"({"jsonrpc":"2.0","id":{},"method":"ping"})", "'id' must be a string or an integer", nullptr},
      {R"("ping")", "must be a JSON object", nullptr},
      {R"(42)", "must be a JSON object", nullptr},
  };
  for (const auto& c : cases) {
    const BadMessage bad = parse_bad(c.line);
    EXPECT_EQ(bad.error.code, rpc_code::kInvalidRequest) << c.line;
    EXPECT_EQ(bad.id, c.id) << c.line;
    EXPECT_NE(bad.error.message.find(c.words), std::string::npos) << c.line << " -> " << bad.error.message;
  }
}

TEST(McpJsonRpc, BatchesAreRefused) {
  const BadMessage bad = parse_bad(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  EXPECT_EQ(bad.error.code, rpc_code::kInvalidRequest);
  EXPECT_TRUE(bad.id.is_null());
  EXPECT_NE(bad.error.message.find("batch"), std::string::npos);
}

TEST(McpJsonRpc, ResponsesAreSingleLines) {
  const json result = result_response(1, json{{"text", "two\nlines"}});
  EXPECT_EQ(result, json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"text":"two\nlines"}})"));
  const std::string line = to_line(result);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(line), result);
}

TEST(McpJsonRpc, ErrorResponseCarriesDataOnlyWhenGiven) {
  const json plain = error_response("x", RpcError{rpc_code::kMethodNotFound, "no such method", nullptr});
  EXPECT_EQ(plain, json::parse(R"({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no such method"}})"));
  const json with_data = error_response(nullptr, RpcError{rpc_code::kResourceNotFound, "gone", json{{"uri", "u"}}});
  EXPECT_EQ(with_data["error"]["data"], json({{"uri", "u"}}));
  EXPECT_TRUE(with_data["id"].is_null());
}

TEST(McpJsonRpc, InvalidUtf8InOutputIsReplacedNotFatal) {
  const json response = result_response(1, json{{"text", std::string("bad \xff byte")}});
  const std::string line = to_line(response);
  EXPECT_NE(line.find("bad "), std::string::npos);
  EXPECT_NO_THROW(json::parse(line));
}

}  // namespace
}  // namespace ingero::mcp
