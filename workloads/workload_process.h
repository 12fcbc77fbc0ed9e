// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace ingero::workloads {

// Body of the workload process (the harness starts it as `ingero-bench-workload --config`):
// pins CPUs, handles SIGINT/SIGTERM by shutting its workers down, runs the
// configuration and writes the result record atomically to result_path (a failed
// run writes a record too). Returns the process exit code.
int workload_process_main(const std::string& config_json, const std::string& result_path);

}  // namespace ingero::workloads
