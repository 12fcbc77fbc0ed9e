// SPDX-License-Identifier: Apache-2.0
// Fake tools, a prompt and resources over three made-up runs: what the MCP
// unit tests and mcp_demo_server (the TypeScript SDK interop test) serve.
#pragma once

#include "mcp/registry.h"
#include "mcp/server.h"

namespace ingero::mcp::demo {

inline constexpr const char* kReadmeUri = "ingero://demo/readme";
inline constexpr const char* kRunUriPrefix = "ingero://demo/runs/";

// Tools: add, lookup_run (an Error for a run that does not exist), echo.
// Prompt: explain_run (run required, focus optional). Resources: the readme
// (fixed) and one per run from a provider with the template ingero://demo/runs/{run}.
Registry make_registry();
ServerInfo server_info();

}  // namespace ingero::mcp::demo
