// SPDX-License-Identifier: Apache-2.0
// Advice is a claim: for every change a causal chain suggests, find the run that measured
// it (a run of the DB whose configuration differs from the analysed run's by that change
// alone), or give the command that measures both side by side.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// An argument as a POSIX shell reads it back: bare when safe, else in single quotes.
std::string shell_quoted(const std::string& arg);

// One change: the run that measured it, or the command that does.
ChangeCheck check_change(const Change& change, const RunRecord& run, const std::vector<RunRecord>& runs,
                         const std::string& db_path);
void check_changes(std::vector<CausalChain>& chains, const RunRecord& run, const std::vector<RunRecord>& runs,
                   const std::string& db_path);

// ingero-bench --workload dataloader with the run's configuration and the knob set to both
// its current value and the changed one.
std::string measuring_command(const RunRecord& run, const Change& change, const std::string& db_path);

// A user's job (trace -- CMD): the sweep of its own command that measures the change against the job
// as written (the observer applies it), or, for a change only its code can make, what to edit and
// the command that traces it again.
std::string user_job_command(const RunRecord& run, const Change& change, const std::string& db_path);

}  // namespace ingero::reports
