#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ingero::harness {

// CPU model and count, memory, kernel, GPU and driver (from /proc/driver/nvidia when
// present), LibTorch version, whether CUDA is usable. Read once per invocation.
nlohmann::json machine_info(bool cuda_available);

}  // namespace ingero::harness
