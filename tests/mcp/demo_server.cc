// SPDX-License-Identifier: Apache-2.0
// mcp_demo_server: the demo registry served on stdin/stdout, for clients
// such as tests/node/mcp_interop.mjs.
#include <iostream>

#include "mcp/server.h"
#include "tests/mcp/demo_registry.h"

int main() {
  std::ios::sync_with_stdio(false);
  ingero::mcp::Server server(ingero::mcp::demo::server_info(), ingero::mcp::demo::make_registry());
  return server.serve(std::cin, std::cout, std::cerr);
}
