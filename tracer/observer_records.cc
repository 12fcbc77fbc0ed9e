// SPDX-License-Identifier: Apache-2.0
#include "tracer/observer_records.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"

namespace ingero::tracer {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Batch {
  int64_t index = 0;
  uint64_t start_ns = 0;
  uint64_t wait_ns = 0;
  std::optional<int64_t> bytes;  // the batch's tensor bytes, where the observer counted them
};
// One epoch of one loader, as iterated by one thread.
using EpochKey = std::tuple<pid_t, int, int64_t, pid_t>;  // pid, loader, epoch, tid

struct Reading {
  std::map<std::pair<pid_t, int>, ObservedLoader> loaders;
  std::map<EpochKey, std::vector<Batch>> epochs;
  std::map<std::tuple<pid_t, int, int64_t>, uint64_t> epoch_ends;
  struct Ready {
    pid_t pid;
    int worker_id;
    uint64_t ready_ns;
  };
  std::vector<Ready> ready;
  std::map<std::pair<pid_t, int>, int64_t> batches_per_epoch;  // len(loader) at its last epoch
  int64_t errors = 0;
  std::string error_sample;
};

template <class T>
T field(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

ObservedLoader& loader_of(Reading& r, pid_t pid, int loader) {
  ObservedLoader& l = r.loaders[{pid, loader}];
  l.pid = pid;
  l.loader = loader;
  return l;
}

void read_loader(const json& j, Reading& r) {
  ObservedLoader& l = loader_of(r, field<pid_t>(j, "pid", 0), field<int>(j, "loader", 0));
  l.knobs_json = j.contains("knobs") ? j["knobs"].dump() : "{}";
  const json applied = j.value("overrides_applied", json());
  const json not_applicable = j.value("overrides_not_applicable", json());
  json overrides = json::object();
  if (applied.is_object() && !applied.empty()) {
    overrides["applied"] = applied;
    overrides["original"] = j.value("overrides_original", json::object());
  }
  if (not_applicable.is_object() && !not_applicable.empty()) overrides["not_applicable"] = not_applicable;
  if (auto error = field<std::string>(j, "override_error", ""); !error.empty()) overrides["error"] = error;
  if (!overrides.empty()) l.overrides_json = overrides.dump();
}

void read_epoch(const json& j, Reading& r, ObservedJob& job) {
  const auto pid = field<pid_t>(j, "pid", 0);
  ObservedLoader& l = loader_of(r, pid, field<int>(j, "loader", 0));
  ++l.epochs;
  l.workers = field<std::vector<pid_t>>(j, "workers", {});
  job.roles.workers.insert(l.workers.begin(), l.workers.end());
  if (auto pin = field<pid_t>(j, "pin_tid", 0); pin > 0) job.roles.pin_threads.insert(pin);
  if (auto batches = field<int64_t>(j, "batches", 0); batches > 0)
    r.batches_per_epoch[{pid, field<int>(j, "loader", 0)}] = batches;
}

void read_batches(const json& j, Reading& r) {
  const EpochKey key{field<pid_t>(j, "pid", 0), field<int>(j, "loader", 0), field<int64_t>(j, "epoch", 0),
                     field<pid_t>(j, "tid", 0)};
  auto& batches = r.epochs[key];
  auto rows = j.find("rows");
  if (rows == j.end() || !rows->is_array()) return;
  for (const json& row : *rows) {
    if (!row.is_array() || row.size() < 3 || !row[0].is_number() || !row[1].is_number() || !row[2].is_number())
      continue;
    batches.push_back({row[0].get<int64_t>(), row[1].get<uint64_t>(), row[2].get<uint64_t>(),
                       row.size() > 3 && row[3].is_number_integer() ? std::optional(row[3].get<int64_t>()) : std::nullopt});
  }
}

void read_line(const json& j, Reading& r, ObservedJob& job) {
  const std::string type = field<std::string>(j, "type", "");
  if (type == "loader") {
    read_loader(j, r);
  } else if (type == "epoch") {
    read_epoch(j, r, job);
  } else if (type == "batches") {
    read_batches(j, r);
  } else if (type == "epoch_end") {
    r.epoch_ends[{field<pid_t>(j, "pid", 0), field<int>(j, "loader", 0), field<int64_t>(j, "epoch", 0)}] =
        field<uint64_t>(j, "ts_ns", 0);
  } else if (type == "worker_ready") {
    r.ready.push_back({field<pid_t>(j, "pid", 0), field<int>(j, "worker_id", 0), field<uint64_t>(j, "ready_ns", 0)});
    job.roles.workers.insert(field<pid_t>(j, "pid", 0));
  } else if (type == "summary") {
    job.dropped += field<int64_t>(j, "dropped", 0);
    const auto errors = field<int64_t>(j, "errors", 0);
    r.errors += errors;
    if (errors > 0 && r.error_sample.empty()) r.error_sample = field<std::string>(j, "error_sample", "");
  }
}

// Reads one file; a malformed line is skipped (only the last one can be, after a kill).
void read_file(const fs::path& path, Reading& r, ObservedJob& job) {
  auto text = proc::read_file(path.string());
  if (!text) {
    job.notes.push_back(fmt::format("observer file {} could not be read", path.filename().string()));
    return;
  }
  ++job.processes;
  std::istringstream lines(*text);
  std::string line;
  int bad = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    json j = parse_json_or_discarded(line);
    if (j.is_discarded() || !j.is_object()) {
      ++bad;
      continue;
    }
    read_line(j, r, job);
  }
  if (bad > 0)
    job.notes.push_back(fmt::format("{}: {} unreadable line{} skipped (the process was killed while writing)",
                                    path.filename().string(), bad, bad == 1 ? "" : "s"));
}

// Each batch's compute is the time from its arrival to the loop's next request; the last
// batch of an epoch computes until the request that ended the epoch (when it was seen).
void add_epoch_events(const EpochKey& key, std::vector<Batch>& batches, std::optional<uint64_t> epoch_end,
                      ObservedJob& job, ObservedLoader& loader) {
  const auto [pid, loader_id, epoch, tid] = key;
  std::sort(batches.begin(), batches.end(), [](const Batch& a, const Batch& b) { return a.start_ns < b.start_ns; });
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    const uint64_t arrived = b.start_ns + b.wait_ns;
    job.events.push_back({std::string(contract::op::kBatchWait), b.start_ns, b.wait_ns, pid, tid, b.index, loader_id, b.bytes});
    const std::optional<uint64_t> next = i + 1 < batches.size() ? std::optional(batches[i + 1].start_ns) : epoch_end;
    if (next && *next >= arrived) job.events.push_back({std::string(contract::op::kBatchCompute), arrived, *next - arrived, pid, tid, b.index, loader_id});
    loader.wait_ns += b.wait_ns;
  }
  loader.batches += static_cast<int64_t>(batches.size());
  job.batches += static_cast<int64_t>(batches.size());
  if (!batches.empty()) job.roles.trainers.insert(pid);
}

void add_worker_starts(const Reading& r, const std::vector<ThreadInfo>& threads, ObservedJob& job) {
  for (const auto& ready : r.ready) {
    auto t = std::find_if(threads.begin(), threads.end(),
                          [&](const ThreadInfo& info) { return info.tid == ready.pid && info.start_ns; });
    if (t == threads.end() || ready.ready_ns < *t->start_ns) continue;
    job.events.push_back({std::string(contract::op::kWorkerStart), *t->start_ns, ready.ready_ns - *t->start_ns, ready.pid, ready.pid,
                          ready.worker_id, std::nullopt});
  }
}

// The loader's knobs with len(loader) as batches_per_epoch (a loader whose construction failed has
// no knobs object, and keeps none).
std::string with_batches_per_epoch(const std::string& knobs_json, int64_t batches) {
  json knobs = parse_json_or_discarded(knobs_json);
  if (!knobs.is_object()) return knobs_json;
  knobs[std::string(contract::kBatchesPerEpochKnob)] = batches;
  return knobs.dump();
}

}  // namespace

ObservedJob read_observed_job(const std::string& dir, const std::vector<ThreadInfo>& threads) {
  ObservedJob job;
  Reading r;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("observer-", 0) == 0 && entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) read_file(path, r, job);
  for (auto& [key, batches] : r.epochs) {
    const auto [pid, loader, epoch, tid] = key;
    auto end = r.epoch_ends.find({pid, loader, epoch});
    add_epoch_events(key, batches,
                     end == r.epoch_ends.end() ? std::nullopt : std::optional<uint64_t>(end->second), job,
                     loader_of(r, pid, loader));
  }
  add_worker_starts(r, threads, job);
  for (auto& [key, loader] : r.loaders) {
    if (loader.knobs_json.empty()) loader.knobs_json = "{}";
    if (auto batches = r.batches_per_epoch.find(key); batches != r.batches_per_epoch.end())
      loader.knobs_json = with_batches_per_epoch(loader.knobs_json, batches->second);
    job.loaders.push_back(std::move(loader));
  }
  if (job.dropped > 0)
    job.notes.push_back(fmt::format("the observer recorded no more batches past its cap: {} not recorded", job.dropped));
  if (r.errors > 0)
    job.notes.push_back(fmt::format("the observer caught {} error{} of its own (the job was not affected){}", r.errors,
                                    r.errors == 1 ? "" : "s",
                                    r.error_sample.empty() ? "" : ": " + r.error_sample));
  return job;
}

// ---- ObserverTail -----------------------------------------------------------------------

void ObserverTail::poll() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("observer-", 0) != 0 || entry.path().extension() != ".jsonl") continue;
    File& file = files_[name];
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) continue;
    in.seekg(static_cast<std::streamoff>(file.offset));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    file.offset += chunk.size();
    file.partial += chunk;
    size_t start = 0;
    for (size_t nl; (nl = file.partial.find('\n', start)) != std::string::npos; start = nl + 1)
      read_line(file.partial.substr(start, nl - start));
    file.partial.erase(0, start);
  }
}

void ObserverTail::read_line(const std::string& line) {
  const json j = parse_json_or_discarded(line);
  if (j.is_discarded() || !j.is_object()) return;
  const std::string type = field<std::string>(j, "type", "");
  if (type == "epoch") {
    for (pid_t worker : field<std::vector<pid_t>>(j, "workers", {})) roles_.workers.insert(worker);
    if (auto pin = field<pid_t>(j, "pin_tid", 0); pin > 0) roles_.pin_threads.insert(pin);
    return;
  }
  if (type == "worker_ready") roles_.workers.insert(field<pid_t>(j, "pid", 0));
  if (type != "loader" && type != "batches") return;
  LiveLoader& l = loaders_[{field<pid_t>(j, "pid", 0), field<int>(j, "loader", 0)}];
  l.pid = field<pid_t>(j, "pid", 0);
  l.loader = field<int>(j, "loader", 0);
  if (type == "loader") {
    l.knobs = j.value("knobs", json());
    l.overrides_applied = j.value("overrides_applied", json::object());
    l.overrides_not_applicable = j.value("overrides_not_applicable", json::object());
    l.override_error = field<std::string>(j, "override_error", "");
    l.init_error = field<std::string>(j, "init_error", "");
    return;
  }
  auto rows = j.find("rows");
  if (rows == j.end() || !rows->is_array()) return;
  const size_t before = l.batch_starts.size();
  if (l.wait_buckets.empty()) l.wait_buckets.assign(kBatchWaitBounds.size() + 1, 0);
  for (const json& row : *rows) {
    if (!row.is_array() || row.size() < 2 || !row[1].is_number()) continue;
    l.batch_starts.push_back(row[1].get<uint64_t>());
    if (row.size() < 3 || !row[2].is_number()) continue;
    const uint64_t wait = row[2].get<uint64_t>();
    l.wait_ns += wait;
    const auto bucket = std::lower_bound(kBatchWaitBounds.begin(), kBatchWaitBounds.end(), wait / 1e9);
    ++l.wait_buckets[static_cast<size_t>(bucket - kBatchWaitBounds.begin())];
  }
  if (l.batch_starts.size() > before) roles_.trainers.insert(l.pid);
  // Rows of one thread come in order; another thread's (rare) interleave.
  if (before > 0 && l.batch_starts.size() > before && l.batch_starts[before] < l.batch_starts[before - 1])
    std::sort(l.batch_starts.begin(), l.batch_starts.end());
}

const LiveLoader* ObserverTail::busiest(std::optional<int> index) const {
  const LiveLoader* best = nullptr;
  for (const auto& [key, l] : loaders_) {
    if (index && l.loader != *index) continue;
    if (!best || l.batch_starts.size() > best->batch_starts.size()) best = &l;
  }
  return best;
}

}  // namespace ingero::tracer
