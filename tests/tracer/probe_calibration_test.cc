// SPDX-License-Identifier: Apache-2.0
// The probe calibration with fake probes (no root), and the two ways a probe's place in a file is
// found agreeing with each other.
#include "tracer/probe_calibration.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tracer/call_probes.h"
#include "tracer/elf_symbols.h"
#include "tracer/uprobe_link.h"
#include "common/clock.h"

namespace ingero::tracer {
namespace {

class FakeProbes final : public CalibrationProbes {
 public:
  explicit FakeProbes(bool fail) : fail_(fail) {}
  Status attach(bool return_probe) override {
    ++attaches;
    if (fail_) return Error::failure("probing calibration_target: operation not permitted");
    return {};
  }
  void detach() override { ++detaches; }
  int attaches = 0, detaches = 0;

 private:
  bool fail_;
};

TEST(ProbeCalibration, ProbesThatCostNothingMeasureNearZeroInAlternatingRounds) {
  FakeProbes probes(false);
  auto cost = calibrate_probe_cost(probes, {3, 2000});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(probes.attaches, 6);  // entry-only and entry + return, each round
  EXPECT_EQ(probes.detaches, 6);
  EXPECT_GE(cost->entry_ns, 0);
  EXPECT_LT(cost->entry_ns, 500);  // no trap: only the loop's noise
  EXPECT_LT(cost->call_ns, 500);
}

// Probes that cost nothing, attached while three busy threads share this thread's CPU: a loop
// timed by the wall clock would take four times as long probed and read as a costly probe.
class ProbesBesideBusyThreads final : public CalibrationProbes {
 public:
  explicit ProbesBesideBusyThreads(int cpu) : cpu_(cpu) {}
  ~ProbesBesideBusyThreads() override { detach(); }
  Status attach(bool) override {
    stop_ = false;
    for (int i = 0; i < 3; ++i)
      busy_.emplace_back([this] {
        pin_to(cpu_);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    return {};
  }
  void detach() override {
    stop_ = true;
    for (auto& t : busy_) t.join();
    busy_.clear();
  }
  static void pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  }

 private:
  int cpu_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> busy_;
};

TEST(ProbeCalibration, ACpuSharedWithBusyThreadsIsNotMistakenForTheProbesCost) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  const int cpu = sched_getcpu();
  ProbesBesideBusyThreads::pin_to(cpu);
  ProbesBesideBusyThreads probes(cpu);
  // Loops of several scheduler slices, so that the busy threads surely run within them.
  auto cost = calibrate_probe_cost(probes, {3, 40000});
  sched_setaffinity(0, sizeof(before), &before);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_LT(cost->entry_ns, 150);  // timed by the wall clock: 560-710 ns on a 2-core machine
  EXPECT_LT(cost->call_ns, 150);
}

TEST(ProbeCalibration, AProbeThatCannotBeAttachedIsAnErrorNamingWhy) {
  FakeProbes probes(true);
  auto cost = calibrate_probe_cost(probes);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.error().message.find("not permitted"), std::string::npos);
  EXPECT_FALSE(calibrate_probe_cost(probes, {0, 10}).ok());
}

// /proc/self/maps (the calibration) and the ELF symbol table (the duty cycle) agree on where
// calibration_target is in this test's own file.
// A close reads its edge once, before its time is set, however many links it closes: a window's
// last readings are taken while every one of its probes still counts.
TEST(LinkCloser, AClosesEdgeIsReadOnceBeforeItsTimeWhateverTheNumberOfLinks) {
  LinkCloser closer;
  for (size_t links = 0; links <= 3; ++links) {
    std::atomic<int> readings{0};
    std::atomic<int64_t> read_at{0};
    std::vector<UprobeLink> closing(links);
    auto began = closer.close(std::move(closing), [&] {
      read_at = monotonic_ns();
      ++readings;
    });
    closer.wait();
    EXPECT_EQ(readings.load(), 1) << links << " links";
    EXPECT_GE(static_cast<int64_t>(began->load()), read_at.load()) << links << " links";
  }
}

TEST(ElfSymbols, TheCalibrationTargetIsWhereTheSymbolTableSaysItIs) {
  auto where = calibration_target_location();
  ASSERT_TRUE(where.ok()) << where.error().message;
  auto offsets = function_file_offsets(where->path, {"ingero_calibration_target", "no_such_function_here"});
  ASSERT_TRUE(offsets.ok()) << offsets.error().message;
  ASSERT_EQ(offsets->count("ingero_calibration_target"), 1u);
  EXPECT_EQ(offsets->at("ingero_calibration_target"), where->offset);
  EXPECT_EQ(offsets->count("no_such_function_here"), 0u);
}

TEST(ElfSymbols, TheCudaRuntimesFunctionsAreFoundAndANonElfFileIsBadInput) {
  if (access(INGERO_CUDART, R_OK) != 0) GTEST_SKIP() << INGERO_CUDART << " is absent";
  auto offsets = function_file_offsets(INGERO_CUDART, {"cudaEventRecord", "cudaStreamSynchronize"});
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->size(), 2u);
  for (const auto& [name, offset] : *offsets) EXPECT_GT(offset, 0u) << name;
  auto bad = function_file_offsets("/etc/hostname", {"cudaEventRecord"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().exit_code, kExitBadInput);
  EXPECT_NE(bad.error().message.find("/etc/hostname"), std::string::npos);
}

// --cudart /etc/passwd once started a run that failed at the tracer's start.
TEST(ElfSymbols, ALibraryGivenByHandIsASharedObjectDefiningACudaFunction) {
  auto text = check_call_library("--cudart", "/etc/passwd");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().exit_code, kExitBadInput);
  EXPECT_NE(text.error().message.find("--cudart /etc/passwd is not an ELF shared object"), std::string::npos)
      << text.error().message;
  EXPECT_FALSE(text.error().hint.empty());
  // A shared object, but not a CUDA one: the libc this test maps.
  std::string libc;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line) && libc.empty();)
    if (auto at = line.find("/libc.so.6"); at != std::string::npos) libc = line.substr(line.find('/'));
  ASSERT_FALSE(libc.empty());
  auto other = check_call_library("--cudart", libc);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("defines none of the CUDA runtime"), std::string::npos) << other.error().message;
  EXPECT_FALSE(check_call_library("--cudart", "/nonexistent/libcudart.so").ok());
  if (access(INGERO_CUDART, R_OK) == 0) {
    EXPECT_TRUE(check_call_library("--cudart", INGERO_CUDART).ok());
  }
}

}  // namespace
}  // namespace ingero::tracer
