// SPDX-License-Identifier: Apache-2.0
// mcp_trace_server DB: `ingero-bench mcp --db DB` without the CLI, for
// tests/node/trace_interop.mjs until the harness wires the command.
#include <iostream>

#include "common/result.h"
#include "mcp/trace_server.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: mcp_trace_server DB\n";
    return ingero::kExitBadInput;
  }
  std::ios::sync_with_stdio(false);
  return ingero::mcp::serve_trace_db(argv[1], std::cin, std::cout, std::cerr);
}
