// SPDX-License-Identifier: Apache-2.0
// Runs an ingero-bench command line through the shell for the end-to-end tests: its exit
// code (128 + signal when killed) and what it printed on stdout and stderr.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
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

// A suite's costly set-up (a traced sweep, a 2-rank job, a CI baseline), shared by its cases. ctest runs
// each case as a process of its own, so SetUpTestSuite alone would redo it per case. Under ctest the
// suite's fixture (tests/e2e/CMakeLists.txt) sets INGERO_E2E_SHARED to a folder it empties before the
// suite and removes after it: the first case makes the set-up there and stores its Output, the others
// read it. Run directly (one process for all cases), it is made once in a folder of the process's own,
// which the suite removes (`owned`).
struct SharedSetup {
  std::string dir;
  Output result;
  bool owned = false;
};

inline SharedSetup shared_setup(const std::string& name, const std::function<Output(const std::string& dir)>& make) {
  namespace fs = std::filesystem;
  const char* shared = std::getenv("INGERO_E2E_SHARED");
  if (shared == nullptr || *shared == '\0') {
    const std::string dir = fs::temp_directory_path() / ("ingero-" + name + "-" + std::to_string(getpid()));
    fs::create_directories(dir);
    return {dir, make(dir), true};
  }
  const std::string dir = std::string(shared) + "/" + name;
  fs::create_directories(shared);
  const int lock = open((dir + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock >= 0) flock(lock, LOCK_EX);  // a case run beside this one waits for the set-up
  SharedSetup setup{dir, {}, false};
  std::ifstream stored(dir + ".result");
  std::string code;
  if (std::getline(stored, code) && !code.empty()) {
    setup.result.exit_code = std::stoi(code);
    std::stringstream text;
    text << stored.rdbuf();
    setup.result.text = text.str();
  } else {
    fs::remove_all(dir);
    fs::create_directories(dir);
    setup.result = make(dir);
    std::ofstream(dir + ".result.tmp") << setup.result.exit_code << "\n" << setup.result.text;
    fs::rename(dir + ".result.tmp", dir + ".result");
  }
  if (lock >= 0) close(lock);
  return setup;
}

}  // namespace ingero::testing
