// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ingero::harness {

// CPU model and count, memory, kernel, GPU and driver (from /proc/driver/nvidia when
// present), LibTorch version, whether CUDA is usable (null when not probed). Read once per invocation.
nlohmann::json machine_info(std::optional<bool> cuda_available);

}  // namespace ingero::harness
