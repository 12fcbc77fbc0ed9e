// SPDX-License-Identifier: Apache-2.0
// ingero-bench sweep: our workloads' sweep (each point a WorkloadConfig, run by the workload
// program), or, with a command after --, the user's own (harness/job_sweep); both run by the
// sweep engine (harness/sweep_engine).
#pragma once

#include "common/result.h"
#include "harness/cli.h"

namespace ingero::harness {

Result<int> run_sweep_command(const SweepFlags& flags);

}  // namespace ingero::harness
