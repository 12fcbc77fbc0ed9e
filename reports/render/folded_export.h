// SPDX-License-Identifier: Apache-2.0
// `ingero-bench export --format folded`: a run's CPU profile as folded stacks, the text flamegraph.pl,
// speedscope and Pyroscope read: one line per stack, its frames root first joined by ';', a space and
// its sample count ("<module>;train;Module._call_impl;at::native::_convolution [libtorch_cpu.so] 60").
// Every sample of the run (or of one role's threads) is on exactly one line, so the counts add up to
// the DB's. Reads the DB, never writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "reports/data/trace_data.h"

namespace ingero::reports {

// The folded text of the run (the newest finished one when none is given), of one role's threads when
// role is set. A run without samples (of that role) is bad input that says so.
Result<std::string> folded_profile(const TraceFile& trace, std::optional<int64_t> run_id, const std::string& role);

// Writes folded_profile(...) to out_path atomically: nothing half-written is left behind. Bad input
// (exit 2) names the flag: --db, --run, --role, --out.
Status export_folded(const std::string& db_path, std::optional<int64_t> run_id, const std::string& role,
                     const std::string& out_path);

}  // namespace ingero::reports
