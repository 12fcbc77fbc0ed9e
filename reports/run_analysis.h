// One run read and analysed: the building block of explain, compare and recommend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/causal_chains.h"
#include "reports/run_metrics.h"
#include "reports/trace_data.h"

namespace ingero::reports {

struct RunAnalysis {
  RunContext context;
  EventSet events;
  TimeWindow window;
  RunMetrics metrics;
  std::vector<CudaLatencyRow> cuda;
  ChainAnalysis chains;
};

Result<RunAnalysis> analyze_run(const TraceFile& trace, const RunRecord& run,
                                std::optional<double> since_s, WaitSelection waits);

// What the reader should know about the data behind the numbers: losses,
// recording thresholds, what a window leaves out.
std::vector<std::string> data_notes(const RunAnalysis& analysis);

// "AMD EPYC, 2 cores, 23.4 GB, kernel 6.1, GPU none"
std::string machine_text(const RunRecord& run);

}  // namespace ingero::reports
