// SPDX-License-Identifier: Apache-2.0
// Generates (or reuses) a trace of about 10 million events and times `explain` on it.
// usage: reports_explain_benchmark [DB_PATH] [EVENTS]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "reports/commands.h"
#include "tests/reports/synthetic_trace.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/ingero-explain-benchmark.db";
  ingero::reports::testing::SyntheticTraceShape shape;
  if (argc > 2) shape.target_events = std::stoll(argv[2]);
  if (!std::filesystem::exists(path)) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t written = ingero::reports::testing::write_synthetic_trace(path, shape);
    fmt::print("generated {} events into {} in {:.1f} s\n", written, path, seconds_since(start));
  } else {
    fmt::print("reusing {}\n", path);
  }
  ingero::reports::ExplainOptions options;
  options.db = path;
  for (int repeat = 1; repeat <= 3; ++repeat) {
    std::ostringstream report;
    const auto start = std::chrono::steady_clock::now();
    const ingero::Status status = ingero::reports::explain(options, report);
    const double elapsed = seconds_since(start);
    if (!status.ok()) {
      fmt::print(stderr, "explain failed: {}\n", status.error().message);
      return 1;
    }
    fmt::print("explain run {}: {:.3f} s{}\n", repeat, elapsed, elapsed <= 2.0 ? "" : " (over the 2 s target)");
    if (repeat == 3) std::cout << "\n--- explain output ---\n" << report.str();
  }
  return 0;
}
