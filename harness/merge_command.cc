// SPDX-License-Identifier: Apache-2.0
// ingero-bench merge --out FILE DB...: the trace DBs of several nodes (each node traced its
// own ranks) in one file, every run and sweep under new ids with the node it came from.
// Each run keeps its node's monotonic timestamps; runs.started_unix aligns the nodes.
// The inputs are only read; the output appears complete or not at all.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "harness/commands.h"
#include "harness/signals.h"
#include "reports/data/trace_data.h"
#include "tracer/trace_db.h"

namespace ingero::harness {

namespace {

namespace fs = std::filesystem;

// The half-written output and its SQLite side files, removed unless the merge finished.
class PartialFile {
 public:
  explicit PartialFile(std::string path) : path_(std::move(path)) {}
  ~PartialFile() {
    if (committed_) return;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((path_ + suffix).c_str());
  }
  const std::string& path() const { return path_; }
  void commit() { committed_ = true; }

 private:
  std::string path_;
  bool committed_ = false;
};

Status check_inputs(const MergeFlags& f) {
  std::error_code ec;
  if (fs::exists(f.out, ec))
    return Error::bad_input(fmt::format("--out {} exists; merge writes a new file", f.out),
                            "remove it or choose another name");
  if (Status s = check_writable_path("--out", f.out); !s) return s;
  std::set<fs::path> seen;
  for (const std::string& input : f.inputs) {
    const fs::path real = fs::weakly_canonical(input, ec);
    if (!seen.insert(real).second)
      return Error::bad_input(fmt::format("{} is given twice", input), "name each node's trace DB once");
  }
  return {};
}

}  // namespace

Result<int> run_merge_command(const MergeFlags& flags) {
  if (Status s = check_inputs(flags); !s) return s.error();
  // What a killed merge into the same name left (OUT.partial-PID and its side files).
  const fs::path out(flags.out);
  remove_stale_entries(out.has_parent_path() ? out.parent_path().string() : ".", out.filename().string() + ".partial-");
  std::vector<std::unique_ptr<reports::TraceFile>> inputs;
  for (const std::string& path : flags.inputs) {
    auto trace = reports::TraceFile::open(path);
    if (!trace) return trace.error();
    inputs.push_back(std::move(*trace));
  }
  PartialFile partial(fmt::format("{}.partial-{}", flags.out, getpid()));
  {
    auto db = tracer::TraceDb::open(partial.path());
    if (!db) return db.error();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (interrupt_requested()) return interrupt_exit_code();
      const std::string node = fs::path(flags.inputs[i]).stem().string();
      auto runs = db->import_from(inputs[i]->db(), node);
      if (!runs) return runs.error();
      std::printf("%s: %lld runs\n", flags.inputs[i].c_str(), static_cast<long long>(*runs));
    }
  }  // closed: back to a rollback journal, no side files
  std::error_code ec;
  fs::rename(partial.path(), flags.out, ec);
  if (ec)
    return Error::failure(fmt::format("could not move the merged file to {}: {}", flags.out, ec.message()));
  partial.commit();
  std::printf("merged %zu trace DBs into %s (ingero-bench runs --db %s lists them with their nodes)\n",
              inputs.size(), flags.out.c_str(), flags.out.c_str());
  return kExitOk;
}

}  // namespace ingero::harness
