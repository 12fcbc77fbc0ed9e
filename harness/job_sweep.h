// SPDX-License-Identifier: Apache-2.0
// ingero-bench sweep [knobs] -- COMMAND: the sweep of the user's own training command. Each
// point runs the command with its DataLoader changed where it is built, through the observer's
// overrides (or a {num_workers}-style template in the command, for loaders that are not
// torch's), times the steady state from the observer's batch records, and ends the job: SIGINT,
// then whatever of its process group is left. The search, statistics, budget and verification
// are the sweep engine's (harness/sweep_engine).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/knobs.h"
#include "common/result.h"
#include "harness/cli.h"
#include "harness/sudo_user.h"
#include "harness/sweep_engine.h"

namespace ingero::harness {

// Under sudo the command runs as outputs.user() (unless --as-root), and the logs kept are theirs.
Result<int> run_job_sweep(const SweepFlags& flags, UserOutputs& outputs);
Result<int> resume_job_sweep(SweepSpec spec, const SweepFlags& flags, UserOutputs& outputs);
// Whether a stored sweep request is one of the user's command (it holds the command).
bool is_job_sweep(const nlohmann::json& request);

// The knobs a template in the command can take: {num_workers}, {prefetch_factor},
// {pin_memory}, {persistent_workers} (on/off as 1/0).
inline constexpr auto& kTemplateKnobs = knob::kLoaderKnobs;
// The knobs whose template appears in the command.
std::vector<std::string> templated_knobs(const std::vector<std::string>& command);
// The command with each {knob} replaced by the point's value.
std::vector<std::string> fill_templates(const std::vector<std::string>& command, const Knobs& knobs);

// What is kept of a point's output (run-ID-LABEL.log): its first `head` and last `tail` bytes, whole lines,
// with a line saying how much was left out between them; all of it when it is no longer. A chatty job
// once left 76 MB of logs for 10 runs.
std::string kept_log(std::string_view text, size_t head = 64 * 1024, size_t tail = 1024 * 1024);

}  // namespace ingero::harness
