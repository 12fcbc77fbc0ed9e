// SPDX-License-Identifier: Apache-2.0
// Small trace scenarios with known ground truth, shared by the tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/reports/trace_fixture.h"

namespace ingero::reports::testing {

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kUs = 1'000;
inline constexpr int64_t kMain = 100;     // main process and thread
inline constexpr int64_t kPin = 101;      // pin-memory thread of the main process
inline constexpr int64_t kOther = 102;    // an unrelated thread of the main process
inline constexpr int64_t kWorkerA = 200;  // worker processes (pid == tid)
inline constexpr int64_t kWorkerB = 201;

// A DB path of this test process, removed (with its -wal and -shm) when the process exits.
inline std::string temp_db_path(const std::string& name) {
  static std::vector<std::string> paths;
  if (paths.empty())
    std::atexit([] {
      for (const auto& p : paths)
        for (const char* suffix : {"", "-wal", "-shm"}) std::remove((p + suffix).c_str());
    });
  paths.push_back(fmt::format("/tmp/ingero-reports-test-{}-{}.db", name, ::getpid()));
  return paths.back();
}

inline std::string loader_config(int workers, int prefetch = 2, bool pin = true, bool persistent = false,
                                 const std::string& mode = "loader", bool shuffle = true, int cpus = 0) {
  return fmt::format(R"({{"mode":"{}","num_workers":{},"prefetch_factor":{},"pin_memory":{},)"
                     R"("persistent_workers":{},"shuffle":{},"cpus":{},"batch_size":1048576}})",
                     mode, workers, prefetch, pin, persistent, shuffle, cpus);
}

// A run of `length` ns with the usual threads: main, pin, other, two workers.
inline int64_t add_loader_run(TraceFixture& db, int64_t length, const std::string& label = "loader w2") {
  RunSpec spec;
  spec.label = label;
  spec.config_json = loader_config(2);
  spec.start_ns = 0;
  spec.end_ns = length;
  const int64_t run = db.add_run(spec);
  db.add_thread(run, {kMain, kMain, 1, "python3", "main", 0, length, std::nullopt, std::nullopt});
  db.add_thread(run, {kPin, kMain, std::nullopt, "ib-pin", "pin", 0, length, std::nullopt, std::nullopt});
  db.add_thread(run, {kOther, kMain, std::nullopt, "cuda-EvtHandlr", "other", 0, length, std::nullopt, std::nullopt});
  db.add_thread(run, {kWorkerA, kWorkerA, kMain, "ib-worker-0", "worker", 0, length, std::nullopt, std::nullopt});
  db.add_thread(run, {kWorkerB, kWorkerB, kMain, "ib-worker-1", "worker", 0, length, std::nullopt, std::nullopt});
  return run;
}

}  // namespace ingero::reports::testing
