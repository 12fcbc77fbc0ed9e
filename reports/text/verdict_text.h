// SPDX-License-Identifier: Apache-2.0
// The sentences that say what a run's verdict was measured from, shared by the terminal, the
// Markdown/HTML reports and the MCP answers.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/run_metrics.h"

namespace ingero::reports {

// The verdict in words: "HIGHLY input-bound", ...; for a run that gets none, why: "none (the run
// failed: the process exited with status 1)".
std::string verdict_words(const RunMetrics& m);
// "the observer: every DataLoader next() of the job", "estimated from wake-ups: ...".
std::string wait_basis_text(const RunMetrics& m);
// The host's and the GPU's side: "GPU busy 31 % of the run (NVML, 1 GPU)", "main thread on CPU
// outside CUDA calls 97 % of its time"; "GPU busy share unknown: ..." where NVML said why.
std::vector<std::string> evidence_lines(const RunMetrics& m, const std::string& gpu_sampler_setting);
// What an epoch's first batch waited for: "the workers starting (fork to ready 310 ms per worker,
// measured)", "the iterator's set-up (no workers: the sampler's order and the first batch's fetch)".
std::string startup_wait_text(const EpochStartup& s);
// "an epoch of 40 batches pays it once: ≈ 31 % of the epoch (estimated at the steady pace)"; empty
// when the batches per epoch are unknown.
std::string startup_share_text(const EpochStartup& s);

}  // namespace ingero::reports
