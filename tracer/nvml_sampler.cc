// SPDX-License-Identifier: Apache-2.0
#include "tracer/nvml_sampler.h"

#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/result.h"
#include "tracer/nvml_abi.h"

namespace ingero::tracer {
namespace {

// nvml.h's names (tracer/nvml_abi.h), as this file uses them.
namespace nvml {

using Return = nvmlReturn_t;
constexpr Return kSuccess = NVML_SUCCESS;
constexpr Return kErrorNotSupported = NVML_ERROR_NOT_SUPPORTED;
constexpr Return kErrorNoPermission = NVML_ERROR_NO_PERMISSION;
constexpr Return kErrorNotFound = NVML_ERROR_NOT_FOUND;
constexpr Return kErrorInsufficientSize = NVML_ERROR_INSUFFICIENT_SIZE;
constexpr Return kErrorGpuIsLost = NVML_ERROR_GPU_IS_LOST;

using Device = nvmlDevice_t;
using GpmSample = nvmlGpmSample_t;

constexpr int kGpuUtilizationSamples = NVML_GPU_UTILIZATION_SAMPLES;
constexpr int kMemoryUtilizationSamples = NVML_MEMORY_UTILIZATION_SAMPLES;

enum ValueType : int {
  kDouble = NVML_VALUE_TYPE_DOUBLE,
  kUnsignedInt = NVML_VALUE_TYPE_UNSIGNED_INT,
  kUnsignedLong = NVML_VALUE_TYPE_UNSIGNED_LONG,
  kUnsignedLongLong = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG,
  kSignedLongLong = NVML_VALUE_TYPE_SIGNED_LONG_LONG,
  kSignedInt = NVML_VALUE_TYPE_SIGNED_INT,
  kUnsignedShort = NVML_VALUE_TYPE_UNSIGNED_SHORT,
};

using Value = nvmlValue_t;
using Sample = nvmlSample_t;
static_assert(sizeof(Sample) == 16);
using PciInfo = nvmlPciInfo_t;
static_assert(sizeof(PciInfo) == 68);
using GpmSupport = nvmlGpmSupport_t;
using GpmMetric = nvmlGpmMetric_t;
static_assert(sizeof(GpmMetric) == 40);
using GpmMetricsGet = nvmlGpmMetricsGet_t;

constexpr unsigned kDeviceNameBufferSize = NVML_DEVICE_NAME_V2_BUFFER_SIZE;
constexpr unsigned kDeviceUuidBufferSize = NVML_DEVICE_UUID_V2_BUFFER_SIZE;
constexpr unsigned kGpmSupportVersion = NVML_GPM_SUPPORT_VERSION;
constexpr unsigned kGpmMetricsGetVersion = NVML_GPM_METRICS_GET_VERSION;
constexpr unsigned kGpmMetricSmUtil = NVML_GPM_METRIC_SM_UTIL;

}  // namespace nvml

// The library's entry points; the GPM ones and the descriptive ones may be missing.
struct NvmlFunctions {
  nvml::Return (*init_v2)() = nullptr;
  nvml::Return (*shutdown)() = nullptr;
  const char* (*error_string)(nvml::Return) = nullptr;
  nvml::Return (*device_get_count_v2)(unsigned int*) = nullptr;
  nvml::Return (*device_get_handle_by_index_v2)(unsigned int, nvml::Device*) = nullptr;
  nvml::Return (*device_get_name)(nvml::Device, char*, unsigned int) = nullptr;
  nvml::Return (*device_get_uuid)(nvml::Device, char*, unsigned int) = nullptr;
  nvml::Return (*device_get_pci_info)(nvml::Device, nvml::PciInfo*) = nullptr;
  nvml::Return (*device_get_samples)(nvml::Device, int, unsigned long long, int*, unsigned int*,
                                     nvml::Sample*) = nullptr;
  nvml::Return (*gpm_query_device_support)(nvml::Device, nvml::GpmSupport*) = nullptr;
  nvml::Return (*gpm_sample_alloc)(nvml::GpmSample*) = nullptr;
  nvml::Return (*gpm_sample_free)(nvml::GpmSample) = nullptr;
  nvml::Return (*gpm_sample_get)(nvml::Device, nvml::GpmSample) = nullptr;
  nvml::Return (*gpm_metrics_get)(nvml::GpmMetricsGet*) = nullptr;

  bool has_gpm() const {
    return gpm_query_device_support && gpm_sample_alloc && gpm_sample_free && gpm_sample_get &&
           gpm_metrics_get;
  }
};

constexpr std::string_view kUnknownShare = "GPU busy share unknown";

template <class F>
bool bind(void* handle, const char* name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(handle, name));
  return out != nullptr;
}

// The loaded library, initialised: nvmlShutdown and dlclose when it goes.
class NvmlLibrary {
 public:
  // The error's message is the note to record.
  static Result<std::unique_ptr<NvmlLibrary>> open(const std::string& path) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return Error::failure(load_failure(path));
    std::unique_ptr<NvmlLibrary> library(new NvmlLibrary(handle));
    if (const char* missing = library->bind_all()) {
      return Error::failure(fmt::format("no NVML ({} lacks {}): {}", path, missing, kUnknownShare));
    }
    if (nvml::Return rc = library->fn.init_v2(); rc != nvml::kSuccess) {
      return Error::failure(
          fmt::format("nvmlInit_v2 failed: {}: {}", library->describe(rc), kUnknownShare));
    }
    library->initialised_ = true;
    return Result<std::unique_ptr<NvmlLibrary>>(std::move(library));
  }

  ~NvmlLibrary() {
    if (initialised_) fn.shutdown();
    dlclose(handle_);
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // "9 (Driver Not Loaded)", or the bare code where the library has no string for it.
  std::string describe(nvml::Return rc) const {
    const char* text = fn.error_string ? fn.error_string(rc) : nullptr;
    return text && *text ? fmt::format("{} ({})", rc, text) : fmt::format("{}", rc);
  }

  NvmlFunctions fn;

 private:
  explicit NvmlLibrary(void* handle) : handle_(handle) {}

  static std::string load_failure(const std::string& path) {
    const char* why = dlerror();
    std::string_view reason = why ? why : "";
    if (reason.empty() || reason.find("No such file") != std::string_view::npos) {
      return fmt::format("no NVML ({} not found): {}", path, kUnknownShare);
    }
    return fmt::format("no NVML ({} could not be loaded: {}): {}", path, reason, kUnknownShare);
  }

  // The first required entry point that is missing, or null.
  const char* bind_all() {
    if (!bind(handle_, "nvmlInit_v2", fn.init_v2)) return "nvmlInit_v2";
    if (!bind(handle_, "nvmlShutdown", fn.shutdown)) return "nvmlShutdown";
    if (!bind(handle_, "nvmlDeviceGetCount_v2", fn.device_get_count_v2)) return "nvmlDeviceGetCount_v2";
    if (!bind(handle_, "nvmlDeviceGetHandleByIndex_v2", fn.device_get_handle_by_index_v2)) {
      return "nvmlDeviceGetHandleByIndex_v2";
    }
    if (!bind(handle_, "nvmlDeviceGetSamples", fn.device_get_samples)) return "nvmlDeviceGetSamples";
    bind(handle_, "nvmlErrorString", fn.error_string);
    bind(handle_, "nvmlDeviceGetName", fn.device_get_name);
    bind(handle_, "nvmlDeviceGetUUID", fn.device_get_uuid);
    if (!bind(handle_, "nvmlDeviceGetPciInfo_v3", fn.device_get_pci_info)) {
      bind(handle_, "nvmlDeviceGetPciInfo_v2", fn.device_get_pci_info);
    }
    bind(handle_, "nvmlGpmQueryDeviceSupport", fn.gpm_query_device_support);
    bind(handle_, "nvmlGpmSampleAlloc", fn.gpm_sample_alloc);
    bind(handle_, "nvmlGpmSampleFree", fn.gpm_sample_free);
    bind(handle_, "nvmlGpmSampleGet", fn.gpm_sample_get);
    bind(handle_, "nvmlGpmMetricsGet", fn.gpm_metrics_get);
    return nullptr;
  }

  void* handle_;
  bool initialised_ = false;
};

// One GPM sample buffer, freed when it goes (before the library is shut down).
class GpmBuffer {
 public:
  GpmBuffer() = default;
  GpmBuffer(const NvmlLibrary* library, nvml::GpmSample sample) : library_(library), sample_(sample) {}
  GpmBuffer(GpmBuffer&& other) noexcept
      : library_(std::exchange(other.library_, nullptr)), sample_(std::exchange(other.sample_, nullptr)) {}
  GpmBuffer& operator=(GpmBuffer&& other) noexcept {
    if (this != &other) {
      release();
      library_ = std::exchange(other.library_, nullptr);
      sample_ = std::exchange(other.sample_, nullptr);
    }
    return *this;
  }
  ~GpmBuffer() { release(); }

  nvml::GpmSample get() const { return sample_; }

 private:
  void release() {
    if (library_ && sample_) library_->fn.gpm_sample_free(sample_);
    sample_ = nullptr;
  }

  const NvmlLibrary* library_ = nullptr;
  nvml::GpmSample sample_ = nullptr;
};

// One of the driver's sample buffers of one GPU.
struct UtilStream {
  int type;            // nvmlSamplingType_t
  const char* metric;  // GpuSample::metric
  unsigned long long last_seen_us = 0;
  bool enabled = true;
};

struct GpmState {
  bool enabled = false;
  GpmBuffer buffers[2];
  int previous = -1;  // the buffer holding the last sample, -1 when there is none to pair with
  int64_t previous_ns = 0;
};

struct Gpu {
  GpuInfo info;
  nvml::Device device = nullptr;
  UtilStream streams[2] = {{nvml::kGpuUtilizationSamples, kGpuUtilMetric},
                           {nvml::kMemoryUtilizationSamples, kMemUtilMetric}};
  GpmState gpm;
};

std::optional<double> sample_value(int type, const nvml::Value& value) {
  switch (type) {
    case nvml::kDouble: return value.dVal;
    case nvml::kUnsignedInt: return value.uiVal;
    case nvml::kUnsignedLong: return static_cast<double>(value.ulVal);
    case nvml::kUnsignedLongLong: return static_cast<double>(value.ullVal);
    case nvml::kSignedLongLong: return static_cast<double>(value.sllVal);
    case nvml::kSignedInt: return value.siVal;
    case nvml::kUnsignedShort: return value.usVal;
    default: return std::nullopt;
  }
}

std::string buffer_text(const char* buffer, std::size_t size) {
  return std::string(buffer, std::find(buffer, buffer + size, '\0'));
}

constexpr std::chrono::milliseconds kMinGpmPeriod{100};  // NVML's GPM refresh interval
constexpr std::chrono::milliseconds kMinPollInterval{1};

NvmlSamplerOptions normalised(NvmlSamplerOptions options) {
  if (const char* library = std::getenv("INGERO_NVML_LIBRARY"); library && *library) {
    options.library = library;
  }
  options.poll_interval = std::max(options.poll_interval, kMinPollInterval);
  options.gpm_period = std::max(options.gpm_period, kMinGpmPeriod);
  return options;
}

}  // namespace

struct NvmlSampler::Impl {
  explicit Impl(const NvmlSamplerOptions& requested)
      : options(normalised(requested)),
        start_ns(monotonic_ns()),
        offset_ns(realtime_minus_monotonic_ns()) {}

  ~Impl() { join(); }

  void open();
  void abandon(std::string_view why) noexcept;
  void finish();

  NvmlSamplerOptions options;
  int64_t start_ns;
  int64_t offset_ns;
  GpuSamples out;
  bool finished = false;

 private:
  void discover_gpus();
  GpuInfo describe_gpu(unsigned index, nvml::Device device);
  void setup_gpm(Gpu& gpu);
  void launch();
  void run() noexcept;
  void join();
  void release();

  void poll_all();
  void poll(Gpu& gpu, UtilStream& stream);
  void stream_failed(Gpu& gpu, UtilStream& stream, nvml::Return rc);
  bool gpm_active() const;
  void gpm_tick(Gpu& gpu);
  // A failure while setting GPM up disables it; while sampling, only a lasting one does.
  void gpm_failed(Gpu& gpu, const char* function, nvml::Return rc, bool sampling);

  void note(std::string text);
  void add(unsigned gpu, int64_t ts_ns, const char* metric, double value);

  std::unique_ptr<NvmlLibrary> library_;
  std::vector<Gpu> gpus_;  // declared after library_: their GPM buffers are freed first
  std::vector<nvml::Sample> buffer_;
  std::unique_ptr<nvml::GpmMetricsGet> metrics_;
  uint64_t dropped_ = 0;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;
  std::string thread_failure_;

 public:
  // The last gpu_util per GPU and the GPUs' descriptions, for latest_busy() (another thread).
  mutable std::mutex latest_mutex;
  std::vector<GpuInfo> latest_gpus;
  std::map<unsigned, double> latest_util;
};

void NvmlSampler::Impl::note(std::string text) {
  if (std::find(out.notes.begin(), out.notes.end(), text) == out.notes.end()) {
    out.notes.push_back(std::move(text));
  }
}

void NvmlSampler::Impl::add(unsigned gpu, int64_t ts_ns, const char* metric, double value) {
  if (out.samples.size() >= options.max_samples) {
    ++dropped_;
    return;
  }
  out.samples.push_back(GpuSample{gpu, static_cast<uint64_t>(ts_ns), metric, value});
  if (std::string_view(metric) == kGpuUtilMetric) {
    std::lock_guard<std::mutex> lock(latest_mutex);
    latest_util[gpu] = value / 100;
  }
}

void NvmlSampler::Impl::open() {
  auto library = NvmlLibrary::open(options.library);
  if (!library) {
    note(library.error().message);
    return;
  }
  library_ = std::move(library.value());
  discover_gpus();
  if (gpus_.empty()) {
    release();
    return;
  }
  out.source = "nvml";
  metrics_ = std::make_unique<nvml::GpmMetricsGet>();
  launch();
}

void NvmlSampler::Impl::discover_gpus() {
  unsigned count = 0;
  if (nvml::Return rc = library_->fn.device_get_count_v2(&count); rc != nvml::kSuccess) {
    note(fmt::format("nvmlDeviceGetCount_v2 failed: {}: {}", library_->describe(rc), kUnknownShare));
    return;
  }
  if (count == 0) note(fmt::format("NVML sees no GPU: {}", kUnknownShare));
  if (!library_->fn.has_gpm() && count > 0) {
    note(fmt::format("GPM not available in {} (an NVML without nvmlGpm* functions): no sm_active",
                     options.library));
  }
  for (unsigned index = 0; index < count; ++index) {
    nvml::Device device = nullptr;
    nvml::Return rc = library_->fn.device_get_handle_by_index_v2(index, &device);
    if (rc != nvml::kSuccess) {
      note(fmt::format("GPU {}: nvmlDeviceGetHandleByIndex_v2 failed: {}: not sampled", index,
                       library_->describe(rc)));
      continue;
    }
    Gpu gpu;
    gpu.device = device;
    gpu.info = describe_gpu(index, device);
    setup_gpm(gpu);
    out.gpus.push_back(gpu.info);
    {
      std::lock_guard<std::mutex> lock(latest_mutex);
      latest_gpus.push_back(gpu.info);
    }
    gpus_.push_back(std::move(gpu));
  }
}

GpuInfo NvmlSampler::Impl::describe_gpu(unsigned index, nvml::Device device) {
  const NvmlFunctions& fn = library_->fn;
  GpuInfo info;
  info.index = index;
  char text[std::max(nvml::kDeviceNameBufferSize, nvml::kDeviceUuidBufferSize)] = {};
  if (fn.device_get_name) {
    nvml::Return rc = fn.device_get_name(device, text, nvml::kDeviceNameBufferSize);
    if (rc == nvml::kSuccess) info.name = buffer_text(text, nvml::kDeviceNameBufferSize);
    else note(fmt::format("GPU {}: nvmlDeviceGetName failed: {}", index, library_->describe(rc)));
  }
  if (fn.device_get_uuid) {
    nvml::Return rc = fn.device_get_uuid(device, text, nvml::kDeviceUuidBufferSize);
    if (rc == nvml::kSuccess) info.uuid = buffer_text(text, nvml::kDeviceUuidBufferSize);
    else note(fmt::format("GPU {}: nvmlDeviceGetUUID failed: {}", index, library_->describe(rc)));
  }
  if (fn.device_get_pci_info) {
    nvml::PciInfo pci{};
    nvml::Return rc = fn.device_get_pci_info(device, &pci);
    if (rc == nvml::kSuccess) info.pci_bus_id = buffer_text(pci.busId, sizeof pci.busId);
    else note(fmt::format("GPU {}: nvmlDeviceGetPciInfo failed: {}", index, library_->describe(rc)));
  }
  return info;
}

void NvmlSampler::Impl::setup_gpm(Gpu& gpu) {
  const NvmlFunctions& fn = library_->fn;
  if (!fn.has_gpm()) return;
  nvml::GpmSupport support{nvml::kGpmSupportVersion, 0};
  nvml::Return rc = fn.gpm_query_device_support(gpu.device, &support);
  if (rc == nvml::kErrorNotSupported || (rc == nvml::kSuccess && !support.isSupportedDevice)) {
    note(fmt::format("GPM not supported on GPU {}: no sm_active", gpu.info.index));
    return;
  }
  if (rc != nvml::kSuccess) {
    gpm_failed(gpu, "nvmlGpmQueryDeviceSupport", rc, false);
    return;
  }
  for (GpmBuffer& buffer : gpu.gpm.buffers) {
    nvml::GpmSample sample = nullptr;
    rc = fn.gpm_sample_alloc(&sample);
    if (rc != nvml::kSuccess) {
      gpm_failed(gpu, "nvmlGpmSampleAlloc", rc, false);
      return;
    }
    buffer = GpmBuffer(library_.get(), sample);
  }
  gpu.gpm.enabled = true;
}

void NvmlSampler::Impl::launch() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::exception& e) {
    note(fmt::format("the NVML sampling thread could not start: {}: {}", e.what(), kUnknownShare));
    out.source.clear();
    release();
  }
}

void NvmlSampler::Impl::run() noexcept {
  using Clock = std::chrono::steady_clock;
  try {
    auto next_poll = Clock::now();
    auto next_gpm = next_poll;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_requested_) {
      lock.unlock();
      auto now = Clock::now();
      if (now >= next_poll) {
        poll_all();
        next_poll = std::max(next_poll + options.poll_interval, Clock::now());
      }
      bool gpm = gpm_active();
      if (gpm && now >= next_gpm) {
        for (Gpu& gpu : gpus_) gpm_tick(gpu);
        next_gpm = now + options.gpm_period;  // never closer than a period, as GPM needs
      }
      auto wake_at = gpm ? std::min(next_poll, next_gpm) : next_poll;
      lock.lock();
      wake_.wait_until(lock, wake_at, [this] { return stop_requested_; });
    }
  } catch (const std::exception& e) {
    thread_failure_ = e.what();
  } catch (...) {
    thread_failure_ = "unknown exception";
  }
}

void NvmlSampler::Impl::join() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void NvmlSampler::Impl::abandon(std::string_view why) noexcept {
  join();
  release();
  out.samples.clear();
  out.source.clear();
  try {
    note(fmt::format("NVML sampler failed to start: {}: {}", why, kUnknownShare));
  } catch (...) {
  }
}

void NvmlSampler::Impl::release() {
  gpus_.clear();
  library_.reset();
}

void NvmlSampler::Impl::finish() {
  finished = true;
  join();
  if (!thread_failure_.empty()) {
    note(fmt::format("NVML sampling stopped early: {}", thread_failure_));
  }
  if (library_) {
    poll_all();
    // The tail of the run, where it is long enough for GPM to have refreshed its counters.
    for (Gpu& gpu : gpus_) {
      if (!gpu.gpm.enabled || gpu.gpm.previous < 0) continue;
      auto since_last = std::chrono::nanoseconds(monotonic_ns() - gpu.gpm.previous_ns);
      if (since_last >= kMinGpmPeriod) gpm_tick(gpu);
    }
  }
  release();
  if (dropped_ > 0) {
    note(fmt::format("{} GPU samples beyond the cap of {} were not kept", dropped_, options.max_samples));
  }
  std::stable_sort(out.samples.begin(), out.samples.end(),
                   [](const GpuSample& a, const GpuSample& b) { return a.ts_ns < b.ts_ns; });
}

void NvmlSampler::Impl::poll_all() {
  for (Gpu& gpu : gpus_) {
    for (UtilStream& stream : gpu.streams) {
      if (stream.enabled) poll(gpu, stream);
    }
  }
}

void NvmlSampler::Impl::poll(Gpu& gpu, UtilStream& stream) {
  auto get_samples = library_->fn.device_get_samples;
  int value_type = 0;
  unsigned count = 0;
  nvml::Return rc = get_samples(gpu.device, stream.type, stream.last_seen_us, &value_type, &count, nullptr);
  if (rc == nvml::kErrorNotFound || (rc == nvml::kSuccess && count == 0)) return;
  // New samples may arrive between the two calls: the driver then asks for a larger buffer.
  for (int attempt = 0; rc == nvml::kSuccess && attempt < 2; ++attempt) {
    buffer_.resize(count);
    unsigned filled = count;
    rc = get_samples(gpu.device, stream.type, stream.last_seen_us, &value_type, &filled, buffer_.data());
    if (rc == nvml::kErrorInsufficientSize) {
      count = std::max(filled, count * 2);
      rc = nvml::kSuccess;
      continue;
    }
    count = filled;
    break;
  }
  if (rc == nvml::kErrorNotFound) return;
  if (rc != nvml::kSuccess) {
    stream_failed(gpu, stream, rc);
    return;
  }
  unsigned long long newest_us = stream.last_seen_us;
  constexpr auto kMaxUs = static_cast<unsigned long long>(std::numeric_limits<int64_t>::max() / 1000);
  for (std::size_t i = 0; i < std::min<std::size_t>(count, buffer_.size()); ++i) {
    const nvml::Sample& sample = buffer_[i];
    if (sample.timeStamp <= stream.last_seen_us || sample.timeStamp > kMaxUs) continue;
    newest_us = std::max(newest_us, sample.timeStamp);
    std::optional<double> value = sample_value(value_type, sample.sampleValue);
    if (!value) {
      note(fmt::format("GPU {}: {} samples of unknown value type {} skipped", gpu.info.index,
                       stream.metric, value_type));
      continue;
    }
    int64_t ts_ns = static_cast<int64_t>(sample.timeStamp) * 1000 - offset_ns;
    if (ts_ns >= start_ns) add(gpu.info.index, ts_ns, stream.metric, *value);
  }
  stream.last_seen_us = newest_us;
}

void NvmlSampler::Impl::stream_failed(Gpu& gpu, UtilStream& stream, nvml::Return rc) {
  if (rc == nvml::kErrorNotSupported || rc == nvml::kErrorNoPermission || rc == nvml::kErrorGpuIsLost) {
    stream.enabled = false;
    note(fmt::format("GPU {}: {} not sampled: nvmlDeviceGetSamples failed: {}", gpu.info.index,
                     stream.metric, library_->describe(rc)));
    return;
  }
  note(fmt::format("GPU {}: nvmlDeviceGetSamples for {} failed: {}", gpu.info.index, stream.metric,
                   library_->describe(rc)));
}

bool NvmlSampler::Impl::gpm_active() const {
  return std::any_of(gpus_.begin(), gpus_.end(), [](const Gpu& gpu) { return gpu.gpm.enabled; });
}

void NvmlSampler::Impl::gpm_tick(Gpu& gpu) {
  GpmState& gpm = gpu.gpm;
  if (!gpm.enabled) return;
  const NvmlFunctions& fn = library_->fn;
  int current = gpm.previous < 0 ? 0 : 1 - gpm.previous;
  nvml::Return rc = fn.gpm_sample_get(gpu.device, gpm.buffers[current].get());
  if (rc != nvml::kSuccess) {
    gpm_failed(gpu, "nvmlGpmSampleGet", rc, true);
    gpm.previous = -1;
    return;
  }
  int64_t now_ns = monotonic_ns();
  int previous = std::exchange(gpm.previous, current);
  gpm.previous_ns = now_ns;
  if (previous < 0) return;

  nvml::GpmMetricsGet& request = *metrics_;
  request.version = nvml::kGpmMetricsGetVersion;
  request.numMetrics = 1;
  request.sample1 = gpm.buffers[previous].get();
  request.sample2 = gpm.buffers[current].get();
  request.metrics[0] = nvml::GpmMetric{nvml::kGpmMetricSmUtil, nvml::kSuccess, 0.0, {}};
  rc = fn.gpm_metrics_get(&request);
  if (rc == nvml::kSuccess) rc = request.metrics[0].nvmlReturn;
  if (rc != nvml::kSuccess) {
    gpm_failed(gpu, "nvmlGpmMetricsGet", rc, true);
    return;
  }
  add(gpu.info.index, now_ns, kSmActiveMetric, request.metrics[0].value);
}

void NvmlSampler::Impl::gpm_failed(Gpu& gpu, const char* function, nvml::Return rc, bool sampling) {
  unsigned index = gpu.info.index;
  std::string why = fmt::format("{} failed: {}", function, library_->describe(rc));
  if (rc == nvml::kErrorNoPermission) {
    note(fmt::format("GPM not permitted on GPU {} ({}): no sm_active", index, why));
  } else if (rc == nvml::kErrorNotSupported) {
    note(fmt::format("GPM not supported on GPU {} ({}): no sm_active", index, why));
  } else if (!sampling) {
    note(fmt::format("GPM unavailable on GPU {} ({}): no sm_active", index, why));
  } else {
    note(fmt::format("GPU {}: {}: some sm_active samples missing", index, why));
    return;
  }
  gpu.gpm.enabled = false;
  gpu.gpm.buffers[0] = GpmBuffer();
  gpu.gpm.buffers[1] = GpmBuffer();
}

NvmlSampler::NvmlSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NvmlSampler::~NvmlSampler() {
  try {
    if (impl_ && !impl_->finished) impl_->finish();
  } catch (...) {
  }
}

std::unique_ptr<NvmlSampler> NvmlSampler::start(const NvmlSamplerOptions& options) noexcept {
  auto impl = std::make_unique<Impl>(options);
  try {
    impl->open();
  } catch (const std::exception& e) {
    impl->abandon(e.what());
  }
  return std::unique_ptr<NvmlSampler>(new NvmlSampler(std::move(impl)));
}

std::vector<std::pair<GpuInfo, double>> NvmlSampler::latest_busy() const {
  std::vector<std::pair<GpuInfo, double>> busy;
  std::lock_guard<std::mutex> lock(impl_->latest_mutex);
  for (const GpuInfo& gpu : impl_->latest_gpus)
    if (auto it = impl_->latest_util.find(gpu.index); it != impl_->latest_util.end()) busy.emplace_back(gpu, it->second);
  return busy;
}

GpuSamples NvmlSampler::stop() noexcept {
  try {
    if (impl_->finished) {
      GpuSamples again;
      again.notes.push_back("NvmlSampler::stop() was already called");
      return again;
    }
    impl_->finish();
    return std::move(impl_->out);
  } catch (const std::exception& e) {
    GpuSamples failed;
    try {
      failed.notes.push_back(fmt::format("NVML sampler failed to stop: {}", e.what()));
    } catch (...) {
    }
    return failed;
  }
}

}  // namespace ingero::tracer
