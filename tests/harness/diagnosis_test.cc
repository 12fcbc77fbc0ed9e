// SPDX-License-Identifier: Apache-2.0
// The main job's diagnosis says what explain says, in its words: the run's verdict line and its top
// chain's title are the lines the terminal's explain and MCP print (reports/text/summary_text.h).
#include <gtest/gtest.h>

#include <sstream>

#include "harness/diagnosis.h"
#include "reports/documents/trace_reports.h"
#include "reports/render/report_text.h"
#include "reports/text/summary_text.h"
#include "tests/reports/scenario.h"

namespace ingero::harness {
namespace {

using namespace reports::testing;

// A loader run whose main thread waits for every batch while a worker is preempted.
int64_t write_waiting_run(const std::string& path) {
  auto db = TraceFixture::create(path);
  const int64_t run = add_loader_run(*db, 500 * kMs);
  db->begin();
  for (int b = 0; b < 20; ++b) {
    const int64_t start = 10 * kMs + b * 20 * kMs;
    db->add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
    db->add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
    db->add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
    db->add_event(run, "offcpu_preempted", start, 10 * kMs, kWorkerA, kWorkerA);
  }
  db->commit();
  db->add_loss(run, "events", 0);
  return run;
}

TEST(Diagnosis, SaysTheVerdictAndTopChainInExplainsWords) {
  const std::string path = temp_db_path("diagnosis");
  const int64_t run = write_waiting_run(path);
  std::ostringstream diagnosis;
  print_diagnosis(path, {run}, diagnosis);

  auto trace = reports::TraceFile::open(path);
  ASSERT_TRUE(trace.ok());
  auto report = reports::make_explain_report(**trace, {path, run, false, std::nullopt, false});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_FALSE(report->chains.chains.empty());
  std::ostringstream terminal;
  reports::render_text(*report, terminal);

  const std::string verdict = reports::verdict_summary(report->metrics);
  const std::string title = reports::chain_title(report->chains.chains.front(), report->chain_words.front());
  EXPECT_NE(diagnosis.str().find(reports::run_name(report->run) + ": " + verdict + "\n"), std::string::npos)
      << diagnosis.str();
  EXPECT_NE(terminal.str().find("VERDICT: " + verdict), std::string::npos) << terminal.str();
  EXPECT_NE(diagnosis.str().find("  " + title + "\n"), std::string::npos) << diagnosis.str();
  EXPECT_NE(terminal.str().find("#1 " + title + "\n"), std::string::npos) << terminal.str();
}

TEST(Diagnosis, ARunThatIsNotThereSaysWhy) {
  const std::string path = temp_db_path("diagnosis-missing");
  write_waiting_run(path);
  std::ostringstream diagnosis;
  print_diagnosis(path, {42}, diagnosis);
  EXPECT_NE(diagnosis.str().find("run 42: cannot be analysed: "), std::string::npos) << diagnosis.str();
}

}  // namespace
}  // namespace ingero::harness
