// SPDX-License-Identifier: Apache-2.0
// On-disk datasets through the real binary: the python modes give the same checksums from
// memory, files and shards (the C++ modes: workloads_storage_test); a damaged cache fails the run naming the file; bad flags are exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/common/temp_dir.h"
#include "tests/e2e/command.h"

namespace ingero::testing {
namespace {

namespace fs = std::filesystem;
const char* kBinary = INGERO_BENCH_BINARY;

bool python_with_torch() { return std::system("/usr/bin/python3 -c 'import torch, PIL' >/dev/null 2>&1") == 0; }

class StorageE2e : public ::testing::Test {
 protected:
  // ingero-bench --workload dataloader, untraced, small, into out/<name>.
  Output run(const std::string& name, const std::string& flags) {
    return capture(std::string(kBinary) + " --workload dataloader --no-trace --device cpu --python /usr/bin/python3" +
                   " --samples 512 --batch-size 128 --features 8 --epochs 1 --seed 5 --dataset-cache " + dir_ +
                   "/cache --db " + dir_ + "/" + name + ".db --out " + dir_ + "/out-" + name + " " + flags);
  }
  // mode + workers -> record, of the runs in out/<name>.
  std::map<std::string, nlohmann::json> records(const std::string& name) {
    std::map<std::string, nlohmann::json> out;
    for (const auto& e : fs::directory_iterator(dir_ + "/out-" + name)) {
      std::ifstream f(e.path());
      const auto j = nlohmann::json::parse(f, nullptr, false);
      out[j["config"]["mode"].get<std::string>() + " w" + std::to_string(j["config"]["num_workers"].get<int>())] = j;
    }
    return out;
  }
  TempDir folder_{"ingero-storage-e2e"};
  const std::string& dir_ = folder_.path();
};

TEST_F(StorageE2e, PythonGivesTheSameChecksumsFromEveryStorage) {
  // The C++ modes' checksums are compared in workloads_storage_test (no process start-ups there;
  // ADamagedCache... runs them through the harness's preparation): here the python modes.
  if (!python_with_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch and PIL (apt-get install python3-torch python3-pil)";
  std::map<std::string, std::map<std::string, nlohmann::json>> by_storage;
  for (const char* storage : {"memory", "files", "shards"}) {
    const std::string direct = std::string(storage) != "files" ? ",python-direct" : "";
    const Output out = run(storage, "--mode python" + direct + " --num-workers 2 --storage " + storage);
    ASSERT_EQ(out.exit_code, 0) << out.text;
    by_storage[storage] = records(storage);
  }
  ASSERT_EQ(by_storage["memory"].size(), 2u);
  for (const auto& [run, memory] : by_storage["memory"]) {
    EXPECT_FALSE(memory.contains("storage"));
    for (const char* storage : {"files", "shards"}) {
      if (!by_storage[storage].count(run)) continue;  // python-direct: shards only
      const auto& disk = by_storage[storage].at(run);
      EXPECT_EQ(disk["status"], "ok") << run << " " << storage;
      EXPECT_EQ(disk["samples_per_epoch"], 512) << run << " " << storage;
      EXPECT_EQ(disk["checksum"].get<double>(), memory["checksum"].get<double>()) << run << " " << storage;
      EXPECT_EQ(disk["storage"]["storage"], storage);
      EXPECT_EQ(disk["storage"]["epochs"].size(), 1u) << disk["storage"].dump();
      EXPECT_TRUE(disk["storage"]["device"].contains("seq_read_mb_s"));
    }
  }
  // The first run of each storage wrote the entry; the rest reused it.
  int written = 0;
  for (const char* storage : {"files", "shards"})
    for (const auto& [run, record] : by_storage[storage]) written += record["storage"]["written_now"].get<bool>();
  EXPECT_EQ(written, 2);
}

TEST_F(StorageE2e, ADamagedCacheFailsTheRunNamingTheFile) {
  ASSERT_EQ(run("first", "--mode direct --storage files").exit_code, 0);
  const std::string entry = dir_ + "/cache/files-raw-512x8-seed5-v1";
  const std::string victim = entry + "/d0000/00000007.rec";
  ASSERT_TRUE(fs::exists(victim));
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x11');
  }
  Output corrupt = run("corrupt", "--mode loader --num-workers 1 --storage files");
  EXPECT_EQ(corrupt.exit_code, 1) << corrupt.text;
  EXPECT_NE(corrupt.text.find(victim), std::string::npos) << corrupt.text;
  // The results table's status too: the workload's message, not only how its process ended.
  EXPECT_NE(corrupt.text.find("| failed: loader worker 0"), std::string::npos) << corrupt.text;
  for (const auto& [run, record] : records("corrupt")) {
    EXPECT_EQ(record["status"], "failed") << run;
    EXPECT_NE(record.value("error", "").find(victim), std::string::npos) << record.value("error", "");
  }
  // The python mode's workers raise it in their own process: the run's error is still one line
  // naming the file (not the worker's traceback), in the record and in the DB.
  if (python_with_torch()) {
    Output python = run("corrupt-python", "--mode python --num-workers 1 --storage files");
    EXPECT_EQ(python.exit_code, 1) << python.text;
    for (const auto& [run, record] : records("corrupt-python")) {
      const std::string error = record.value("error", "");
      EXPECT_NE(error.find(victim + ": crc32 mismatch"), std::string::npos) << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
    const Output runs = capture(std::string(kBinary) + " runs --db " + dir_ + "/corrupt-python.db");
    EXPECT_NE(runs.text.find("failed: Caught DatasetError in DataLoader worker process 0. DatasetError: sample 7 in " +
                             victim + ": crc32 mismatch"),
              std::string::npos)
        << runs.text;
  }
  fs::resize_file(victim, 12);
  Output truncated = run("truncated", "--mode direct --storage files");
  EXPECT_EQ(truncated.exit_code, 1) << truncated.text;
  EXPECT_NE(truncated.text.find(victim), std::string::npos) << truncated.text;
  // Found damaged while the dataset was prepared, before the run started: still a run, stored as
  // failed with the cause (it once stored nothing), and shown in the table.
  const Output truncated_runs = capture(std::string(kBinary) + " runs --db " + dir_ + "/truncated.db");
  EXPECT_EQ(truncated_runs.exit_code, 0) << truncated_runs.text;
  EXPECT_NE(truncated_runs.text.find("failed: preparing the files dataset"), std::string::npos) << truncated_runs.text;
  EXPECT_NE(truncated_runs.text.find(victim + " has 12 bytes"), std::string::npos) << truncated_runs.text;
  EXPECT_NE(truncated.text.find("| failed: preparing the files dataset"), std::string::npos) << truncated.text;
  // A manifest of the wrong JSON types once aborted the workload program ("failed (exit code -1)").
  const std::string manifest = entry + "/manifest.json";
  std::ifstream in(manifest);
  nlohmann::json edited = nlohmann::json::parse(in);
  edited["files"][3][1] = "many";
  std::ofstream(manifest, std::ios::trunc) << edited.dump();
  Output mistyped = run("mistyped", "--mode direct --storage files");
  EXPECT_EQ(mistyped.exit_code, 1) << mistyped.text;
  EXPECT_NE(mistyped.text.find(entry + " is damaged: its manifest.json lists"), std::string::npos) << mistyped.text;
  EXPECT_NE(mistyped.text.find("fix: remove " + entry), std::string::npos) << mistyped.text;
  EXPECT_EQ(mistyped.text.find("exit code -1"), std::string::npos) << mistyped.text;
}

TEST_F(StorageE2e, BadStorageFlagsAreBadInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--mode resident --storage files", "--storage files with --mode resident"},
      {"--mode direct --format jpeg", "--format jpeg needs a dataset on disk"},
      {"--mode direct --page-cache cold", "--page-cache cold needs a dataset on disk"},
      {"--mode direct --storage files --format jpeg --image-size 3", "--image-size 3"},
      {"--mode direct --storage files --format jpeg --image-size 16", "--features 8 conflicts with --image-size 16"},
      {"--mode direct --storage disk", "--storage 'disk'"},
  };
  for (const auto& [flags, message] : cases) {
    // run() passes --features 8, which a jpeg image size conflicts with.
    const Output out = run("bad", flags);
    EXPECT_EQ(out.exit_code, 2) << flags << "\n" << out.text;
    EXPECT_NE(out.text.find(message), std::string::npos) << flags << "\n" << out.text;
    EXPECT_FALSE(fs::exists(dir_ + "/cache")) << flags << " wrote into the cache";
  }
}

// A cold per-file dataset read by the main thread itself, traced: the I/O is a cause, with its figures,
// and it reaches the Perfetto export.
TEST_F(StorageE2e, AColdPerFileDatasetReadInTheMainThreadIsAnIoCause) {
  if (geteuid() != 0) GTEST_SKIP() << "the eBPF tracer needs root (run the tests with sudo)";
  const std::string db = dir_ + "/traced.db";
  const Output out = capture(std::string(kBinary) + " --workload dataloader --device cpu --mode loader --num-workers 0" +
                             " --samples 3000 --batch-size 250 --features 100 --epochs 1 --seed 5 --storage files" +
                             " --page-cache cold --dataset-cache " + dir_ + "/cache --db " + db + " --out " + dir_ +
                             "/out-traced");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  const Output explained = capture(std::string(kBinary) + " explain --json --db " + db + " --run 1");
  ASSERT_EQ(explained.exit_code, 0) << explained.text;
  const auto report = nlohmann::json::parse(explained.text);
  const auto& io = report["metrics"]["io"];
  EXPECT_GT(io["iowait_ns"].get<int64_t>(), 0) << io.dump();
  EXPECT_GE(io["cache_pages_added"].get<int64_t>(), 3000) << io.dump();  // a page per sample file, at least
  bool io_cause = false;
  for (const auto& chain : report["causal_chains"])
    if (chain["cause"] == "main.io_wait") {
      io_cause = true;
      EXPECT_GT(chain["evidence"]["io_wait_ns"].get<int64_t>(), 0) << chain.dump();
      bool io_line = false;
      for (const auto& line : chain["timeline"]) io_line |= line.get<std::string>().rfind("[IO] ", 0) == 0;
      EXPECT_TRUE(io_line) << chain.dump();
    }
  EXPECT_TRUE(io_cause) << explained.text.substr(0, 4000);
  const std::string perfetto = dir_ + "/trace.json";
  ASSERT_EQ(capture(std::string(kBinary) + " export --db " + db + " --run 1 --out " + perfetto).exit_code, 0);
  std::ifstream f(perfetto);
  const std::string trace((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(trace.find("\"offcpu_io\""), std::string::npos);
  EXPECT_NE(trace.find("\"block_io\""), std::string::npos);
}

}  // namespace
}  // namespace ingero::testing
