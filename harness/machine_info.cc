// SPDX-License-Identifier: Apache-2.0
#include "harness/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <torch/csrc/api/include/torch/version.h>

namespace ingero::harness {

namespace {

// The value after "key:" on the first line that starts with key, trimmed.
std::string field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t") + 1);
    return value;
  }
  return {};
}

nlohmann::json nvidia_gpu() {
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    auto model = field((dir.path() / "information").string(), "Model");
    if (!model.empty()) return model;
  }
  return nullptr;
}

nlohmann::json nvidia_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return nullptr;
  return line;
}

}  // namespace

nlohmann::json machine_info(std::optional<bool> cuda_available) {
  utsname u{};
  uname(&u);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return {
      {"hostname", host},
      {"cpu_model", field("/proc/cpuinfo", "model name")},
      {"cpu_count", sysconf(_SC_NPROCESSORS_ONLN)},
      {"memory_bytes", static_cast<int64_t>(pages) * page},
      {"kernel", std::string(u.sysname) + " " + u.release + " " + u.machine},
      {"gpu", nvidia_gpu()},
      {"driver", nvidia_driver()},
      {"cuda_available", cuda_available ? nlohmann::json(*cuda_available) : nlohmann::json()},
      {"torch_version", TORCH_VERSION},
  };
}

}  // namespace ingero::harness
