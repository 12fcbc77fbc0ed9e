/* SPDX-License-Identifier: Apache-2.0 */
/* The part of NVML's C ABI that ingero-bench uses, with nvml.h's own names, declared after NVIDIA's
 * nvml.h "NVML VERSION: 13.3.29" (NVML_API_VERSION 13): no NVML header is packaged where this builds,
 * and libnvidia-ml.so.1 is loaded at run time. Plain C, so that the sampler (tracer/nvml_sampler.cc)
 * and the tests' fake library (tests/tracer/fake_nvml.c) share one declaration. Every enum is
 * int-sized; handles are opaque pointers. The GPM metrics struct has grown between releases
 * (NVML_GPM_METRIC_MAX 98 in 12.4, 210 in 12.9, 333 in 13.3) under the same
 * NVML_GPM_METRICS_GET_VERSION 1: the driver touches only numMetrics entries, so the largest array
 * is compatible with every driver that has GPM. */
#ifndef INGERO_TRACER_NVML_ABI_H
#define INGERO_TRACER_NVML_ABI_H

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_GPU_IS_LOST = 15,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

/* nvmlSamplingType_t */
enum { NVML_GPU_UTILIZATION_SAMPLES = 1, NVML_MEMORY_UTILIZATION_SAMPLES = 2 };

/* nvmlValueType_t */
enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned long long timeStamp; /* CPU wall clock, microseconds since the Unix epoch */
  nvmlValue_t sampleValue;
} nvmlSample_t;

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

typedef struct {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

#define NVML_GPM_SUPPORT_VERSION 1
typedef struct {
  unsigned int version;
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_METRIC_SM_UTIL 2
#define NVML_GPM_METRIC_MAX 333

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

typedef struct {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

#endif /* INGERO_TRACER_NVML_ABI_H */
