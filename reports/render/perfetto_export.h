// SPDX-License-Identifier: Apache-2.0
// `ingero-bench export --format perfetto`: one run of a trace DB as Chrome trace-event JSON, the format
// that ui.perfetto.dev and chrome://tracing open. Processes and threads are named with their role
// ("main 1234 python3", "worker 1240 ib-worker-0") and sorted main, pin, workers, other; CUDA calls,
// batch waits and computes, worker start-up, off-CPU and run-queue intervals and block I/O are complete
// ("X") slices with cat = the op's category; fork, exec, exit and the other process events are instants
// ("i"); page-fault and page-allocation bursts become cumulative counters ("C") per process.
// Timestamps and durations are microseconds from the run's start. Reads the DB, never writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

struct PerfettoOptions {
  // Events read from the DB, the first ones in time order; the metadata says when the run had more.
  // At about 150 bytes per event, the default keeps a file near 300 MB, which the Perfetto UI opens.
  size_t max_events = 2'000'000;
};

// The trace as a JSON document: {"displayTimeUnit": "ms", "metadata": {...}, "traceEvents": [...]}.
// The same DB and run always give the same document.
Result<nlohmann::json> perfetto_trace(const TraceFile& trace, int64_t run_id, const PerfettoOptions& options = {});

// Writes perfetto_trace(...).dump() to out_path (the same bytes, without holding the document in memory)
// atomically: nothing half-written is left behind. Bad input (exit 2) names the flag: --db, --run, --out.
Status export_perfetto(const std::string& db_path, int64_t run_id, const std::string& out_path,
                       const PerfettoOptions& options = {});

}  // namespace ingero::reports
