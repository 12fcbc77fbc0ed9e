// SPDX-License-Identifier: Apache-2.0
#include "common/knobs.h"

namespace ingero {

std::string knob_text(const nlohmann::json& config, const char* key, const std::string& fallback) {
  if (!config.is_object() || !config.contains(key) || config[key].is_null()) return fallback;
  const auto& v = config[key];
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

const std::string& Knobs::get(std::string_view name) const {
  static const std::string kAbsent;
  auto it = values_.find(name);
  return it == values_.end() ? kAbsent : it->second;
}

void Knobs::set(std::string_view name, std::string value) {
  auto it = values_.find(name);
  if (it == values_.end()) values_.emplace(std::string(name), std::move(value));
  else it->second = std::move(value);
}

void to_json(nlohmann::json& j, const Knobs& knobs) {
  j = nlohmann::json::object();
  for (const auto& [name, value] : knobs) j[name] = value;
}

void from_json(const nlohmann::json& j, Knobs& knobs) {
  knobs = Knobs();
  for (const auto& [name, value] : j.get<std::map<std::string, std::string>>()) knobs.set(name, value);
}

Knobs storage_knobs(const nlohmann::json& config) {
  Knobs k;
  const std::string storage = knob_text(config, knob::kStorage, "memory");
  const bool memory = storage == "memory";
  k.set(knob::kStorage, storage);
  k.set(knob::kFormat, memory ? "raw" : knob_text(config, knob::kFormat, "raw"));
  k.set(knob::kPageCache, memory ? "" : knob_text(config, knob::kPageCache, "warm"));
  k.set(knob::kImageSize, k.get(knob::kFormat) == "jpeg" ? knob_text(config, knob::kImageSize, "") : "");
  return k;
}

}  // namespace ingero
