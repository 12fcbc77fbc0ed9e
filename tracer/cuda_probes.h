// SPDX-License-Identifier: Apache-2.0
// The one attach table: which CUDA runtime, CUDA driver and NCCL functions are probed,
// where their interesting arguments live, how each is recorded at each --cuda-detail
// level; and which mapped files are those libraries.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/events.h"
#include "common/result.h"

namespace ingero::tracer {

enum class CallLibrary { cuda_runtime, cuda_driver, nccl };
std::string_view library_kind_name(CallLibrary library);  // the ops category: "cuda_runtime", ...

// How much each probed call costs and records (measured: results/gpu-h200-tracer-on-real-jobs.md).
enum class CudaDetail {
  count,    // kernel launches counted at entry only (no latency); other calls timed and stored
  latency,  // every call timed; launches counted and histogrammed in the kernel, stored only when slow
  full,     // every function at both the runtime and the driver layer, every call stored
  exact,    // as latency, but a hot function is never duty-cycled: every call trapped and counted
};
// count and latency duty-cycle hot functions (call_probes.h); exact and full trap every call.
bool samples_hot_calls(CudaDetail detail);
Result<CudaDetail> parse_cuda_detail(std::string_view name);  // bad input naming the choices
std::string_view cuda_detail_name(CudaDetail detail);

// A probed function; the symbol is the op's name. Argument sources are the IB_ARG_*
// encoding of bpf/events.h (x86-64 SysV calling convention).
struct CallProbeSpec {
  uint16_t op;
  CallLibrary library;
  uint8_t bytes_src = IB_ARG_NONE;
  uint8_t arg_src = IB_ARG_NONE;
  uint8_t stream_src = IB_ARG_NONE;
  bool hot = false;         // a kernel launch: thousands a second in a training loop
  bool by_default = true;   // probed below --cuda-detail full (each call probed at one layer only)
  bool nccl_elements = false;  // bytes_src counts elements of the datatype in arg_src
};
const std::vector<CallProbeSpec>& call_probe_specs();

// One uprobe (and maybe its uretprobe) to attach for a library at a detail level.
struct PlannedProbe {
  const CallProbeSpec* spec;
  uint64_t cookie;  // see IB_COOKIE_* in bpf/events.h
  bool return_probe;
};
std::vector<PlannedProbe> plan_probes(CallLibrary library, CudaDetail detail);

// libcudart*.so* is the runtime, libcuda.so* the driver, libnccl.so* NCCL; else nothing.
std::optional<CallLibrary> classify_library(std::string_view path);

// Probed libraries mapped by a process, from /proc/PID/maps (empty if it is gone, even
// when it exits while the file is being read).
std::vector<std::string> mapped_call_libraries(pid_t pid);
// The same, from the text of a maps file.
std::vector<std::string> call_libraries_in_maps(std::string_view maps_text);

}  // namespace ingero::tracer
