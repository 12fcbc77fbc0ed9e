// Which CUDA functions are probed, where their interesting arguments live, and
// which mapped files are CUDA runtime / driver libraries.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/events.h"

namespace ingero::tracer {

enum class CudaLibrary { runtime, driver };

// A probed function; the symbol is the op's name. Argument sources are the
// IB_ARG_* encoding of bpf/events.h (x86-64 SysV calling convention).
struct CudaProbeSpec {
  uint16_t op;
  CudaLibrary library;
  uint8_t bytes_src = IB_ARG_NONE;
  uint8_t arg_src = IB_ARG_NONE;
  uint8_t stream_src = IB_ARG_NONE;
};

const std::vector<CudaProbeSpec>& cuda_probe_specs();

// The BPF attach cookie for a spec (see IB_COOKIE_* in bpf/events.h).
uint64_t cuda_probe_cookie(const CudaProbeSpec& spec);

// libcudart*.so* is the runtime, libcuda.so* the driver; anything else is not CUDA.
std::optional<CudaLibrary> classify_cuda_library(std::string_view path);

// CUDA library files mapped by a process, from /proc/PID/maps (empty if it is gone).
std::vector<std::string> mapped_cuda_libraries(pid_t pid);

// The same, from the text of a maps file.
std::vector<std::string> cuda_libraries_in_maps(std::string_view maps_text);

}  // namespace ingero::tracer
