// SPDX-License-Identifier: Apache-2.0
// Trace DBs with known content for the export and report tests (and the browser check, through
// exports_fixture_db): one run with an event of every kind the Perfetto export maps, and two sweeps.
#pragma once

#include <unistd.h>  // getpid, for scenario.h's temp_db_path

#include <cstdint>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {

// ---- the Perfetto run: main process 100 (main 100, pin 101, other 102), workers 200 and 201,
// and thread 103 of process 100 that only appears in the events.
inline constexpr int64_t kRunStart = 5'000 * kMs;  // the run's start_ns: exported times count from it
inline constexpr int64_t kRunLength = 100 * kMs;
inline constexpr int64_t kUnlistedThread = 103;

// Events (ts from the run's start):
//   main:   batch_wait [2 ms, +1.5 ms] batch 0; cudaMemcpyAsync [4 ms, +300 µs] 4 MB, stream 7, ret 0
//           nested cuMemcpyHtoDAsync_v2 [4.05 ms, +200 µs]; batch_compute [4 ms, +2 ms] batch 0;
//           offcpu_blocked [2.1 ms, +1 ms]; runq_wait [3.1 ms, +100 µs]; fork at 1 ms (child 200),
//           exec at 0.5 ms; page_faults bursts [10 ms, +10 ms] 5 faults, page_allocs [30 ms, +1 ms]
//           3 pages of 12 kB
//   pin:    page_faults [12 ms, +3 ms] 3 faults (inside main's burst: same process);
//           block_io [40 ms, +2 ms] 64 kB, status 0
//   worker 200: worker_start [1 ms, +5 ms] worker 0; offcpu_preempted [7 ms, +250 µs]; exit at 90 ms, code 0
//   worker 201: worker_start [1.2 ms, +5 ms] worker 1; runq_wait [8 ms, +40 µs]
//   unlisted 103 (pid 100): offcpu_blocked [50 ms, +1 ms]
int64_t add_perfetto_run(TraceFixture& db);

// ---- a profiled job: `trace -- python3 train.py` with its main thread (100) and two DataLoader workers
// (200, 201), 20 batch waits, and a CPU profile of 200 samples: main 100 (60 in a convolution under the
// model's forward, 30 in collate, 10 logging), workers 100 (41 decoding JPEGs, 22 ToTensor, 37 in
// __getitem__), over two time buckets.
inline constexpr int64_t kProfiledMainSamples = 100;
inline constexpr int64_t kProfiledWorkerSamples = 100;
int64_t add_profiled_job(TraceFixture& db);

// ---- sweeps. Sweep 1 (the full one): loader points over num_workers {0, 2, 4} × prefetch_factor
// {2, 4} (w0 takes none), baseline "loader w2 pf2", recommended "loader w4 pf2" verified by two
// interleaved re-runs of each; "loader w8 pf2" pruned. Every run has main, pin, other threads and its
// workers with thread_stats; the baseline's measure run has events (CUDA calls, batch waits, off-CPU,
// worker start-up). Sweep 2 (the last one): two points, "loader w0" and "loader w1 pf2".
struct SweepDb {
  int64_t baseline_run = 0;     // sweep 1's measure run of "loader w2 pf2"
  int64_t recommended_run = 0;  // sweep 1's measure run of "loader w4 pf2"
  int64_t last_run = 0;
};
SweepDb write_sweep_db(const std::string& path);

// Epoch times of sweep 1's measure runs: median 1.0 s × factor per point.
double sweep1_epoch_factor(int workers, std::optional<int> prefetch);

// A file's bytes, to check that readers leave a DB as they found it.
inline std::string file_bytes(const std::string& path) {
  auto bytes = read_file(path);
  return bytes.ok() ? *bytes : "<unreadable: " + bytes.error().message + ">";
}

}  // namespace ingero::reports::testing
