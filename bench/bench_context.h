// SPDX-License-Identifier: Apache-2.0
// What the Google Benchmark micro-benchmarks add to the JSON's "context" block, so a
// committed result names its machine: Google Benchmark records the host name, CPU count,
// clock, caches and load average; this adds the CPU model, memory, kernel and build type.
#pragma once

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#ifndef INGERO_BUILD_TYPE
#define INGERO_BUILD_TYPE "unknown"
#endif

namespace ingero::bench {

// The first "KEY : value" line of a /proc file whose key starts with `key`.
inline std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

inline void add_machine_context() {
  struct utsname u {};
  if (uname(&u) == 0) benchmark::AddCustomContext("kernel", std::string(u.sysname) + " " + u.release);
  benchmark::AddCustomContext("cpu_model", proc_field("/proc/cpuinfo", "model name"));
  benchmark::AddCustomContext("memory", proc_field("/proc/meminfo", "MemTotal"));
  benchmark::AddCustomContext("online_cpus", std::to_string(sysconf(_SC_NPROCESSORS_ONLN)));
  benchmark::AddCustomContext("ingero_build_type", INGERO_BUILD_TYPE);
  benchmark::AddCustomContext("euid", std::to_string(geteuid()));
}

// One of a program's own flags, "--name VALUE", and what its value sets.
struct Flag {
  const char* name;
  std::function<void(const char* value)> set;
};

// What every benchmark program does first: Google Benchmark takes its --benchmark_ flags, the
// program's own flags are taken out of argv and checked with `valid`, any other flag is refused,
// and the machine goes into the JSON context. 0, or 2 after the usage line.
inline int start(int* argc, char** argv, const std::vector<Flag>& flags, const std::function<bool()>& valid,
                 const char* usage) {
  benchmark::Initialize(argc, argv);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const Flag* flag = nullptr;
    for (const Flag& f : flags)
      if (i + 1 < *argc && std::strcmp(argv[i], f.name) == 0) flag = &f;
    if (flag != nullptr) flag->set(argv[++i]);
    else argv[kept++] = argv[i];
  }
  *argc = kept;
  if (!valid()) {
    std::fprintf(stderr, "usage: %s %s [--benchmark_...]\n", argv[0], usage);
    return 2;
  }
  if (benchmark::ReportUnrecognizedArguments(*argc, argv)) return 2;
  add_machine_context();
  return 0;
}

}  // namespace ingero::bench
