// SPDX-License-Identifier: Apache-2.0
#include "workloads/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

}  // namespace

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
    s.status = j.value("status", "failed");
    s.error = j.value("error", "");
    s.epoch_median_s = j.value("epoch_median_s", 0.0);
    s.epoch_min_s = j.value("epoch_min_s", 0.0);
    s.epoch_max_s = j.value("epoch_max_s", 0.0);
    s.samples_per_s = j.value("samples_per_s", 0.0);
    s.h2d_gbps = j.value("h2d_gbps", 0.0);
    if (j.contains("wait")) s.wait = distribution_from_json(j["wait"]);
    if (j.contains("compute")) s.compute = distribution_from_json(j["compute"]);
    s.wait_fraction = j.value("wait_fraction", 0.0);
    s.pid = j.value("pid", 0);
    s.main_tid = j.value("main_tid", 0);
    for (const auto& w : j.value("workers", nlohmann::json::array()))
      s.workers.push_back(WorkerStart{w.at("id").get<int>(), w.at("pid").get<pid_t>(), w.value("fork_ns", uint64_t{0}),
                                      w.at("ready_ns").get<uint64_t>()});
    for (const auto& b : j.value("batches", nlohmann::json::array())) {
      s.batches.push_back(BatchTiming{b.at("epoch").get<int>(), b.at("index").get<int64_t>(),
                                      b.at("wait_start_ns").get<uint64_t>(), b.at("wait_ns").get<uint64_t>(),
                                      b.at("compute_ns").get<uint64_t>()});
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(std::string("malformed result record: ") + e.what());
  }
}

}  // namespace ingero::workloads
