// SPDX-License-Identifier: Apache-2.0
// ingero-bench sweep: the search for the best loader configuration over num_workers x
// prefetch_factor x pin_memory x persistent_workers (and modes), measured under the rules
// of harness/sweep_rules.h, every point in one DB as one sweep; then the recommendation and
// the baseline re-run, interleaved, so that the advice rests on a measured speed-up.
#pragma once

#include "common/result.h"
#include "harness/cli.h"

namespace ingero::harness {

Result<int> run_sweep_command(const SweepFlags& flags);

}  // namespace ingero::harness
