// SPDX-License-Identifier: Apache-2.0
// The few lines the main job prints after its table: per run, the verdict, the first causal
// chain and whether its suggested change was measured — each a pointer into explain.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ingero::harness {

// Reads the DB read-only; a run that cannot be analysed gets one line saying why.
void print_diagnosis(const std::string& db_path, const std::vector<int64_t>& run_ids, std::ostream& out);

}  // namespace ingero::harness
