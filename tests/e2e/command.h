// SPDX-License-Identifier: Apache-2.0
// Runs an ingero-bench command line through the shell for the end-to-end tests: its exit
// code (128 + signal when killed) and what it printed on stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace ingero::testing {

struct Output {
  int exit_code = -1;
  std::string text;
};

inline Output capture(const std::string& command) {
  Output out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

}  // namespace ingero::testing
