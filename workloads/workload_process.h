// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace ingero::workloads {

// Body of the workload process (the harness starts it as `ingero-bench-workload --config`):
// pins CPUs, handles SIGINT/SIGTERM by shutting its workers down, runs the
// configuration and writes the result record atomically to result_path (a failed
// run writes a record too). An on-disk dataset's preparation report, when the harness prepared it,
// lies beside the result: kPreparationReport in the same folder. Returns the process exit code.
inline constexpr const char* kPreparationReport = "dataset-prepare.json";
int workload_process_main(const std::string& config_json, const std::string& result_path);

}  // namespace ingero::workloads
