// SPDX-License-Identifier: Apache-2.0
// The Python observer on a launched job's path: its two files written into the run's private
// directory, the directory first on the job's PYTHONPATH (before the job's own entries), and
// the folder it records into. --override KNOB=VALUE becomes the observer's override object.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ingero::harness {

struct ObserverSetup {
  std::string records_dir;
  std::vector<std::pair<std::string, std::string>> env;  // for the launched child
};

// Writes the observer into private_dir/observer and makes private_dir/observer-records.
Result<ObserverSetup> install_observer(const std::string& private_dir, const nlohmann::json& overrides);

// --override values as the observer's JSON object; an unknown knob or a bad value is bad input
// naming it.
Result<nlohmann::json> parse_overrides(const std::vector<std::string>& overrides);

}  // namespace ingero::harness
