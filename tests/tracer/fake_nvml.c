// SPDX-License-Identifier: Apache-2.0
// A fake libnvidia-ml.so.1 for the NVML sampler's tests: the entry points the sampler calls, with
// NVML's C ABI (nvml.h 13.3.29 layouts), and behaviour chosen by environment variables read at
// nvmlInit_v2 (so that every initialisation starts afresh):
//   FAKE_NVML_INIT_ERROR=N        nvmlInit_v2 returns N (default 0: success)
//   FAKE_NVML_GPUS=N              number of GPUs, 0 to 8 (default 1)
//   FAKE_NVML_GPM=unsupported|ok|no_permission   GPM behaviour (default unsupported)
//   FAKE_NVML_MEM_UTIL=unsupported  NVML_MEMORY_UTILIZATION_SAMPLES returns NOT_SUPPORTED
//   FAKE_NVML_VALUE_TYPE=N        nvmlValueType_t of the samples returned (default 1: unsigned int)
//   FAKE_NVML_PERIOD_US=N         the driver's sampling period (default 20000)
//   FAKE_NVML_HISTORY=N           samples already in the buffer at nvmlInit_v2 (default 5)
//   FAKE_NVML_LOG=PATH            appends a line to PATH at nvmlInit_v2 ("init") and at
//                                 nvmlShutdown ("shutdown gpm_live=L gpm_sample_get=G": the GPM
//                                 samples still allocated, the nvmlGpmSampleGet calls made)
//
// Utilisation samples: sample k of every buffer has the wall-clock timestamp k * period (in
// microseconds since the Unix epoch); the buffer holds the samples from HISTORY periods before
// nvmlInit_v2 up to now, at most the newest 120. Sample k of GPU g has the base value
//   gpu_util: (7k + 13g) mod 101        mem_util: (3k + 29g + 50) mod 101
// stored as the value type: base + 0.25 for double, base - 50 for the signed types, base otherwise.
//
// GPM: the n-th nvmlGpmSampleGet of GPU g (n from 0 at nvmlInit_v2) reads the counter
// (g + 1) * n * n; NVML_GPM_METRIC_SM_UTIL between two samples is the difference of their
// counters, so for consecutive samples n and n + 1 it is (g + 1) * (2n + 1).
#define _POSIX_C_SOURCE 200809L  // clock_gettime

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracer/nvml_abi.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

/* The opaque handles, as this fake defines them. */
struct nvmlGpmSample_st {
  int gpu; /* -1 until read */
  unsigned long long n;
};

enum { MAX_GPUS = 8, RING = 120 };
enum gpm_mode { GPM_UNSUPPORTED, GPM_OK, GPM_NO_PERMISSION };

struct nvmlDevice_st {
  int index;
  unsigned long long gpm_reads;
};

static struct {
  int initialised;
  int gpus;
  enum gpm_mode gpm;
  int mem_util_unsupported;
  int value_type;
  unsigned long long period_us;
  unsigned long long first_k;
  int gpm_live;
  int gpm_sample_get_calls;
  struct nvmlDevice_st devices[MAX_GPUS];
} fake;

static long env_long(const char* name, long fallback) {
  const char* text = getenv(name);
  return text && *text ? strtol(text, NULL, 10) : fallback;
}

static int env_is(const char* name, const char* value) {
  const char* text = getenv(name);
  return text && strcmp(text, value) == 0;
}

static unsigned long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000ull;
}

static void log_line(const char* format, ...) {
  const char* path = getenv("FAKE_NVML_LOG");
  if (!path || !*path) return;
  FILE* file = fopen(path, "a");
  if (!file) return;
  va_list args;
  va_start(args, format);
  vfprintf(file, format, args);
  va_end(args);
  fputc('\n', file);
  fclose(file);
}

static int valid(nvmlDevice_t device) {
  return fake.initialised && device >= fake.devices && device < fake.devices + fake.gpus;
}

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  nvmlReturn_t error = (nvmlReturn_t)env_long("FAKE_NVML_INIT_ERROR", 0);
  if (error != NVML_SUCCESS) return error;
  memset(&fake, 0, sizeof fake);
  long gpus = env_long("FAKE_NVML_GPUS", 1);
  fake.gpus = gpus < 0 ? 0 : gpus > MAX_GPUS ? MAX_GPUS : (int)gpus;
  fake.gpm = env_is("FAKE_NVML_GPM", "ok")              ? GPM_OK
             : env_is("FAKE_NVML_GPM", "no_permission") ? GPM_NO_PERMISSION
                                                        : GPM_UNSUPPORTED;
  fake.mem_util_unsupported = env_is("FAKE_NVML_MEM_UTIL", "unsupported");
  fake.value_type = (int)env_long("FAKE_NVML_VALUE_TYPE", NVML_VALUE_TYPE_UNSIGNED_INT);
  long period = env_long("FAKE_NVML_PERIOD_US", 20000);
  fake.period_us = period > 0 ? (unsigned long long)period : 20000;
  unsigned long long history = (unsigned long long)env_long("FAKE_NVML_HISTORY", 5);
  fake.first_k = now_us() / fake.period_us - history;
  for (int i = 0; i < MAX_GPUS; ++i) fake.devices[i].index = i;
  fake.initialised = 1;
  log_line("init");
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  fake.initialised = 0;
  log_line("shutdown gpm_live=%d gpm_sample_get=%d", fake.gpm_live, fake.gpm_sample_get_calls);
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned int)fake.gpus;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= (unsigned int)fake.gpus) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &fake.devices[index];
  return NVML_SUCCESS;
}

static nvmlReturn_t put_text(char* buffer, unsigned int length, const char* text) {
  if (!buffer) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(buffer, text);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
  char text[64];
  snprintf(text, sizeof text, "Fake GPU %d", device->index);
  return put_text(name, length, text);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
  char text[64];
  snprintf(text, sizeof text, "GPU-fa4e0000-0000-0000-0000-00000000000%d", device->index);
  return put_text(uuid, length, text);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (!valid(device) || !pci) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
  pci->bus = 0x10u + (unsigned int)device->index;
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return NVML_SUCCESS;
}

static nvmlValue_t typed_value(unsigned long long base) {
  nvmlValue_t value;
  memset(&value, 0, sizeof value);
  switch (fake.value_type) {
    case NVML_VALUE_TYPE_DOUBLE: value.dVal = (double)base + 0.25; break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: value.ulVal = (unsigned long)base; break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: value.ullVal = base; break;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: value.sllVal = (signed long long)base - 50; break;
    case NVML_VALUE_TYPE_SIGNED_INT: value.siVal = (int)base - 50; break;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: value.usVal = (unsigned short)base; break;
    default: value.uiVal = (unsigned int)base; break;
  }
  return value;
}

static unsigned long long base_value(int type, int gpu, unsigned long long k) {
  unsigned long long g = (unsigned long long)gpu;
  return type == NVML_GPU_UTILIZATION_SAMPLES ? (7 * k + 13 * g) % 101 : (3 * k + 29 * g + 50) % 101;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, int type,
                                              unsigned long long lastSeenTimeStamp, int* sampleValType,
                                              unsigned int* sampleCount, nvmlSample_t* samples) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  if (!valid(device) || !sampleCount || !sampleValType) return NVML_ERROR_INVALID_ARGUMENT;
  if (samples && *sampleCount == 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (type != NVML_GPU_UTILIZATION_SAMPLES && type != NVML_MEMORY_UTILIZATION_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
  if (type == NVML_MEMORY_UTILIZATION_SAMPLES && fake.mem_util_unsupported) return NVML_ERROR_NOT_SUPPORTED;

  unsigned long long last_k = now_us() / fake.period_us;
  unsigned long long k = fake.first_k;
  if (last_k + 1 >= k + RING) k = last_k + 1 - RING;
  unsigned long long after_seen = lastSeenTimeStamp / fake.period_us + 1;
  if (after_seen > k) k = after_seen;
  if (k > last_k) return NVML_ERROR_NOT_FOUND;

  unsigned long long available = last_k - k + 1;
  *sampleValType = fake.value_type;
  if (!samples) {
    *sampleCount = (unsigned int)available;
    return NVML_SUCCESS;
  }
  unsigned int filled = 0;
  for (; filled < *sampleCount && filled < available; ++filled, ++k) {
    samples[filled].timeStamp = k * fake.period_us;
    samples[filled].sampleValue = typed_value(base_value(type, device->index, k));
  }
  *sampleCount = filled;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  if (!valid(device) || !support || support->version != 1) return NVML_ERROR_INVALID_ARGUMENT;
  support->isSupportedDevice = fake.gpm != GPM_UNSUPPORTED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  if (!sample) return NVML_ERROR_INVALID_ARGUMENT;
  *sample = calloc(1, sizeof **sample);
  if (!*sample) return NVML_ERROR_INVALID_ARGUMENT;
  (*sample)->gpu = -1;
  ++fake.gpm_live;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  if (!sample) return NVML_ERROR_INVALID_ARGUMENT;
  free(sample);
  --fake.gpm_live;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  ++fake.gpm_sample_get_calls;
  if (!valid(device) || !sample) return NVML_ERROR_INVALID_ARGUMENT;
  if (fake.gpm == GPM_UNSUPPORTED) return NVML_ERROR_NOT_SUPPORTED;
  if (fake.gpm == GPM_NO_PERMISSION) return NVML_ERROR_NO_PERMISSION;
  sample->gpu = device->index;
  sample->n = device->gpm_reads++;
  return NVML_SUCCESS;
}

static double gpm_counter(const struct nvmlGpmSample_st* sample) {
  return (double)(sample->gpu + 1) * (double)sample->n * (double)sample->n;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* request) {
  if (!fake.initialised) return NVML_ERROR_UNINITIALIZED;
  if (!request || request->version != 1 || request->numMetrics > 333) return NVML_ERROR_INVALID_ARGUMENT;
  const struct nvmlGpmSample_st* first = request->sample1;
  const struct nvmlGpmSample_st* second = request->sample2;
  if (!first || !second || first->gpu < 0 || first->gpu != second->gpu || second->n <= first->n) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  for (unsigned int i = 0; i < request->numMetrics; ++i) {
    nvmlGpmMetric_t* metric = &request->metrics[i];
    if (metric->metricId != NVML_GPM_METRIC_SM_UTIL) {
      metric->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    metric->nvmlReturn = NVML_SUCCESS;
    metric->value = gpm_counter(second) - gpm_counter(first);
  }
  return NVML_SUCCESS;
}
