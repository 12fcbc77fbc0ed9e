// SPDX-License-Identifier: Apache-2.0
// mcp_explain_json DB RUN: the explain report of one run as `explain --json` prints
// it, for tests that hold the MCP tools' numbers to the explain command's (the
// ctest script runs it until `ingero-bench explain --db DB --run RUN --json` can).
#include <cstdlib>
#include <iostream>
#include <string>

#include "reports/render/commands.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: mcp_explain_json DB RUN\n";
    return 2;
  }
  ingero::reports::ExplainOptions options;
  options.db = argv[1];
  options.run = std::strtoll(argv[2], nullptr, 10);
  options.json = true;
  if (ingero::Status status = ingero::reports::explain(options, std::cout); !status) {
    std::cerr << status.error().message << '\n';
    return status.error().exit_code;
  }
  return 0;
}
