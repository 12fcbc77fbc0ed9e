// SPDX-License-Identifier: Apache-2.0
// The report of an on-disk dataset's preparation (ingero-bench-workload --prepare-dataset): what
// was written or checked and the device's measured rate, or why it failed. Written by the workload
// program, read by the harness (what it says) and by the run that follows (the device, once
// measured); one writer and one parser for the three.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ingero::workloads {

struct PreparationReport {
  // Failed: why (naming the folder or the file) and the fix; the fields below are then empty.
  std::optional<std::string> error;
  std::string hint;
  std::string key;  // the dataset layout's key: the run uses the report only for its own dataset
  std::string dir;
  bool written_now = false;  // written by this preparation, rather than found already
  double write_s = 0;
  // The device holding the cache (page_cache::BlockDevice's fields).
  std::string device_name;
  std::string device_maj_min;
  std::optional<double> device_seq_read_mb_s;
  std::string device_how;

  nlohmann::json to_json() const;
};

// The report in text; nullopt for text that is not one (not JSON, or a field of another type).
std::optional<PreparationReport> preparation_report_from_text(std::string_view text);

}  // namespace ingero::workloads
