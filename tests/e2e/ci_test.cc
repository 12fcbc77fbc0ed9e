// SPDX-License-Identifier: Apache-2.0
// ingero-bench ci: bad suites and baselines are refused, and the same build passes against its
// own baseline (twice; the second time it is said to be another machine's, a warning). A slowdown injected into one configuration is checked on synthetic epochs
// (tests/reports/ci_gate_test.cc), where its verdict does not ride on this machine's noise.
#include <gtest/gtest.h>

#include "tests/e2e/command.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace ingero {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kBinary = INGERO_BENCH_BINARY;

using testing::capture;
using testing::Output;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Two configurations with ~0.2 s epochs, each run the fewest times a suite may ask (3): the gate's
// verdicts, not its statistics, are what this suite checks. `loader_samples` scales the first one's work.
json suite(int64_t loader_samples) {
  auto args = [](const std::string& mode, int64_t samples) {
    return json{"--device", "cpu", "--mode", mode, "--num-workers", "0", "--samples", std::to_string(samples),
                "--batch-size", "8192", "--features", "16", "--hidden", "32", "--epochs", "5", "--warmup-epochs",
                "1", "--no-trace"};
  };
  return {{"schema", "ingero-bench/ci-suite"},
          {"name", "test-suite"},
          {"repeats", 3},
          {"configs",
           {{{"label", "loader w0"}, {"args", args("loader", loader_samples)}},
            {{"label", "loader-batched w0"}, {"args", args("loader-batched", 1048576)}}}}};
}

class Ci : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::SharedSetup setup = testing::shared_setup("ci-baseline", [](const std::string& dir) {
      write_file(dir + "/suite.json", suite(131072).dump());
      return capture(kBinary + " ci --suite " + dir + "/suite.json --baseline " + dir +
                     "/baseline.json --update-baseline");
    });
    dir_ = new std::string(setup.dir);
    baseline_ = new Output(setup.result);
    owned_ = setup.owned;
  }
  static void TearDownTestSuite() {
    if (owned_) fs::remove_all(*dir_);
  }
  void SetUp() override { ASSERT_EQ(baseline_->exit_code, 0) << baseline_->text; }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }
  // The cases run beside other tests (untimed: no RUN_SERIAL), so the threshold (5x) is wider than any
  // neighbour moves a median: what they check is the gate's verdicts, files and warnings. The gate's
  // statistics are checked on synthetic epochs, and its tight use is ci_gate_cpu_smoke, run alone.
  static Output gate(const std::string& suite_file, const std::string& baseline_file) {
    return capture(kBinary + " ci --suite " + suite_file + " --baseline " + baseline_file + " --junit " +
                   path("junit.xml") + " --summary " + path("summary.md") + " --threshold 400%");
  }
  static std::string* dir_;
  static Output* baseline_;
  static bool owned_;
};

std::string* Ci::dir_ = nullptr;
Output* Ci::baseline_ = nullptr;
bool Ci::owned_ = false;

// The second pass is against the same baseline said to come from another kind of machine: the
// machine changes no verdict, it only adds a warning (one gate run fewer than a case of its own).
TEST_F(Ci, TheSameBuildPassesAgainstItsOwnBaselineRepeatedlyAndAnotherMachineIsAWarning) {
  json baseline = json::parse(read_file(path("baseline.json")));
  EXPECT_EQ(baseline["schema"], "ingero-bench/ci-baseline");
  EXPECT_EQ(baseline["configs"]["loader w0"]["epoch_seconds"].size(), 3u);
  baseline["machine"]["cpu_model"] = "Some Other CPU";
  write_file(path("other-machine.json"), baseline.dump());
  const std::string warning = "warning: the baseline was measured on another kind of machine";
  for (const std::string& against : {path("baseline.json"), path("other-machine.json")}) {
    SCOPED_TRACE(against);
    auto r = gate(path("suite.json"), against);
    EXPECT_EQ(r.exit_code, 0) << r.text;
    const std::string junit = read_file(path("junit.xml"));
    EXPECT_NE(junit.find("tests=\"2\" failures=\"0\""), std::string::npos) << junit;
    EXPECT_EQ(junit.find("<failure"), std::string::npos) << junit;
    EXPECT_NE(read_file(path("summary.md")).find("| loader w0 |"), std::string::npos);
    const bool other = against == path("other-machine.json");
    EXPECT_EQ(r.text.find(warning) != std::string::npos, other) << r.text;
  }
}

TEST_F(Ci, BadSuitesAndBaselinesAreBadInput) {
  write_file(path("not-json.json"), "{ nope");
  json bad_flags = suite(131072);
  bad_flags["configs"][0]["args"].push_back("--epochs");
  bad_flags["configs"][0]["args"].push_back("zero");
  write_file(path("bad-flags.json"), bad_flags.dump());
  json other_suite = suite(131072);
  other_suite["name"] = "another-suite";
  write_file(path("other-suite.json"), other_suite.dump());
  const std::string baseline = " --baseline " + path("baseline.json");
  for (const std::string& args :
       {" --suite " + path("missing.json") + baseline, " --suite " + path("not-json.json") + baseline,
        " --suite " + path("bad-flags.json") + baseline, " --suite " + path("other-suite.json") + baseline,
        " --suite " + path("suite.json") + " --baseline " + path("missing-baseline.json"),
        " --suite " + path("suite.json") + baseline + " --threshold ten"}) {
    auto r = capture(kBinary + " ci" + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.text;
    EXPECT_NE(r.text.find("fix:"), std::string::npos) << args << "\n" << r.text;
  }
}

}  // namespace
}  // namespace ingero
