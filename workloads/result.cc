// SPDX-License-Identifier: Apache-2.0
#include "workloads/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace ingero::workloads {

namespace {

double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

nlohmann::json to_json(const Distribution& d) {
  return {{"total_s", d.total_s}, {"p50_s", d.p50_s}, {"p99_s", d.p99_s}, {"max_s", d.max_s}};
}

Distribution distribution_from_json(const nlohmann::json& j) {
  return {j.value("total_s", 0.0), j.value("p50_s", 0.0), j.value("p99_s", 0.0), j.value("max_s", 0.0)};
}

nlohmann::json workers_json(const std::vector<WorkerStart>& starts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& w : starts)
    out.push_back({{"id", w.id}, {"pid", w.pid}, {"fork_ns", w.fork_ns}, {"ready_ns", w.ready_ns}});
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

MainLoopTimings loop_from_json(const nlohmann::json& j, std::optional<int> rank) {
  MainLoopTimings loop;
  loop.rank = rank;
  loop.pid = j.value("pid", 0);
  loop.main_tid = j.value("main_tid", 0);
  for (const auto& w : j.value("workers", nlohmann::json::array()))
    loop.workers.push_back(WorkerStart{w.at("id").get<int>(), w.at("pid").get<pid_t>(), w.value("fork_ns", uint64_t{0}),
                                       w.at("ready_ns").get<uint64_t>()});
  for (const auto& b : j.value("batches", nlohmann::json::array()))
    loop.batches.push_back(BatchTiming{b.at("epoch").get<int>(), b.at("index").get<int64_t>(),
                                       b.at("wait_start_ns").get<uint64_t>(), b.at("wait_ns").get<uint64_t>(),
                                       b.at("compute_ns").get<uint64_t>()});
  return loop;
}

int status_severity(const std::string& status) {
  if (status == contract::record_status::kOk) return 0;
  if (status == contract::record_status::kStopped) return 1;
  if (status == contract::record_status::kInterrupted) return 2;
  return 3;
}

std::vector<double> seconds_of(const nlohmann::json& batches, const char* key) {
  std::vector<double> out;
  for (const auto& b : batches) out.push_back(b.value(key, 0.0) / 1e9);
  return out;
}

}  // namespace

nlohmann::json merge_rank_records(const std::vector<std::optional<nlohmann::json>>& records) {
  const nlohmann::json* first = nullptr;
  for (const auto& r : records)
    if (r && !first) first = &*r;
  nlohmann::json merged = first ? *first : nlohmann::json{{"schema", "ingero-bench/result"}, {"version", kResultVersion}};
  for (const char* key : {"rank", "local_rank"}) merged.erase(key);
  std::string status(contract::record_status::kOk), errors;
  std::vector<double> epochs, waits, computes;
  size_t measured_epochs = SIZE_MAX;
  double samples = 0, h2d = 0, checksum = 0, wait_total = 0, epoch_total = 0;
  nlohmann::json ranks = nlohmann::json::array(), notes = nlohmann::json::array();
  for (size_t r = 0; r < records.size(); ++r) {
    if (!records[r]) {
      status = contract::record_status::kFailed;
      errors += fmt::format("{}rank {} wrote no record (its process ended first)", errors.empty() ? "" : "; ", r);
      measured_epochs = 0;
      continue;
    }
    const nlohmann::json& rec = *records[r];
    const std::string rank_status = rec.value("status", std::string(contract::record_status::kFailed));
    if (status_severity(rank_status) > status_severity(status)) status = rank_status;
    if (rec.contains("error")) errors += fmt::format("{}rank {}: {}", errors.empty() ? "" : "; ", r, rec["error"].get<std::string>());
    const auto rank_epochs = rec.value("epoch_seconds", std::vector<double>{});
    measured_epochs = std::min(measured_epochs, rank_epochs.size());
    epochs.resize(std::max(epochs.size(), rank_epochs.size()), 0.0);
    for (size_t e = 0; e < rank_epochs.size(); ++e) epochs[e] = std::max(epochs[e], rank_epochs[e]);
    samples += rec.value("samples_per_epoch", 0.0);
    h2d += rec.value("h2d_bytes_per_epoch", 0.0);
    checksum += rec.value("checksum", 0.0);
    const nlohmann::json batches = rec.value("batches", nlohmann::json::array());
    for (double w : seconds_of(batches, "wait_ns")) waits.push_back(w);
    for (double c : seconds_of(batches, "compute_ns")) computes.push_back(c);
    wait_total += rec.value("wait", nlohmann::json::object()).value("total_s", 0.0);
    for (double e : rank_epochs) epoch_total += e;
    for (const auto& note : rec.value("notes", nlohmann::json::array()))
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    nlohmann::json entry = {{"rank", rec.value("rank", static_cast<int>(r))}};
    for (const char* key : {"status", "error", "pid", "main_tid", "epoch_seconds", "epoch_median_s", "samples_per_epoch",
                            "samples_per_s", "wait", "compute", "wait_fraction", "batches", "batches_truncated",
                            "workers"})
      if (rec.contains(key)) entry[key] = rec[key];
    ranks.push_back(std::move(entry));
  }
  epochs.resize(measured_epochs == SIZE_MAX ? 0 : measured_epochs);
  const double med = median(epochs);
  const Distribution wait = summarize(waits);
  merged["status"] = status;
  if (errors.empty()) merged.erase("error");
  else merged["error"] = errors;
  merged["notes"] = notes;
  merged["epoch_seconds"] = epochs;
  merged["epoch_median_s"] = med;
  merged["epoch_min_s"] = epochs.empty() ? 0.0 : *std::min_element(epochs.begin(), epochs.end());
  merged["epoch_max_s"] = epochs.empty() ? 0.0 : *std::max_element(epochs.begin(), epochs.end());
  merged["samples_per_epoch"] = static_cast<int64_t>(samples);
  merged["samples_per_s"] = med > 0 ? samples / med : 0.0;
  merged["h2d_bytes_per_epoch"] = static_cast<int64_t>(h2d);
  merged["h2d_gbps"] = med > 0 ? h2d / med / 1e9 : 0.0;
  merged["wait"] = to_json(wait);
  merged["compute"] = to_json(summarize(computes));
  merged["wait_fraction"] = epoch_total > 0 ? wait_total / epoch_total : 0.0;
  merged["checksum"] = checksum;
  merged["batches"] = nlohmann::json::array();
  merged["workers"] = nlohmann::json::array();
  merged["world_size"] = records.size();
  merged["ranks"] = ranks;
  return merged;
}

Distribution summarize(std::vector<double> seconds) {
  Distribution d;
  if (seconds.empty()) return d;
  std::sort(seconds.begin(), seconds.end());
  d.total_s = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  d.p50_s = nearest_rank(seconds, 0.50);
  d.p99_s = nearest_rank(seconds, 0.99);
  d.max_s = seconds.back();
  return d;
}

nlohmann::json to_json(const RunResult& r) {
  std::vector<double> waits, computes;
  nlohmann::json batches = nlohmann::json::array();
  for (const auto& b : r.batches) {
    waits.push_back(static_cast<double>(b.wait_ns) / 1e9);
    computes.push_back(static_cast<double>(b.compute_ns) / 1e9);
    batches.push_back({{"epoch", b.epoch},
                       {"index", b.index},
                       {"wait_start_ns", b.wait_start_ns},
                       {"wait_ns", b.wait_ns},
                       {"compute_ns", b.compute_ns}});
  }
  const double med = median(r.epoch_seconds);
  const double total_epoch = std::accumulate(r.epoch_seconds.begin(), r.epoch_seconds.end(), 0.0);
  const Distribution wait = summarize(waits);
  nlohmann::json j = {
      {"schema", "ingero-bench/result"},
      {"version", kResultVersion},
      {"label", r.config.label()},
      {"status", r.status},
      {"config", to_json(r.config)},
      {"notes", r.notes},
      {"pid", r.pid},
      {"main_tid", r.main_tid},
      {"epoch_seconds", r.epoch_seconds},
      {"epoch_median_s", med},
      {"epoch_min_s", r.epoch_seconds.empty() ? 0.0 : *std::min_element(r.epoch_seconds.begin(), r.epoch_seconds.end())},
      {"epoch_max_s", r.epoch_seconds.empty() ? 0.0 : *std::max_element(r.epoch_seconds.begin(), r.epoch_seconds.end())},
      {"samples_per_epoch", r.samples_per_epoch},
      {"samples_per_s", med > 0 ? static_cast<double>(r.samples_per_epoch) / med : 0.0},
      {"h2d_bytes_per_epoch", r.h2d_bytes_per_epoch},
      {"h2d_bytes_once", r.h2d_bytes_once},
      {"h2d_gbps", med > 0 ? static_cast<double>(r.h2d_bytes_per_epoch) / med / 1e9 : 0.0},
      {"wait", to_json(wait)},
      {"compute", to_json(summarize(computes))},
      {"wait_fraction", total_epoch > 0 ? wait.total_s / total_epoch : 0.0},
      {"batches", batches},
      {"batches_truncated", r.batches_truncated},
      {"checksum", r.checksum},
      {"loader", {{"max_in_flight", r.loader.max_in_flight}, {"worker_forks", r.loader.worker_forks}}},
      {"workers", workers_json(r.loader.starts)},
  };
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.storage.is_null()) j["storage"] = r.storage;
  return j;
}

Result<ResultSummary> summary_from_json(const nlohmann::json& j) {
  try {
    if (j.value("schema", "") != "ingero-bench/result") {
      return Error::bad_input("not an ingero-bench result record (schema field missing)");
    }
    if (j.at("version").get<int>() != kResultVersion) {
      return Error::bad_input("result record version " + j.at("version").dump() + " is not supported",
                              "re-run with this version of ingero-bench");
    }
    ResultSummary s;
    s.label = j.value("label", "");
    s.status = j.value("status", std::string(contract::record_status::kFailed));
    s.error = j.value("error", "");
    s.epoch_median_s = j.value("epoch_median_s", 0.0);
    s.epoch_min_s = j.value("epoch_min_s", 0.0);
    s.epoch_max_s = j.value("epoch_max_s", 0.0);
    s.samples_per_s = j.value("samples_per_s", 0.0);
    s.h2d_gbps = j.value("h2d_gbps", 0.0);
    if (j.contains("wait")) s.wait = distribution_from_json(j["wait"]);
    if (j.contains("compute")) s.compute = distribution_from_json(j["compute"]);
    s.wait_fraction = j.value("wait_fraction", 0.0);
    if (j.contains("ranks")) {
      for (const auto& r : j.at("ranks")) s.loops.push_back(loop_from_json(r, r.at("rank").get<int>()));
    } else {
      s.loops.push_back(loop_from_json(j, std::nullopt));
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(std::string("malformed result record: ") + e.what());
  }
}

}  // namespace ingero::workloads
