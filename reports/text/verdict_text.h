// SPDX-License-Identifier: Apache-2.0
// The sentences that say what a run's verdict was measured from, shared by the terminal, the
// Markdown/HTML reports and the MCP answers.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/run_metrics.h"

namespace ingero::reports {

// "the observer: every DataLoader next() of the job", "estimated from wake-ups: ...".
std::string wait_basis_text(const RunMetrics& m);
// The host's and the GPU's side: "GPU busy 31 % of the run (NVML, 1 GPU)", "main thread on CPU
// outside CUDA calls 97 % of its time"; "GPU busy share unknown: ..." where NVML said why.
std::vector<std::string> evidence_lines(const RunMetrics& m, const std::string& gpu_sampler_setting);

}  // namespace ingero::reports
