// SPDX-License-Identifier: Apache-2.0
// The NVML sampler against the fake libnvidia-ml.so.1 of fake_nvml.c, whose samples are a known
// function of their timestamps (see the top of fake_nvml.c).
#include "tracer/nvml_sampler.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/clock.h"

#ifndef INGERO_FAKE_NVML
#error "INGERO_FAKE_NVML must name the fake libnvidia-ml.so.1"
#endif

namespace ingero::tracer {
namespace {

using std::chrono::milliseconds;

constexpr const char* kFakeLibrary = INGERO_FAKE_NVML;
constexpr int64_t kPeriodUs = 20000;  // the fake's default sampling period
constexpr int64_t kPeriodNs = kPeriodUs * 1000;

const char* const kEnvironment[] = {
    "INGERO_NVML_LIBRARY", "FAKE_NVML_INIT_ERROR", "FAKE_NVML_GPUS",    "FAKE_NVML_GPM",
    "FAKE_NVML_MEM_UTIL",  "FAKE_NVML_VALUE_TYPE", "FAKE_NVML_PERIOD_US", "FAKE_NVML_HISTORY",
    "FAKE_NVML_LOG",
};

class NvmlSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }

  static void clear() {
    for (const char* name : kEnvironment) unsetenv(name);
  }
  static void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

  static NvmlSamplerOptions fast_options() {
    NvmlSamplerOptions options;
    options.library = kFakeLibrary;
    options.poll_interval = milliseconds(30);
    options.gpm_period = milliseconds(100);
    return options;
  }

  // Samples for `duration`, recording the CLOCK_MONOTONIC window around start() and stop().
  GpuSamples run_for(milliseconds duration, const NvmlSamplerOptions& options) {
    before_ns_ = monotonic_ns();
    auto sampler = NvmlSampler::start(options);
    std::this_thread::sleep_for(duration);
    GpuSamples samples = sampler->stop();
    after_ns_ = monotonic_ns();
    return samples;
  }

  int64_t before_ns_ = 0;
  int64_t after_ns_ = 0;
};

bool has_note(const GpuSamples& samples, const std::string& part) {
  return std::any_of(samples.notes.begin(), samples.notes.end(),
                     [&](const std::string& note) { return note.find(part) != std::string::npos; });
}

std::string notes_text(const GpuSamples& samples) {
  std::string text;
  for (const std::string& note : samples.notes) text += "\n  " + note;
  return text;
}

std::vector<GpuSample> of(const GpuSamples& samples, unsigned gpu, const std::string& metric) {
  std::vector<GpuSample> selected;
  for (const GpuSample& sample : samples.samples) {
    if (sample.gpu == gpu && sample.metric == metric) selected.push_back(sample);
  }
  return selected;
}

// The fake's sample index k of a sample, from its CLOCK_MONOTONIC timestamp.
long long sample_index(const GpuSample& sample, int64_t offset_ns) {
  double wall_us = (static_cast<double>(sample.ts_ns) + static_cast<double>(offset_ns)) / 1000.0;
  return std::llround(wall_us / kPeriodUs);
}

// fake_nvml.c's base values.
double base_value(const std::string& metric, unsigned gpu, long long k) {
  return metric == "gpu_util" ? static_cast<double>((7 * k + 13 * gpu) % 101)
                              : static_cast<double>((3 * k + 29 * gpu + 50) % 101);
}

double typed_value(int value_type, double base) {
  if (value_type == 0) return base + 0.25;
  if (value_type == 4 || value_type == 5) return base - 50;
  return base;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every sample of the stream is the fake's, one period apart with none missing, and the stream
// covers the sampler's lifetime.
void expect_stream(const GpuSamples& samples, unsigned gpu, const std::string& metric, int value_type,
                   int64_t before_ns, int64_t after_ns) {
  SCOPED_TRACE(metric + " of GPU " + std::to_string(gpu));
  std::vector<GpuSample> stream = of(samples, gpu, metric);
  ASSERT_GE(stream.size(), 5u);
  int64_t offset_ns = realtime_minus_monotonic_ns();
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const GpuSample& sample = stream[i];
    EXPECT_GE(static_cast<int64_t>(sample.ts_ns), before_ns);
    EXPECT_LE(static_cast<int64_t>(sample.ts_ns), after_ns);
    long long k = sample_index(sample, offset_ns);
    // Back on the wall clock, the sample sits on the fake's timestamp (to the microsecond it had).
    EXPECT_NEAR(static_cast<double>(static_cast<int64_t>(sample.ts_ns) + offset_ns),
                static_cast<double>(k * kPeriodNs), 100'000.0) << "sample " << i;
    EXPECT_EQ(sample.value, typed_value(value_type, base_value(metric, gpu, k))) << "sample " << i;
    if (i > 0) {
      EXPECT_EQ(sample.ts_ns - stream[i - 1].ts_ns, static_cast<uint64_t>(kPeriodNs)) << "sample " << i;
    }
  }
  EXPECT_LT(static_cast<int64_t>(stream.front().ts_ns) - before_ns, 2 * kPeriodNs);
  EXPECT_LT(after_ns - static_cast<int64_t>(stream.back().ts_ns), 2 * kPeriodNs);
}

TEST_F(NvmlSamplerTest, WithoutTheLibraryRecordsNothingAndNamesIt) {
  set("INGERO_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");  // overrides options.library
  GpuSamples samples = run_for(milliseconds(20), fast_options());
  EXPECT_TRUE(samples.samples.empty());
  EXPECT_TRUE(samples.gpus.empty());
  EXPECT_EQ(samples.source, "");
  EXPECT_TRUE(has_note(samples, "no NVML (/nonexistent/libnvidia-ml.so.1 not found)")) << notes_text(samples);
  EXPECT_TRUE(has_note(samples, "GPU busy share unknown")) << notes_text(samples);
}

TEST_F(NvmlSamplerTest, InitFailureIsANoteWithTheError) {
  set("FAKE_NVML_INIT_ERROR", "9");
  GpuSamples samples = run_for(milliseconds(20), fast_options());
  EXPECT_TRUE(samples.samples.empty());
  EXPECT_TRUE(samples.gpus.empty());
  EXPECT_EQ(samples.source, "");
  EXPECT_TRUE(has_note(samples, "nvmlInit_v2 failed: 9 (Driver Not Loaded)")) << notes_text(samples);
}

TEST_F(NvmlSamplerTest, NoGpuIsANoteAndTheLibraryIsShutDown) {
  std::string log = testing::TempDir() + "fake_nvml_no_gpu_" + std::to_string(getpid()) + ".log";
  std::remove(log.c_str());
  set("FAKE_NVML_GPUS", "0");
  set("FAKE_NVML_LOG", log);
  GpuSamples samples = run_for(milliseconds(20), fast_options());
  EXPECT_TRUE(samples.samples.empty());
  EXPECT_EQ(samples.source, "");
  EXPECT_TRUE(has_note(samples, "NVML sees no GPU")) << notes_text(samples);
  EXPECT_EQ(read_file(log), "init\nshutdown gpm_live=0 gpm_sample_get=0\n");
  std::remove(log.c_str());
}

TEST_F(NvmlSamplerTest, TwoGpusAreDescribedAndSampledWithoutDuplicates) {
  set("FAKE_NVML_GPUS", "2");
  set("FAKE_NVML_HISTORY", "50");  // a second of samples from before the sampler started
  GpuSamples samples = run_for(milliseconds(300), fast_options());
  EXPECT_EQ(samples.source, "nvml");

  ASSERT_EQ(samples.gpus.size(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    EXPECT_EQ(samples.gpus[i].index, i);
    EXPECT_EQ(samples.gpus[i].name, "Fake GPU " + std::to_string(i));
    EXPECT_EQ(samples.gpus[i].uuid, "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(i));
    EXPECT_EQ(samples.gpus[i].pci_bus_id, "00000000:1" + std::to_string(i) + ":00.0");
  }

  std::set<std::tuple<unsigned, std::string, uint64_t>> seen;
  for (const GpuSample& sample : samples.samples) {
    EXPECT_TRUE(seen.emplace(sample.gpu, sample.metric, sample.ts_ns).second)
        << "duplicate " << sample.metric << " of GPU " << sample.gpu << " at " << sample.ts_ns;
  }
  EXPECT_TRUE(std::is_sorted(samples.samples.begin(), samples.samples.end(),
                             [](const GpuSample& a, const GpuSample& b) { return a.ts_ns < b.ts_ns; }));
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    expect_stream(samples, gpu, "gpu_util", 1, before_ns_, after_ns_);
    expect_stream(samples, gpu, "mem_util", 1, before_ns_, after_ns_);
  }
  EXPECT_TRUE(of(samples, 0, "sm_active").empty());
}

// The live view (metrics' ingero_gpu_busy_ratio): each GPU's UUID with its last gpu_util as a ratio,
// while sampling; nothing before a sample came.
TEST_F(NvmlSamplerTest, LatestBusyIsEachGpusLastUtilisationAsARatio) {
  set("FAKE_NVML_GPUS", "2");
  auto sampler = NvmlSampler::start(fast_options());
  std::vector<std::pair<GpuInfo, double>> busy;
  for (int i = 0; i < 100 && busy.size() < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    busy = sampler->latest_busy();
  }
  GpuSamples samples = sampler->stop();
  ASSERT_EQ(busy.size(), 2u);
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    EXPECT_EQ(busy[gpu].first.uuid, "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(gpu));
    EXPECT_GE(busy[gpu].second, 0.0);
    EXPECT_LE(busy[gpu].second, 1.0);
    // One of the values sampled, divided by 100.
    const auto util = of(samples, gpu, "gpu_util");
    EXPECT_TRUE(std::any_of(util.begin(), util.end(),
                            [&](const GpuSample& s) { return std::abs(s.value / 100 - busy[gpu].second) < 1e-9; }))
        << busy[gpu].second;
  }
}

TEST_F(NvmlSamplerTest, EveryValueTypeIsRead) {
  set("INGERO_NVML_LIBRARY", kFakeLibrary);
  NvmlSamplerOptions options = fast_options();
  options.library = "/nonexistent/libnvidia-ml.so.1";  // the environment wins
  for (int value_type = 0; value_type <= 6; ++value_type) {
    SCOPED_TRACE("nvmlValueType_t " + std::to_string(value_type));
    set("FAKE_NVML_VALUE_TYPE", std::to_string(value_type));
    GpuSamples samples = run_for(milliseconds(120), options);
    expect_stream(samples, 0, "gpu_util", value_type, before_ns_, after_ns_);
    expect_stream(samples, 0, "mem_util", value_type, before_ns_, after_ns_);
  }
}

TEST_F(NvmlSamplerTest, AnUnknownValueTypeIsSkippedWithANote) {
  set("FAKE_NVML_VALUE_TYPE", "7");
  GpuSamples samples = run_for(milliseconds(60), fast_options());
  EXPECT_TRUE(samples.samples.empty());
  EXPECT_TRUE(has_note(samples, "GPU 0: gpu_util samples of unknown value type 7 skipped"))
      << notes_text(samples);
}

TEST_F(NvmlSamplerTest, AnUnsupportedMetricIsANoteAndTheOthersGoOn) {
  set("FAKE_NVML_MEM_UTIL", "unsupported");
  GpuSamples samples = run_for(milliseconds(150), fast_options());
  EXPECT_TRUE(of(samples, 0, "mem_util").empty());
  expect_stream(samples, 0, "gpu_util", 1, before_ns_, after_ns_);
  EXPECT_TRUE(has_note(samples,
                       "GPU 0: mem_util not sampled: nvmlDeviceGetSamples failed: 3 (Not Supported)"))
      << notes_text(samples);
}

TEST_F(NvmlSamplerTest, GpmUnsupportedIsANote) {
  set("FAKE_NVML_GPM", "unsupported");
  GpuSamples samples = run_for(milliseconds(250), fast_options());
  EXPECT_TRUE(has_note(samples, "GPM not supported on GPU 0")) << notes_text(samples);
  EXPECT_TRUE(of(samples, 0, "sm_active").empty());
  expect_stream(samples, 0, "gpu_util", 1, before_ns_, after_ns_);
}

TEST_F(NvmlSamplerTest, GpmWithoutPermissionIsOneNoteAndStopsGpm) {
  std::string log = testing::TempDir() + "fake_nvml_gpm_" + std::to_string(getpid()) + ".log";
  std::remove(log.c_str());
  set("FAKE_NVML_GPM", "no_permission");
  set("FAKE_NVML_GPUS", "2");
  set("FAKE_NVML_LOG", log);
  GpuSamples samples = run_for(milliseconds(350), fast_options());
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    std::string expected = "GPM not permitted on GPU " + std::to_string(gpu) +
                           " (nvmlGpmSampleGet failed: 4 (Insufficient Permissions)): no sm_active";
    EXPECT_EQ(std::count(samples.notes.begin(), samples.notes.end(), expected), 1) << notes_text(samples);
    EXPECT_TRUE(of(samples, gpu, "sm_active").empty());
    expect_stream(samples, gpu, "gpu_util", 1, before_ns_, after_ns_);
  }
  // One refused nvmlGpmSampleGet per GPU, then no more; the GPM buffers were freed.
  EXPECT_EQ(read_file(log), "init\nshutdown gpm_live=0 gpm_sample_get=2\n");
  std::remove(log.c_str());
}

TEST_F(NvmlSamplerTest, GpmSmActiveComesFromConsecutiveSamples) {
  set("FAKE_NVML_GPM", "ok");
  set("FAKE_NVML_GPUS", "2");
  GpuSamples samples = run_for(milliseconds(450), fast_options());
  EXPECT_FALSE(has_note(samples, "GPM")) << notes_text(samples);
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    SCOPED_TRACE("GPU " + std::to_string(gpu));
    std::vector<GpuSample> sm = of(samples, gpu, "sm_active");
    ASSERT_GE(sm.size(), 3u);
    EXPECT_LE(sm.size(), 5u);
    int64_t previous_ns = before_ns_;
    for (std::size_t i = 0; i < sm.size(); ++i) {
      // Samples n = i and n = i + 1: (g + 1) * (2i + 1).
      EXPECT_DOUBLE_EQ(sm[i].value, (gpu + 1.0) * (2.0 * static_cast<double>(i) + 1.0)) << "sample " << i;
      EXPECT_LE(static_cast<int64_t>(sm[i].ts_ns), after_ns_);
      EXPECT_GE(static_cast<int64_t>(sm[i].ts_ns) - previous_ns, 90'000'000) << "sample " << i;
      previous_ns = static_cast<int64_t>(sm[i].ts_ns);
    }
    expect_stream(samples, gpu, "gpu_util", 1, before_ns_, after_ns_);
  }
}

TEST_F(NvmlSamplerTest, StopIsPromptAndDrainsWhatTheDriverHolds) {
  set("FAKE_NVML_GPM", "ok");
  NvmlSamplerOptions options = fast_options();
  options.poll_interval = milliseconds(10'000);
  options.gpm_period = milliseconds(10'000);
  int64_t before_ns = monotonic_ns();
  auto sampler = NvmlSampler::start(options);
  std::this_thread::sleep_for(milliseconds(200));
  auto stop_called = std::chrono::steady_clock::now();
  GpuSamples samples = sampler->stop();
  auto stop_took = std::chrono::steady_clock::now() - stop_called;
  int64_t after_ns = monotonic_ns();
  EXPECT_LT(stop_took, milliseconds(100));
  // The first poll came at start; the rest of the run is in the buffer stop() drained.
  expect_stream(samples, 0, "gpu_util", 1, before_ns, after_ns);
  // The final GPM sample covers the run since the first one.
  std::vector<GpuSample> sm = of(samples, 0, "sm_active");
  ASSERT_EQ(sm.size(), 1u);
  EXPECT_DOUBLE_EQ(sm[0].value, 1.0);
}

TEST_F(NvmlSamplerTest, DestructorWithoutStopUnloadsTheLibrary) {
  std::string log = testing::TempDir() + "fake_nvml_dtor_" + std::to_string(getpid()) + ".log";
  std::remove(log.c_str());
  set("FAKE_NVML_GPM", "ok");
  set("FAKE_NVML_LOG", log);
  {
    auto sampler = NvmlSampler::start(fast_options());
    std::this_thread::sleep_for(milliseconds(150));
  }
  EXPECT_EQ(read_file(log).rfind("init\nshutdown gpm_live=0 gpm_sample_get=", 0), 0u) << read_file(log);
  void* still_loaded = dlopen(kFakeLibrary, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(still_loaded, nullptr) << "the fake NVML is still mapped";
  if (still_loaded) dlclose(still_loaded);
  std::remove(log.c_str());
}

TEST_F(NvmlSamplerTest, SamplesBeyondTheCapAreCounted) {
  NvmlSamplerOptions options = fast_options();
  options.max_samples = 10;
  GpuSamples samples = run_for(milliseconds(200), options);
  EXPECT_EQ(samples.samples.size(), 10u);
  auto note = std::find_if(samples.notes.begin(), samples.notes.end(), [](const std::string& text) {
    return text.find("GPU samples beyond the cap of 10 were not kept") != std::string::npos;
  });
  ASSERT_NE(note, samples.notes.end()) << notes_text(samples);
  EXPECT_GT(std::stoll(*note), 0);
}

TEST_F(NvmlSamplerTest, StopTwiceGivesNothingTheSecondTime) {
  auto sampler = NvmlSampler::start(fast_options());
  std::this_thread::sleep_for(milliseconds(60));
  GpuSamples first = sampler->stop();
  GpuSamples second = sampler->stop();
  EXPECT_FALSE(first.samples.empty());
  EXPECT_TRUE(second.samples.empty());
  EXPECT_TRUE(has_note(second, "already called")) << notes_text(second);
}

}  // namespace
}  // namespace ingero::tracer
