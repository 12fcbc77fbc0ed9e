// SPDX-License-Identifier: Apache-2.0
// A sweep's epoch deadline in a DDP job (the reference script, 2 Gloo ranks on the CPU): the
// ranks decide to stop together, so every rank's record says "stopped" and the merged record
// too. A rank stopping alone would leave the other failing in its next all-reduce, and the
// sweep would count a slow point as a failed one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/config.h"
#include "workloads/python_reference.h"
#include "workloads/result.h"

namespace {

namespace fs = std::filesystem;
using ingero::workloads::WorkloadConfig;

// A python3 that imports torch: $INGERO_PYTHON, python3 or /usr/bin/python3 (the harness's order).
std::optional<std::string> python_with_torch() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("INGERO_PYTHON")) candidates.emplace_back(env);
  candidates.insert(candidates.end(), {"python3", "/usr/bin/python3"});
  for (const auto& python : candidates)
    if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0) return python;
  return std::nullopt;
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

TEST(DdpDeadline, EveryRankStopsAtTheSameStepAndTheMergedRecordSaysStopped) {
  const auto python = python_with_torch();
  if (!python) GTEST_SKIP() << "no python3 with torch here (set INGERO_PYTHON)";
  const fs::path dir = fs::temp_directory_path() / ("ingero-ddp-deadline-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path script = dir / "ingero_dataloader.py";
  std::ofstream(script) << ingero::workloads::kPythonReferenceScript;

  WorkloadConfig config;
  config.mode = ingero::workloads::Mode::python;
  config.device = "cpu";
  config.ranks = 2;
  config.train = true;
  config.samples = 65536;
  // 256 short steps a rank and epoch, the deadline inside the first epoch: ranks deciding alone
  // cross it at different steps in most runs (7 of 8 before they decided together).
  config.batch_size = 128;
  config.features = 16;
  config.hidden = 32;
  config.epochs = 2;
  config.warmup_epochs = 0;
  config.seed = 1;
  config.epoch_deadline_s = 0.1;
  const fs::path result = dir / "result.json";
  const std::string command = *python + " " + shell_quote(script) + " --config " +
                              shell_quote(ingero::workloads::to_json(config).dump()) + " --result " +
                              shell_quote(result) + " >" + shell_quote(dir / "log") + " 2>&1";
  std::system(command.c_str());

  std::vector<std::optional<nlohmann::json>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(read_json(result.string() + ".rank" + std::to_string(r)));
  std::ifstream log(dir / "log");
  std::stringstream log_text;
  log_text << log.rdbuf();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(ranks[r].has_value()) << "rank " << r << " wrote no record\n" << log_text.str();
    EXPECT_EQ(ranks[r]->value("status", ""), "stopped") << "rank " << r << ": " << ranks[r]->dump() << "\n"
                                                          << log_text.str();
    EXPECT_NE(ranks[r]->value("error", "").find("deadline of 0.1 s"), std::string::npos) << ranks[r]->dump();
  }
  const nlohmann::json merged = ingero::workloads::merge_rank_records(ranks);
  EXPECT_EQ(merged.value("status", ""), "stopped") << merged.dump();
  fs::remove_all(dir);
}

}  // namespace
