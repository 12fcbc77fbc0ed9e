// SPDX-License-Identifier: Apache-2.0
#include "workloads/preparation_report.h"

#include "common/json_text.h"

namespace ingero::workloads {

namespace {

using nlohmann::json;

json text_or_null(const std::string& s) { return s.empty() ? json() : json(s); }

// The string at key ("" when absent or null); false when it is there with another type.
bool read_string(const json& j, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

}  // namespace

json PreparationReport::to_json() const {
  if (error) return {{"error", *error}, {"hint", hint}};
  return {{"key", key},
          {"dir", dir},
          {"written_now", written_now},
          {"write_s", write_s},
          {"device",
           {{"name", text_or_null(device_name)},
            {"maj_min", device_maj_min},
            {"seq_read_mb_s", device_seq_read_mb_s ? json(*device_seq_read_mb_s) : json()},
            {"how", device_how}}}};
}

std::optional<PreparationReport> preparation_report_from_text(std::string_view text) {
  const json j = parse_json_or_discarded(text);
  if (!j.is_object()) return std::nullopt;
  PreparationReport r;
  if (j.contains("error")) {
    std::string error;
    if (!read_string(j, "error", error) || !read_string(j, "hint", r.hint)) return std::nullopt;
    r.error = error;
    return r;
  }
  if (!read_string(j, "key", r.key) || !read_string(j, "dir", r.dir)) return std::nullopt;
  if (auto it = j.find("written_now"); it != j.end()) {
    if (!it->is_boolean()) return std::nullopt;
    r.written_now = it->get<bool>();
  }
  if (auto it = j.find("write_s"); it != j.end()) {
    if (!it->is_number()) return std::nullopt;
    r.write_s = it->get<double>();
  }
  if (auto it = j.find("device"); it != j.end() && !it->is_null()) {
    const json& d = *it;
    if (!d.is_object() || !read_string(d, "name", r.device_name) || !read_string(d, "maj_min", r.device_maj_min) ||
        !read_string(d, "how", r.device_how))
      return std::nullopt;
    if (auto rate = d.find("seq_read_mb_s"); rate != d.end() && !rate->is_null()) {
      if (!rate->is_number()) return std::nullopt;
      r.device_seq_read_mb_s = rate->get<double>();
    }
  }
  return r;
}

}  // namespace ingero::workloads
