// SPDX-License-Identifier: Apache-2.0
#include "harness/observer_setup.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/knobs.h"
#include "common/list_text.h"
#include "tracer/observer_records.h"
#include "tracer/python_observer.h"

namespace ingero::harness {

namespace {

constexpr const char* kOverrideHint =
    "pass --override num_workers=N, prefetch_factor=N, pin_memory=on|off, persistent_workers=on|off or loader=N";

// Mode 0700 whatever the umask: the observer writes only into a folder of this user with that mode.
Status make_dir(const std::string& path) {
  if ((mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) || chmod(path.c_str(), 0700) != 0)
    return Error::failure(fmt::format("creating {}: {}", path, std::strerror(errno)));
  return {};
}

Result<int64_t> whole_number(const std::string& knob, const std::string& text, int64_t minimum) {
  const auto value = parse_digits(text, 1024);
  if (!value || static_cast<int64_t>(*value) < minimum)
    return Error::bad_input(fmt::format("--override {}={}: not a whole number from {} to 1024", knob, text, minimum),
                            kOverrideHint);
  return static_cast<int64_t>(*value);
}

Result<bool> on_off(const std::string& knob, const std::string& text) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return Error::bad_input(fmt::format("--override {}={}: expected on or off", knob, text), kOverrideHint);
}

}  // namespace

Result<nlohmann::json> parse_overrides(const std::vector<std::string>& overrides) {
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& item : overrides) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return Error::bad_input(fmt::format("--override '{}' is not KNOB=VALUE", item), kOverrideHint);
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    if (out.contains(name)) return Error::bad_input(fmt::format("--override {} is given twice", name), kOverrideHint);
    if (name == knob::kNumWorkers || name == "loader" || name == knob::kPrefetchFactor) {
      auto n = whole_number(name, value, name == knob::kPrefetchFactor ? 1 : 0);
      if (!n) return n.error();
      out[name] = *n;
    } else if (name == knob::kPinMemory || name == knob::kPersistentWorkers) {
      auto b = on_off(name, value);
      if (!b) return b.error();
      out[name] = *b;
    } else {
      return Error::bad_input(fmt::format("--override {}: not a DataLoader knob ingero-bench can change", name),
                              kOverrideHint);
    }
  }
  return out;
}

Result<ObserverSetup> install_observer(const std::string& private_dir, const nlohmann::json& overrides) {
  const std::string code_dir = private_dir + "/observer";
  ObserverSetup setup{private_dir + "/observer-records", {}};
  for (const std::string& dir : {code_dir, setup.records_dir})
    if (Status s = make_dir(dir); !s) return s.error();
  if (Status s = write_file_atomically(code_dir + "/sitecustomize.py", tracer::kObserverSitecustomize); !s)
    return s.error();
  if (Status s = write_file_atomically(code_dir + "/ingero_observer.py", tracer::kObserverModule); !s)
    return s.error();
  const char* existing = std::getenv("PYTHONPATH");
  setup.env.emplace_back("PYTHONPATH", existing && *existing ? code_dir + ":" + existing : code_dir);
  setup.env.emplace_back(tracer::kObserverDirEnv, setup.records_dir);
  if (!overrides.empty()) setup.env.emplace_back(tracer::kObserverOverridesEnv, overrides.dump());
  return setup;
}

}  // namespace ingero::harness
