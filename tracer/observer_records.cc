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
  std::optional<int64_t> stack;  // the id of its process's stack line
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
  std::map<std::pair<pid_t, int64_t>, std::vector<ProfileFrame>> stacks;  // (pid, id) -> frames, innermost first
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

// One line of an observer file, in the formats tracer/observer/ingero_observer.py documents, read here
// once for both readers (the finished job's, read_observed_job, and the running job's, ObserverTail). A
// field a line lacks, or holds as another type, takes its default; a batch row without its index, start
// and wait is left out.
struct Record {
  std::string type;
  pid_t pid = 0;
  int loader = 0;
  int64_t epoch = 0;
  pid_t tid = 0;
  // loader
  std::optional<json> knobs;  // none: the line has no knobs field
  json overrides_applied, overrides_original, overrides_not_applicable;
  std::string override_error, init_error;
  // epoch
  std::vector<pid_t> workers;
  pid_t pin_tid = 0;
  int64_t batches = 0;  // len(loader), 0 when unknown
  // batches
  std::vector<Batch> rows;
  // epoch_end (ts_ns), worker_ready (worker_id, ready_ns)
  uint64_t ts_ns = 0;
  int worker_id = 0;
  uint64_t ready_ns = 0;
  // summary
  int64_t dropped = 0, errors = 0;
  std::string error_sample;
  // stack: its id in the process and its frames, innermost first
  int64_t stack_id = -1;
  std::vector<ProfileFrame> frames;
};

std::vector<Batch> batch_rows(const json& j) {
  std::vector<Batch> out;
  auto rows = j.find("rows");
  if (rows == j.end() || !rows->is_array()) return out;
  for (const json& row : *rows) {
    if (!row.is_array() || row.size() < 3 || !row[0].is_number() || !row[1].is_number() || !row[2].is_number())
      continue;
    std::optional<int64_t> stack, bytes;
    if (row.size() > 3 && row[3].is_number_integer()) stack = row[3].get<int64_t>();
    if (row.size() > 4 && row[4].is_number_integer()) bytes = row[4].get<int64_t>();
    out.push_back({row[0].get<int64_t>(), row[1].get<uint64_t>(), row[2].get<uint64_t>(), stack, bytes});
  }
  return out;
}

// A stack line's frames as (qualified name, file, line executing); a malformed frame ends them.
std::vector<ProfileFrame> stack_frames(const json& j) {
  std::vector<ProfileFrame> out;
  auto frames = j.find("frames");
  if (frames == j.end() || !frames->is_array()) return out;
  for (const json& f : *frames) {
    if (!f.is_array() || f.size() < 3 || !f[0].is_string() || !f[1].is_string()) break;
    const bool line = f[2].is_number_integer();
    out.push_back({kFrameKindPython, f[0].get<std::string>(), f[1].get<std::string>(),
                   line ? std::optional<int64_t>(f[2].get<int64_t>()) : std::nullopt,
                   line ? std::optional<std::string>(kLineExecuting) : std::nullopt});
  }
  return out;
}

Record parse_record(const json& j) {
  Record r;
  r.type = field<std::string>(j, "type", "");
  r.pid = field<pid_t>(j, "pid", 0);
  r.loader = field<int>(j, "loader", 0);
  r.epoch = field<int64_t>(j, "epoch", 0);
  r.tid = field<pid_t>(j, "tid", 0);
  if (r.type == "loader") {
    if (j.contains("knobs")) r.knobs = j["knobs"];
    r.overrides_applied = j.value("overrides_applied", json());
    r.overrides_original = j.value("overrides_original", json::object());
    r.overrides_not_applicable = j.value("overrides_not_applicable", json());
    r.override_error = field<std::string>(j, "override_error", "");
    r.init_error = field<std::string>(j, "init_error", "");
  } else if (r.type == "epoch") {
    r.workers = field<std::vector<pid_t>>(j, "workers", {});
    r.pin_tid = field<pid_t>(j, "pin_tid", 0);
    r.batches = field<int64_t>(j, "batches", 0);
  } else if (r.type == "batches") {
    r.rows = batch_rows(j);
  } else if (r.type == "stack") {
    r.stack_id = field<int64_t>(j, "id", -1);
    r.frames = stack_frames(j);
  } else if (r.type == "epoch_end") {
    r.ts_ns = field<uint64_t>(j, "ts_ns", 0);
  } else if (r.type == "worker_ready") {
    r.worker_id = field<int>(j, "worker_id", 0);
    r.ready_ns = field<uint64_t>(j, "ready_ns", 0);
  } else if (r.type == "summary") {
    r.dropped = field<int64_t>(j, "dropped", 0);
    r.errors = field<int64_t>(j, "errors", 0);
    r.error_sample = field<std::string>(j, "error_sample", "");
  }
  return r;
}

void read_loader(const Record& rec, Reading& r) {
  ObservedLoader& l = loader_of(r, rec.pid, rec.loader);
  l.knobs_json = rec.knobs ? rec.knobs->dump() : "{}";
  json overrides = json::object();
  if (rec.overrides_applied.is_object() && !rec.overrides_applied.empty()) {
    overrides["applied"] = rec.overrides_applied;
    overrides["original"] = rec.overrides_original;
  }
  if (rec.overrides_not_applicable.is_object() && !rec.overrides_not_applicable.empty())
    overrides["not_applicable"] = rec.overrides_not_applicable;
  if (!rec.override_error.empty()) overrides["error"] = rec.override_error;
  if (!overrides.empty()) l.overrides_json = overrides.dump();
}

void read_epoch(const Record& rec, Reading& r, ObservedJob& job) {
  ObservedLoader& l = loader_of(r, rec.pid, rec.loader);
  ++l.epochs;
  l.workers = rec.workers;
  job.roles.workers.insert(l.workers.begin(), l.workers.end());
  if (rec.pin_tid > 0) job.roles.pin_threads.insert(rec.pin_tid);
  if (rec.batches > 0) r.batches_per_epoch[{rec.pid, rec.loader}] = rec.batches;
}

void read_line(const Record& rec, Reading& r, ObservedJob& job) {
  if (rec.type == "loader") {
    read_loader(rec, r);
  } else if (rec.type == "epoch") {
    read_epoch(rec, r, job);
  } else if (rec.type == "batches") {
    auto& batches = r.epochs[{rec.pid, rec.loader, rec.epoch, rec.tid}];
    batches.insert(batches.end(), rec.rows.begin(), rec.rows.end());
  } else if (rec.type == "stack") {
    r.stacks[{rec.pid, rec.stack_id}] = rec.frames;
  } else if (rec.type == "epoch_end") {
    r.epoch_ends[{rec.pid, rec.loader, rec.epoch}] = rec.ts_ns;
  } else if (rec.type == "worker_ready") {
    r.ready.push_back({rec.pid, rec.worker_id, rec.ready_ns});
    job.roles.workers.insert(rec.pid);
  } else if (rec.type == "summary") {
    job.dropped += rec.dropped;
    r.errors += rec.errors;
    if (rec.errors > 0 && r.error_sample.empty()) r.error_sample = rec.error_sample;
  }
}

// A process line's observer_version when it is not the one this reader knows (as written: a number or not).
std::optional<std::string> unknown_version(const json& j) {
  if (field<std::string>(j, "type", "") != "process") return std::nullopt;
  auto version = j.find("observer_version");
  if (version == j.end()) return std::nullopt;  // files from before the field: version 1's records
  if (version->is_number_integer() && version->get<int64_t>() == kObserverVersion) return std::nullopt;
  return version->dump();
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
    if (auto version = unknown_version(j)) {
      job.notes.push_back(fmt::format("{} was written by observer version {}, which this ingero-bench does not read "
                                      "(it reads version {}): its records are left out",
                                      path.filename().string(), *version, kObserverVersion));
      return;
    }
    read_line(parse_record(j), r, job);
  }
  if (bad > 0)
    job.notes.push_back(fmt::format("{}: {} unreadable line{} skipped (the process was killed while writing)",
                                    path.filename().string(), bad, bad == 1 ? "" : "s"));
}

// Each batch's compute is the time from its arrival to the loop's next request; the last
// batch of an epoch computes until the request that ended the epoch (when it was seen).
void add_epoch_events(const EpochKey& key, std::vector<Batch>& batches, std::optional<uint64_t> epoch_end,
                      const Reading& r, ObservedJob& job, ObservedLoader& loader) {
  const auto [pid, loader_id, epoch, tid] = key;
  std::sort(batches.begin(), batches.end(), [](const Batch& a, const Batch& b) { return a.start_ns < b.start_ns; });
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    const uint64_t arrived = b.start_ns + b.wait_ns;
    job.events.push_back({std::string(contract::op::kBatchWait), b.start_ns, b.wait_ns, pid, tid, b.index, loader_id,
                          b.bytes});
    if (auto stack = b.stack ? r.stacks.find({pid, *b.stack}) : r.stacks.end(); stack != r.stacks.end())
      job.stacks.push_back({tid, b.start_ns, IB_OP_BATCH_WAIT, stack->second});
    const std::optional<uint64_t> next = i + 1 < batches.size() ? std::optional(batches[i + 1].start_ns) : epoch_end;
    if (next && *next >= arrived) job.events.push_back({std::string(contract::op::kBatchCompute), arrived, *next - arrived, pid, tid, b.index, loader_id, std::nullopt});
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
                          ready.worker_id, std::nullopt, std::nullopt});
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
                     end == r.epoch_ends.end() ? std::nullopt : std::optional<uint64_t>(end->second), r, job,
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
      read_line(file, file.partial.substr(start, nl - start));
    file.partial.erase(0, start);
  }
}

void ObserverTail::read_line(File& file, const std::string& line) {
  const json j = parse_json_or_discarded(line);
  if (j.is_discarded() || !j.is_object()) return;
  if (unknown_version(j)) file.unknown_version = true;
  if (file.unknown_version) return;  // its records are another format's
  const Record rec = parse_record(j);
  if (rec.type == "epoch") {
    roles_.workers.insert(rec.workers.begin(), rec.workers.end());
    if (rec.pin_tid > 0) roles_.pin_threads.insert(rec.pin_tid);
    return;
  }
  if (rec.type == "worker_ready") roles_.workers.insert(rec.pid);
  if (rec.type != "loader" && rec.type != "batches") return;
  LiveLoader& l = loaders_[{rec.pid, rec.loader}];
  l.pid = rec.pid;
  l.loader = rec.loader;
  if (rec.type == "loader") {
    l.knobs = rec.knobs.value_or(json());
    l.overrides_applied = rec.overrides_applied.is_null() ? json::object() : rec.overrides_applied;
    l.overrides_not_applicable = rec.overrides_not_applicable.is_null() ? json::object() : rec.overrides_not_applicable;
    l.override_error = rec.override_error;
    l.init_error = rec.init_error;
    return;
  }
  const size_t before = l.batch_starts.size();
  if (l.wait_buckets.empty()) l.wait_buckets.assign(kBatchWaitBounds.size() + 1, 0);
  for (const Batch& b : rec.rows) {
    l.batch_starts.push_back(b.start_ns);
    l.wait_ns += b.wait_ns;
    const auto bucket = std::lower_bound(kBatchWaitBounds.begin(), kBatchWaitBounds.end(), b.wait_ns / 1e9);
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
