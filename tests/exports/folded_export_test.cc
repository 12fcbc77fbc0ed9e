// SPDX-License-Identifier: Apache-2.0
// `export --format folded`: every sample of the DB on exactly one line, root frame first, per role too;
// a run without a profile is bad input and leaves no file. And the profile's samples in the Perfetto
// trace, as instants on their threads.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/sqlite.h"
#include "reports/documents/report_doc.h"
#include "reports/render/folded_export.h"
#include "reports/render/perfetto_export.h"
#include "reports/render/report_render.h"
#include "tests/exports/export_fixtures.h"

namespace ingero::reports::testing {
namespace {

struct FoldedLine {
  std::vector<std::string> frames;
  int64_t count = 0;
};

std::vector<FoldedLine> parse_folded(const std::string& text) {
  std::vector<FoldedLine> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    FoldedLine parsed;
    parsed.count = std::stoll(line.substr(space + 1));
    std::istringstream stack(line.substr(0, space));
    for (std::string frame; std::getline(stack, frame, ';');) parsed.frames.push_back(frame);
    lines.push_back(std::move(parsed));
  }
  return lines;
}

int64_t total(const std::vector<FoldedLine>& lines) {
  int64_t sum = 0;
  for (const auto& l : lines) sum += l.count;
  return sum;
}

class FoldedExport : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_db_path("folded");
    auto db = TraceFixture::create(path_);
    run_ = add_profiled_job(*db);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // The DB's own sum of samples, of one role's threads when role is set.
  int64_t db_samples(const std::string& role) const {
    auto db = sql::open(path_, sql::Mode::read_only, 5000);
    EXPECT_TRUE(db.ok());
    auto sum = db->query_int(
        "SELECT sum(s.samples) FROM profile_samples s JOIN threads t ON t.run_id = s.run_id AND t.tid = s.tid "
        "WHERE s.run_id = " + std::to_string(run_) + (role.empty() ? "" : " AND t.role = '" + role + "'"));
    EXPECT_TRUE(sum.ok() && *sum);
    return sum.ok() && *sum ? **sum : -1;
  }

  std::vector<FoldedLine> folded(const std::string& role) const {
    auto file = TraceFile::open(path_);
    EXPECT_TRUE(file.ok());
    auto text = folded_profile(**file, run_, role);
    EXPECT_TRUE(text.ok()) << text.error().message;
    return text.ok() ? parse_folded(*text) : std::vector<FoldedLine>{};
  }

  std::string path_;
  int64_t run_ = 0;
};

TEST_F(FoldedExport, CountsAddUpToTheDbsSamples) {
  const auto all = folded("");
  EXPECT_EQ(total(all), db_samples(""));
  EXPECT_EQ(total(all), kProfiledMainSamples + kProfiledWorkerSamples);
  const auto main = folded("main");
  EXPECT_EQ(total(main), db_samples("main"));
  EXPECT_EQ(total(main), kProfiledMainSamples);
  EXPECT_EQ(total(folded("worker")), db_samples("worker"));
}

TEST_F(FoldedExport, RootFrameFirstOneLinePerStackAcrossBuckets) {
  const auto main = folded("main");
  ASSERT_EQ(main.size(), 3u);  // the convolution's stack spans two buckets: one line
  std::map<std::string, int64_t> by_leaf;
  for (const auto& l : main) {
    ASSERT_FALSE(l.frames.empty());
    EXPECT_EQ(l.frames.front(), "<module>");
    by_leaf[l.frames.back()] = l.count;
  }
  EXPECT_EQ(by_leaf["at::native::_convolution [libtorch_cpu.so]"], 60);
  EXPECT_EQ(by_leaf["at::native::cat_out [libtorch_cpu.so]"], 30);
  EXPECT_EQ(by_leaf["log_step"], 10);
}

TEST_F(FoldedExport, AWrittenFileRoundTrips) {
  const std::string out = temp_db_path("folded-out") + ".folded";
  ASSERT_TRUE(export_folded(path_, run_, "worker", out).ok());
  auto text = read_file(out);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(total(parse_folded(*text)), db_samples("worker"));
  std::remove(out.c_str());
}

TEST_F(FoldedExport, ARunWithoutAProfileIsBadInputAndWritesNothing) {
  const std::string other = temp_db_path("folded-none");
  {
    auto db = TraceFixture::create(other);
    add_perfetto_run(*db);
  }
  const std::string out = temp_db_path("folded-none-out") + ".folded";
  const Status status = export_folded(other, std::nullopt, "", out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().exit_code, kExitBadInput);
  EXPECT_NE(status.error().message.find("has no CPU profile"), std::string::npos) << status.error().message;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "nothing half-written";
  const Status role = export_folded(path_, run_, "pin", out);
  ASSERT_FALSE(role.ok());
  EXPECT_NE(role.error().message.find("--role: run 1 has no samples of role 'pin'"), std::string::npos)
      << role.error().message;
}

// The Markdown report of a profiled run has a profile section: the status, then each role's top
// functions by self samples with their inclusive shares.
TEST_F(FoldedExport, MarkdownReportHasEachRolesTopFrames) {
  auto file = TraceFile::open(path_);
  ASSERT_TRUE(file.ok());
  auto doc = make_report_doc(**file, {std::nullopt, {run_}});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string md = render_report_markdown(*doc);
  const size_t section = md.find("### Where the CPU went in run " + std::to_string(run_));
  ASSERT_NE(section, std::string::npos) << md;
  const std::string rest = md.substr(section);
  EXPECT_NE(rest.find("- CPU profile: 200 on-CPU samples at 99 Hz per CPU; Python frames read"), std::string::npos)
      << rest;
  EXPECT_NE(rest.find("| function (main) | self | inclusive |"), std::string::npos) << rest;
  EXPECT_NE(rest.find("| at::native::_convolution [libtorch_cpu.so] | 60.0 % | 60.0 % |"), std::string::npos) << rest;
  EXPECT_NE(rest.find("| function (worker) | self | inclusive |"), std::string::npos) << rest;
  EXPECT_NE(rest.find("| ImageFolder.__getitem__ (datasets/folder.py:229) | 37.0 % | 100.0 % |"), std::string::npos)
      << rest;
  // Main's table comes before the workers'.
  EXPECT_LT(rest.find("function (main)"), rest.find("function (worker)"));
}

// The Markdown of a table of runs (--report, runs --report) gets a section per profiled run; a run
// without a profile gets none.
TEST_F(FoldedExport, ATableOfRunsInMarkdownHasEachProfiledRunsTopFrames) {
  const std::string path = temp_db_path("profile-sections");
  int64_t profiled = 0, unprofiled = 0;
  {
    auto db = TraceFixture::create(path);
    profiled = add_profiled_job(*db);
    RunSpec spec;
    spec.label = "no profile";
    unprofiled = db->add_run(spec);
  }
  auto file = TraceFile::open(path);
  ASSERT_TRUE(file.ok());
  auto sections = run_profiles(**file, {profiled, unprofiled});
  ASSERT_TRUE(sections.ok()) << sections.error().message;
  ASSERT_EQ(sections->size(), 1u);
  EXPECT_EQ((*sections)[0].run_id, profiled);
  const std::string md = render_profiles_markdown(*sections);
  std::remove(path.c_str());
  EXPECT_EQ(md.rfind("## Where the CPU went in run " + std::to_string(profiled) + " (python3 train.py)\n", 0), 0u)
      << md;
  EXPECT_NE(md.find("| at::native::_convolution [libtorch_cpu.so] | 60.0 % | 60.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| function (worker) | self | inclusive |"), std::string::npos) << md;
  EXPECT_EQ(render_profiles_markdown({}), "");
}

TEST_F(FoldedExport, PerfettoHasTheSamplesAsInstantsOnTheirThreads) {
  auto file = TraceFile::open(path_);
  ASSERT_TRUE(file.ok());
  auto doc = perfetto_trace(**file, run_);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  int64_t samples = 0;
  std::map<int64_t, int64_t> by_tid;
  for (const auto& e : (*doc)["traceEvents"]) {
    if (e.value("cat", "") != "cpu_profile") continue;
    EXPECT_EQ(e["ph"], "i");
    EXPECT_EQ(e["s"], "t");
    samples += e["args"]["samples"].get<int64_t>();
    by_tid[e["tid"].get<int64_t>()] += e["args"]["samples"].get<int64_t>();
    EXPECT_EQ(e["args"]["stack"].get<std::string>().rfind(e["tid"] == kMain ? "<module>" : "_worker_loop", 0), 0u);
  }
  EXPECT_EQ(samples, db_samples(""));
  EXPECT_EQ(by_tid[kMain], kProfiledMainSamples);
  EXPECT_EQ((*doc)["metadata"]["profile_samples"], db_samples(""));
}

}  // namespace
}  // namespace ingero::reports::testing
