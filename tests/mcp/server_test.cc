// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <sstream>

#include "mcp/schema_check.h"
#include "mcp/server.h"
#include "tests/mcp/demo_registry.h"

namespace ingero::mcp {
namespace {

using nlohmann::json;

std::string request_line(const json& id, const std::string& method, const json& params = nullptr) {
  json message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = params;
  return message.dump();
}

std::string notification_line(const std::string& method) {
  return json{{"jsonrpc", "2.0"}, {"method", method}}.dump();
}

json initialize_params(const json& version = "2025-06-18") {
  json params{{"capabilities", json::object()}, {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}};
  if (!version.is_null()) params["protocolVersion"] = version;
  return params;
}

class McpServerTest : public ::testing::Test {
 protected:
  McpServerTest() : server_(demo::server_info(), demo::make_registry()) {}

  // The whole response to one request; fails the test when there is none.
  json send(const std::string& line) {
    auto response = server_.handle(line);
    EXPECT_TRUE(response.has_value()) << line;
    return response.value_or(json());
  }
  json request(const std::string& method, const json& params = nullptr) {
    const json response = send(request_line(++id_, method, params));
    EXPECT_EQ(response["jsonrpc"], "2.0");
    EXPECT_EQ(response["id"], id_);
    return response;
  }
  json result(const std::string& method, const json& params = nullptr) {
    const json response = request(method, params);
    EXPECT_TRUE(response.contains("result")) << response.dump();
    return response.value("result", json());
  }
  // The error of a request that must fail with `code`, its message holding `words`.
  json error(const std::string& method, const json& params, int code, const std::string& words) {
    const json response = request(method, params);
    EXPECT_TRUE(response.contains("error")) << response.dump();
    const json error = response.value("error", json::object());
    EXPECT_EQ(error.value("code", 0), code) << response.dump();
    EXPECT_NE(error.value("message", "").find(words), std::string::npos) << error.value("message", "");
    return error;
  }
  void initialize() { result("initialize", initialize_params()); }
  json call(const std::string& tool, const json& arguments) {
    return result("tools/call", json{{"name", tool}, {"arguments", arguments}});
  }

  Server server_;
  int id_ = 0;
};

// --- negotiation and lifecycle ---

TEST_F(McpServerTest, InitializeAnswersTheRequestedKnownVersion) {
  for (const char* version : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    Server server(demo::server_info(), demo::make_registry());
    const auto response = server.handle(request_line(1, "initialize", initialize_params(version)));
    ASSERT_TRUE(response);
    EXPECT_EQ((*response)["result"]["protocolVersion"], version);
    EXPECT_EQ(server.protocol_version(), version);
  }
}

TEST_F(McpServerTest, InitializeOffersTheLatestForAnUnknownOrMissingVersion) {
  EXPECT_EQ(result("initialize", initialize_params("2099-01-01"))["protocolVersion"], "2025-06-18");
  EXPECT_EQ(result("initialize", initialize_params(nullptr))["protocolVersion"], "2025-06-18");
  error("initialize", initialize_params(20250618), rpc_code::kInvalidParams, "'protocolVersion' must be a string");
}

TEST_F(McpServerTest, InitializeResultShape) {
  const json r = result("initialize", initialize_params());
  EXPECT_EQ(r["capabilities"], json::parse(R"({"tools":{"listChanged":false},"prompts":{"listChanged":false},
                                                "resources":{"subscribe":false,"listChanged":false}})"));
  EXPECT_EQ(r["serverInfo"]["name"], "ingero-bench-mcp-demo");
  EXPECT_EQ(r["serverInfo"]["title"], "ingero-bench MCP demo");
  EXPECT_EQ(r["serverInfo"]["version"], "0.1.0");
  EXPECT_TRUE(r["instructions"].is_string());
  EXPECT_TRUE(server_.initialized());
}

TEST_F(McpServerTest, RequestsBeforeInitializeAreRefusedExceptPing) {
  EXPECT_FALSE(server_.initialized());
  for (const char* method : {"tools/list", "tools/call", "prompts/list", "resources/read"}) {
    error(method, json::object(), rpc_code::kInvalidRequest, "server not initialized");
  }
  EXPECT_EQ(result("ping"), json::object());
  initialize();
  EXPECT_EQ(result("tools/list")["tools"].size(), 3u);
}

TEST_F(McpServerTest, NotificationsGetNoResponse) {
  for (const char* method : {"notifications/initialized", "notifications/cancelled", "notifications/whatever",
                             "tools/list"}) {
    EXPECT_FALSE(server_.handle(notification_line(method))) << method;
  }
  EXPECT_FALSE(server_.handle(R"({"jsonrpc":"2.0","id":9,"result":{}})")) << "a client's response is not answered";
  EXPECT_FALSE(server_.handle("")) << "blank lines are framing noise";
  EXPECT_FALSE(server_.handle("  \r"));
}

TEST_F(McpServerTest, PingReturnsEmptyObject) {
  initialize();
  EXPECT_EQ(result("ping"), json::object());
}

// --- protocol errors, each followed by a working request ---

TEST_F(McpServerTest, MalformedJsonThenKeepsServing) {
  const json response = send("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
  EXPECT_EQ(response["error"]["code"], rpc_code::kParseError);
  EXPECT_TRUE(response["id"].is_null());
  EXPECT_EQ(result("ping"), json::object());
}

TEST_F(McpServerTest, InvalidUtf8IsAParseErrorAndTheAnswerStaysValidJson) {
  const auto response = server_.handle(std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}"));
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["error"]["code"], rpc_code::kParseError);
  EXPECT_NO_THROW(json::parse(to_line(*response)));
}

TEST_F(McpServerTest, InvalidRequestKeepsItsIdWhenReadable) {
  const json response = send(R"({"jsonrpc":"1.0","id":"abc","method":"ping"})");
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidRequest);
  EXPECT_EQ(response["id"], "abc");
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":1,"method":7})")["error"]["code"], rpc_code::kInvalidRequest);
  EXPECT_EQ(result("ping"), json::object());
}

TEST_F(McpServerTest, BatchIsInvalidRequest) {
  initialize();
  const json response = send("[" + request_line(1, "ping") + "," + request_line(2, "ping") + "]");
  EXPECT_EQ(response["error"]["code"], rpc_code::kInvalidRequest);
  EXPECT_TRUE(response["id"].is_null());
  EXPECT_EQ(result("ping"), json::object());
}

TEST_F(McpServerTest, UnknownMethod) {
  error("resources/subscribe", nullptr, rpc_code::kMethodNotFound, "method 'resources/subscribe' is not supported");
  initialize();
  error("tools/destroy", json::object(), rpc_code::kMethodNotFound, "'tools/destroy'");
  EXPECT_EQ(result("ping"), json::object());
}

TEST_F(McpServerTest, ParamsMustBeAnObject) {
  initialize();
  error("tools/list", json::array({1}), rpc_code::kInvalidParams, "'params' must be an object");
}

// --- tools ---

TEST_F(McpServerTest, ToolsListEntries) {
  initialize();
  const json tools = result("tools/list", json{{"cursor", "anything"}});
  ASSERT_FALSE(tools.contains("nextCursor"));
  ASSERT_EQ(tools["tools"].size(), 3u);
  std::vector<std::string> names;
  for (const json& tool : tools["tools"]) {
    names.push_back(tool["name"]);
    EXPECT_TRUE(tool["title"].is_string());
    EXPECT_TRUE(tool["description"].is_string());
    EXPECT_EQ(tool["inputSchema"]["type"], "object");
    EXPECT_EQ(tool["outputSchema"]["type"], "object");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"add", "lookup_run", "echo"}));
  error("tools/list", json{{"cursor", 5}}, rpc_code::kInvalidParams, "'cursor' must be a string");
}

TEST_F(McpServerTest, ToolCallHappyPath) {
  initialize();
  const json r = call("add", json{{"a", 2}, {"b", 40}});
  EXPECT_EQ(r["isError"], false);
  EXPECT_EQ(r["structuredContent"], json({{"sum", 42}}));
  ASSERT_EQ(r["content"].size(), 1u);
  EXPECT_EQ(r["content"][0]["type"], "text");
  EXPECT_EQ(r["content"][0]["text"], "2 + 40 = 42");
}

TEST_F(McpServerTest, EveryDemoToolAnswersWithinItsOutputSchema) {
  initialize();
  const json schemas = result("tools/list")["tools"];
  const std::map<std::string, json> arguments{
      {"add", {{"a", -1}, {"b", 1}}},
      {"lookup_run", {{"run", 2}, {"verbose", true}}},
      {"echo", {{"text", "hi"}, {"times", 2}, {"style", "shout"}}},
  };
  for (const json& tool : schemas) {
    const json r = call(tool["name"], arguments.at(tool["name"]));
    EXPECT_EQ(r["isError"], false) << tool["name"];
    const auto violation = check_schema(r["structuredContent"], tool["outputSchema"]);
    EXPECT_FALSE(violation) << tool["name"] << ": " << violation->describe("field", "structuredContent");
  }
  EXPECT_EQ(call("echo", json{{"text", "hi"}, {"times", 2}, {"style", "shout"}})["structuredContent"]["text"], "HI HI");
  EXPECT_TRUE(call("lookup_run", json{{"run", 1}})["structuredContent"]["note"].is_null());
}

TEST_F(McpServerTest, ArgumentsFailingTheInputSchemaNameTheArgument) {
  initialize();
  const json e = error("tools/call", json{{"name", "lookup_run"}, {"arguments", {{"run", "7"}}}},
                       rpc_code::kInvalidParams, "argument 'run' must be an integer");
  EXPECT_NE(e["message"].get<std::string>().find("tool 'lookup_run'"), std::string::npos);
  EXPECT_EQ(e["data"]["path"], "run");
  error("tools/call", json{{"name", "lookup_run"}, {"arguments", json::object()}}, rpc_code::kInvalidParams,
        "argument 'run' is required");
  error("tools/call", json{{"name", "lookup_run"}, {"arguments", {{"run", 1}, {"ruin", 2}}}},
        rpc_code::kInvalidParams, "argument 'ruin' is not allowed (known: run, verbose)");
  error("tools/call", json{{"name", "lookup_run"}, {"arguments", {{"run", 0}}}}, rpc_code::kInvalidParams,
        "argument 'run' must be >= 1");
  error("tools/call", json{{"name", "echo"}, {"arguments", {{"text", "x"}, {"times", 9}}}}, rpc_code::kInvalidParams,
        "argument 'times' must be <= 3");
  error("tools/call", json{{"name", "echo"}, {"arguments", {{"text", "x"}, {"style", "whisper"}}}},
        rpc_code::kInvalidParams, R"(argument 'style' must be one of "plain", "shout")");
  error("tools/call", json{{"name", "add"}, {"arguments", json::array({1, 2})}}, rpc_code::kInvalidParams,
        "'arguments' must be an object");
  // Missing arguments are {}: the schema then names what is required.
  error("tools/call", json{{"name", "add"}}, rpc_code::kInvalidParams, "argument 'a' is required");
  EXPECT_EQ(call("add", json{{"a", 1}, {"b", 1}})["structuredContent"]["sum"], 2);
}

TEST_F(McpServerTest, UnknownOrMissingToolName) {
  initialize();
  error("tools/call", json{{"name", "x"}}, rpc_code::kInvalidParams, "unknown tool 'x'; known: add, lookup_run, echo");
  error("tools/call", json{{"arguments", json::object()}}, rpc_code::kInvalidParams, "'name' must be a string");
}

TEST_F(McpServerTest, HandlerErrorIsAnIsErrorResult) {
  initialize();
  const json r = call("lookup_run", json{{"run", 99}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_FALSE(r.contains("structuredContent"));
  EXPECT_EQ(r["content"][0]["type"], "text");
  EXPECT_EQ(r["content"][0]["text"], "run 99 does not exist in the trace\nfix: pick one of the runs 1, 2, 3");
  EXPECT_EQ(result("ping"), json::object());
}

Server server_with_tool(ToolHandler handler, json output_schema = json{{"type", "object"}}) {
  Registry registry;
  ToolSpec tool{"t", "", "", json{{"type", "object"}}, std::move(output_schema), std::move(handler)};
  EXPECT_TRUE(registry.add_tool(std::move(tool)).ok());
  Server server(ServerInfo{"s", "", "1", ""}, std::move(registry));
  EXPECT_TRUE(server.handle(request_line(0, "initialize", initialize_params())));
  return server;
}

json call_t(Server& server) {
  return server.handle(request_line(1, "tools/call", json{{"name", "t"}})).value_or(json());
}

TEST(McpServer, ThrowingHandlerIsAnInternalErrorAndTheServerSurvives) {
  Server server = server_with_tool([](const json&) -> Result<ToolAnswer> { throw std::runtime_error("boom"); });
  const json response = call_t(server);
  EXPECT_EQ(response["error"]["code"], rpc_code::kInternalError);
  EXPECT_NE(response["error"]["message"].get<std::string>().find("boom"), std::string::npos);
  EXPECT_TRUE(server.handle(request_line(2, "ping"))->contains("result"));
}

TEST(McpServer, StructuredContentOutsideTheOutputSchemaIsAnInternalError) {
  Server server = server_with_tool([](const json&) -> Result<ToolAnswer> { return ToolAnswer{json{{"n", "x"}}, "n"}; },
                                   json::parse(R"({"type":"object","properties":{"n":{"type":"integer"}}})"));
  const json response = call_t(server);
  EXPECT_EQ(response["error"]["code"], rpc_code::kInternalError);
  EXPECT_NE(response["error"]["message"].get<std::string>().find("field 'n' must be an integer"), std::string::npos);
}

TEST(McpServer, ToolWithoutOutputSchemaMayOmitStructuredContent) {
  Server server = server_with_tool([](const json&) -> Result<ToolAnswer> { return ToolAnswer{nullptr, "done"}; },
                                   nullptr);
  const json response = call_t(server);
  EXPECT_EQ(response["result"]["content"][0]["text"], "done");
  EXPECT_FALSE(response["result"].contains("structuredContent"));
  const json listed = *server.handle(request_line(2, "tools/list"));
  EXPECT_FALSE(listed["result"]["tools"][0].contains("outputSchema"));
}

// --- prompts ---

TEST_F(McpServerTest, PromptsListEntries) {
  initialize();
  const json prompts = result("prompts/list")["prompts"];
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0]["name"], "explain_run");
  EXPECT_EQ(prompts[0]["title"], "Explain a run");
  EXPECT_TRUE(prompts[0]["description"].is_string());
  EXPECT_EQ(prompts[0]["arguments"], json::parse(R"([
    {"name":"run","description":"run id","required":true},
    {"name":"focus","description":"what to look at first, e.g. 'workers'","required":false}])"));
}

TEST_F(McpServerTest, PromptsGetRendersOneUserMessage) {
  initialize();
  const json r = result("prompts/get", json{{"name", "explain_run"}, {"arguments", {{"run", "2"}, {"focus", "workers"}}}});
  EXPECT_EQ(r["description"], "Asks where the time of one run went.");
  EXPECT_EQ(r["messages"], json::parse(R"([{"role":"user","content":{"type":"text",
    "text":"Explain where the time of run 2 went. Look at workers first."}}])"));
  const json without_optional = result("prompts/get", json{{"name", "explain_run"}, {"arguments", {{"run", "1"}}}});
  EXPECT_EQ(without_optional["messages"][0]["content"]["text"], "Explain where the time of run 1 went.");
}

TEST_F(McpServerTest, PromptsGetErrors) {
  initialize();
  error("prompts/get", json{{"name", "explain_run"}}, rpc_code::kInvalidParams,
        "prompt 'explain_run': missing required argument 'run'");
  error("prompts/get", json{{"name", "explain_run"}, {"arguments", {{"run", 2}}}}, rpc_code::kInvalidParams,
        "argument 'run' must be a string");
  error("prompts/get", json{{"name", "explain_run"}, {"arguments", {{"run", "1"}, {"colour", "red"}}}},
        rpc_code::kInvalidParams, "unknown argument 'colour'; known: run, focus");
  error("prompts/get", json{{"name", "nope"}}, rpc_code::kInvalidParams, "unknown prompt 'nope'; known: explain_run");
  error("prompts/get", json::object(), rpc_code::kInvalidParams, "'name' must be a string");
  // The render function's own Error, with its fix.
  error("prompts/get", json{{"name", "explain_run"}, {"arguments", {{"run", "two"}}}}, rpc_code::kInvalidParams,
        "run 'two' is not a run id\nfix: pass a run id such as 1");
  EXPECT_EQ(result("ping"), json::object());
}

// --- resources ---

TEST_F(McpServerTest, ResourcesListFixedAndDynamic) {
  initialize();
  const json resources = result("resources/list", json{{"cursor", ""}})["resources"];
  ASSERT_EQ(resources.size(), 4u);
  EXPECT_EQ(resources[0], json::parse(R"({"uri":"ingero://demo/readme","name":"readme","title":"Demo readme",
    "description":"What this demo server serves","mimeType":"text/markdown"})"));
  EXPECT_EQ(resources[1]["uri"], "ingero://demo/runs/1");
  EXPECT_EQ(resources[3]["mimeType"], "application/json");

  const json templates = result("resources/templates/list")["resourceTemplates"];
  EXPECT_EQ(templates, json::parse(R"([{"uriTemplate":"ingero://demo/runs/{run}","name":"run","title":"A run",
    "description":"One run by id","mimeType":"application/json"}])"));
}

TEST_F(McpServerTest, ResourcesRead) {
  initialize();
  const json readme = result("resources/read", json{{"uri", demo::kReadmeUri}});
  ASSERT_EQ(readme["contents"].size(), 1u);
  EXPECT_EQ(readme["contents"][0]["uri"], demo::kReadmeUri);
  EXPECT_EQ(readme["contents"][0]["mimeType"], "text/markdown");
  EXPECT_EQ(readme["contents"][0]["text"].get<std::string>().rfind("# Demo", 0), 0u);

  const json run = result("resources/read", json{{"uri", "ingero://demo/runs/3"}});
  EXPECT_EQ(json::parse(run["contents"][0]["text"].get<std::string>())["name"], "loader w=8");
}

TEST_F(McpServerTest, UnknownResourceIsResourceNotFound) {
  initialize();
  for (const char* uri : {"ingero://demo/runs/42", "file:///etc/passwd"}) {
    const json e = error("resources/read", json{{"uri", uri}}, rpc_code::kResourceNotFound, "resource not found");
    EXPECT_EQ(e["data"]["uri"], uri);
  }
  error("resources/read", json::object(), rpc_code::kInvalidParams, "'uri' must be a string");
  EXPECT_EQ(result("ping"), json::object());
}

class BrokenProvider : public ResourceProvider {
 public:
  Result<std::vector<ResourceEntry>> list() const override {
    return Error::failure("cannot open trace.db", "check the --db path");
  }
  Result<std::optional<ResourceContents>> read(const std::string& uri) const override {
    return Error::bad_input("run 'x' is not a number");
  }
};

TEST(McpServer, ProviderErrorsBecomeProtocolErrors) {
  Registry registry;
  ASSERT_TRUE(registry.add_provider(std::make_shared<BrokenProvider>()).ok());
  Server server(ServerInfo{"s", "", "1", ""}, std::move(registry));
  ASSERT_TRUE(server.handle(request_line(0, "initialize", initialize_params())));
  const json listed = *server.handle(request_line(1, "resources/list"));
  EXPECT_EQ(listed["error"]["code"], rpc_code::kInternalError);
  EXPECT_EQ(listed["error"]["message"], "cannot open trace.db\nfix: check the --db path");
  const json read = *server.handle(request_line(2, "resources/read", json{{"uri", "x://runs/x"}}));
  EXPECT_EQ(read["error"]["code"], rpc_code::kInvalidParams);
}

// --- the stdio loop ---

TEST(McpServe, AnswersEachRequestLineAndLogsOnlyToTheLog) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in(request_line(1, "tools/list") + "\n" +                  // before initialize: error
                        request_line(2, "initialize", initialize_params()) + "\n" +
                        notification_line("notifications/initialized") + "\n" +  // no output
                        "this is not json\n" +                                     // -32700
                        "\n" +                                                     // blank: nothing
                        request_line(3, "tools/call", json{{"name", "add"}, {"arguments", {{"a", 1}, {"b", 2}}}}) +
                        "\r\n" + request_line(4, "ping"));  // the last line has no newline
  std::ostringstream out;
  std::ostringstream log;
  EXPECT_EQ(server.serve(in, out, log), 0);

  std::vector<json> responses;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) responses.push_back(json::parse(line));
  ASSERT_EQ(responses.size(), 5u) << out.str();
  EXPECT_EQ(out.str().back(), '\n');
  EXPECT_EQ(responses[0]["error"]["code"], rpc_code::kInvalidRequest);
  EXPECT_EQ(responses[1]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(responses[2]["error"]["code"], rpc_code::kParseError);
  EXPECT_TRUE(responses[2]["id"].is_null());
  EXPECT_EQ(responses[3]["result"]["structuredContent"]["sum"], 3);
  EXPECT_EQ(responses[4], json::parse(R"({"jsonrpc":"2.0","id":4,"result":{}})"));

  EXPECT_EQ(out.str().find("mcp:"), std::string::npos) << "logs must not reach stdout";
  EXPECT_NE(log.str().find("initialized by gtest 1 (protocol 2025-06-18)"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("error -32700"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("end of input"), std::string::npos) << log.str();
}

TEST(McpServe, EmptyInputEndsCleanly) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in;
  std::ostringstream out, log;
  EXPECT_EQ(server.serve(in, out, log), 0);
  EXPECT_TRUE(out.str().empty());
}

// A signal that arrives during a request: the request is answered, then the session ends with
// 128 + the signal (it once went on serving, and exited 0 when a signal ended its read).
TEST(McpServe, AStopSignalEndsTheSessionAfterTheCurrentMessage) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in(request_line(1, "ping") + "\n" + request_line(2, "ping") + "\n" + request_line(3, "ping") + "\n");
  std::ostringstream out, log;
  int asked = 0;
  // No signal before the first read; SIGTERM arrives while the first ping is handled.
  const int code = server.serve(in, out, log, [&] { return ++asked > 1 ? SIGTERM : 0; });
  EXPECT_EQ(code, 128 + SIGTERM);
  const std::string answered = out.str();
  EXPECT_EQ(std::count(answered.begin(), answered.end(), '\n'), 1) << answered;
  EXPECT_NE(answered.find("\"id\":1"), std::string::npos) << answered;
  EXPECT_NE(log.str().find("stopping on signal 15"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("end of input"), std::string::npos) << log.str();
}

// A read that a signal interrupted ends the input: the exit code still says it was the signal.
TEST(McpServe, ASignalThatEndedTheInputIsNotACleanEnd) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in;
  std::ostringstream out, log;
  int asked = 0;
  EXPECT_EQ(server.serve(in, out, log, [&] { return ++asked > 1 ? SIGINT : 0; }), 128 + SIGINT);
}

// One line nesting 100,000 brackets, before initialize: a parse error, and the server goes on
// (copying the params once overflowed the stack: exit 139).
TEST(McpServe, DeeplyNestedParamsAreAParseErrorNotACrash) {
  Server server(demo::server_info(), demo::make_registry());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::istringstream in(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":)" + deep + "}}\n" +
                        request_line(2, "ping") + "\n");
  std::ostringstream out, log;
  EXPECT_EQ(server.serve(in, out, log), 0);
  std::vector<json> responses;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) responses.push_back(json::parse(line));
  ASSERT_EQ(responses.size(), 2u) << out.str().substr(0, 500);
  EXPECT_EQ(responses[0]["error"]["code"], rpc_code::kParseError);
  EXPECT_NE(responses[0]["error"]["message"].get<std::string>().find("deeper than"), std::string::npos);
  EXPECT_EQ(responses[1]["result"], json::object());
}

// A line over the limit (a 600 MB line once took 2.9 GB): an error naming the limit, and the
// next message is answered.
TEST(McpServe, ALineOverTheLimitIsAnErrorAndTheSessionGoesOn) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in(std::string(kMaxMessageBytes + 1, 'x') + "\n" + request_line(2, "ping") + "\n" +
                        std::string(kMaxMessageBytes, ' ') + "\n" + request_line(3, "ping"));
  std::ostringstream out, log;
  EXPECT_EQ(server.serve(in, out, log), 0);
  std::vector<json> responses;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) responses.push_back(json::parse(line));
  ASSERT_EQ(responses.size(), 3u) << out.str().substr(0, 500);  // a blank line at the limit is still noise
  EXPECT_EQ(responses[0]["error"]["code"], rpc_code::kInvalidRequest);
  EXPECT_TRUE(responses[0]["id"].is_null());
  EXPECT_NE(responses[0]["error"]["message"].get<std::string>().find("16 MiB"), std::string::npos);
  EXPECT_EQ(responses[1]["id"], 2);
  EXPECT_EQ(responses[2]["id"], 3);
}

TEST(McpServe, StopsWhenTheOutputFails) {
  Server server(demo::server_info(), demo::make_registry());
  std::istringstream in(request_line(1, "ping") + "\n" + request_line(2, "ping") + "\n");
  std::ostringstream out, log;
  out.setstate(std::ios::badbit);
  EXPECT_EQ(server.serve(in, out, log), 1);
  EXPECT_NE(log.str().find("cannot write"), std::string::npos);
}

}  // namespace
}  // namespace ingero::mcp
