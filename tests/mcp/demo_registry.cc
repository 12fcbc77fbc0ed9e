// SPDX-License-Identifier: Apache-2.0
#include "tests/mcp/demo_registry.h"

#include <cctype>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ingero::mcp::demo {
namespace {

using nlohmann::json;

struct FakeRun {
  std::string name;
  int64_t events;
};

const std::map<int64_t, FakeRun>& runs() {
  static const std::map<int64_t, FakeRun> table{
      {1, {"direct", 1200}}, {2, {"loader w=2", 48000}}, {3, {"loader w=8", 91000}}};
  return table;
}

std::string run_ids() {
  std::vector<std::string> ids;
  for (const auto& [id, run] : runs()) ids.push_back(std::to_string(id));
  return fmt::format("{}", fmt::join(ids, ", "));
}

ToolSpec add_tool() {
  ToolSpec tool;
  tool.name = "add";
  tool.title = "Add two integers";
  tool.description = "Adds a and b.";
  tool.input_schema = json::parse(R"({
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"], "additionalProperties": false})");
  tool.output_schema = json::parse(R"({
    "type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})");
  tool.handler = [](const json& args) -> Result<ToolAnswer> {
    const int64_t sum = args["a"].get<int64_t>() + args["b"].get<int64_t>();
    return ToolAnswer{json{{"sum", sum}}, fmt::format("{} + {} = {}", args["a"].dump(), args["b"].dump(), sum)};
  };
  return tool;
}

ToolSpec lookup_run_tool() {
  ToolSpec tool;
  tool.name = "lookup_run";
  tool.title = "Look up a run";
  tool.description = "Name and event count of one run; an error result for a run that does not exist.";
  tool.input_schema = json::parse(R"({
    "type": "object",
    "properties": {"run": {"type": "integer", "minimum": 1, "description": "run id"},
                   "verbose": {"type": "boolean"}},
    "required": ["run"], "additionalProperties": false})");
  tool.output_schema = json::parse(R"({
    "type": "object",
    "properties": {"run": {"type": "integer"}, "name": {"type": "string"},
                   "events": {"type": "integer", "minimum": 0},
                   "note": {"type": ["string", "null"]}},
    "required": ["run", "name", "events", "note"], "additionalProperties": false})");
  tool.handler = [](const json& args) -> Result<ToolAnswer> {
    const int64_t id = args["run"].get<int64_t>();
    const auto run = runs().find(id);
    if (run == runs().end()) {
      return Error::bad_input(fmt::format("run {} does not exist in the trace", id),
                              fmt::format("pick one of the runs {}", run_ids()));
    }
    const bool verbose = args.value("verbose", false);
    json note = verbose ? json(fmt::format("{} events recorded", run->second.events)) : json(nullptr);
    return ToolAnswer{json{{"run", id}, {"name", run->second.name}, {"events", run->second.events}, {"note", note}},
                      fmt::format("run {}: {}, {} events", id, run->second.name, run->second.events)};
  };
  return tool;
}

ToolSpec echo_tool() {
  ToolSpec tool;
  tool.name = "echo";
  tool.title = "Echo";
  tool.description = "Repeats a text, optionally in capitals.";
  tool.input_schema = json::parse(R"({
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1},
                   "times": {"type": "integer", "minimum": 1, "maximum": 3},
                   "style": {"type": "string", "enum": ["plain", "shout"]}},
    "required": ["text"]})");
  tool.output_schema = json::parse(R"({
    "type": "object",
    "properties": {"text": {"type": "string"}, "length": {"type": "integer"},
                   "words": {"type": "array", "items": {"type": "string"}}},
    "required": ["text", "length", "words"]})");
  tool.handler = [](const json& args) -> Result<ToolAnswer> {
    std::string text = args["text"].get<std::string>();
    if (args.value("style", "plain") == "shout") {
      for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::vector<std::string> words(static_cast<size_t>(args.value("times", 1)), text);
    const std::string joined = fmt::format("{}", fmt::join(words, " "));
    return ToolAnswer{json{{"text", joined}, {"length", joined.size()}, {"words", words}}, joined};
  };
  return tool;
}

PromptSpec explain_prompt() {
  PromptSpec prompt;
  prompt.name = "explain_run";
  prompt.title = "Explain a run";
  prompt.description = "Asks where the time of one run went.";
  prompt.arguments = {{"run", "run id", true}, {"focus", "what to look at first, e.g. 'workers'", false}};
  prompt.render = [](const PromptArguments& args) -> Result<std::string> {
    const std::string& run = args.at("run");
    if (run.empty() || run.find_first_not_of("0123456789") != std::string::npos) {
      return Error::bad_input(fmt::format("run '{}' is not a run id", run), "pass a run id such as 1");
    }
    std::string text = fmt::format("Explain where the time of run {} went.", run);
    if (const auto focus = args.find("focus"); focus != args.end()) text += " Look at " + focus->second + " first.";
    return text;
  };
  return prompt;
}

// One resource per run, listed when asked: the shape a trace DB provider has.
class RunResources : public ResourceProvider {
 public:
  Result<std::vector<ResourceEntry>> list() const override {
    std::vector<ResourceEntry> entries;
    for (const auto& [id, run] : runs()) {
      entries.push_back(ResourceEntry{kRunUriPrefix + std::to_string(id), fmt::format("run-{}", id),
                                      fmt::format("Run {}", id), run.name, "application/json"});
    }
    return entries;
  }

  std::vector<ResourceTemplate> templates() const override {
    return {ResourceTemplate{std::string(kRunUriPrefix) + "{run}", "run", "A run", "One run by id", "application/json"}};
  }

  Result<std::optional<ResourceContents>> read(const std::string& uri) const override {
    const std::string prefix = kRunUriPrefix;
    if (uri.compare(0, prefix.size(), prefix) != 0) return std::optional<ResourceContents>();
    const std::string id = uri.substr(prefix.size());
    for (const auto& [run_id, run] : runs()) {
      if (std::to_string(run_id) == id) {
        const json body{{"run", run_id}, {"name", run.name}, {"events", run.events}};
        return std::optional<ResourceContents>(ResourceContents{uri, "application/json", body.dump()});
      }
    }
    return std::optional<ResourceContents>();  // no such run: not found
  }
};

void must(const Status& status) {
  if (!status) throw std::logic_error("demo registry: " + status.error().message);
}

}  // namespace

Registry make_registry() {
  Registry registry;
  must(registry.add_tool(add_tool()));
  must(registry.add_tool(lookup_run_tool()));
  must(registry.add_tool(echo_tool()));
  must(registry.add_prompt(explain_prompt()));
  must(registry.add_resource(
      ResourceEntry{kReadmeUri, "readme", "Demo readme", "What this demo server serves", "text/markdown"},
      "# Demo\n\nThree fake runs, three tools, one prompt.\n"));
  must(registry.add_provider(std::make_shared<RunResources>()));
  return registry;
}

ServerInfo server_info() {
  return ServerInfo{"ingero-bench-mcp-demo", "ingero-bench MCP demo", "0.1.0",
                    "Fake tools for protocol tests; no trace database behind them."};
}

}  // namespace ingero::mcp::demo
