// SPDX-License-Identifier: Apache-2.0
#include "tracer/cuda_probes.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/proc_files.h"

namespace ingero::tracer {

namespace {
constexpr uint8_t reg(int n) { return static_cast<uint8_t>(n); }
// n-th 8-byte stack slot above the return address: the 7th integer argument is slot 1.
constexpr uint8_t stack(int n) { return static_cast<uint8_t>(IB_ARG_STACK + n); }
constexpr uint8_t none = IB_ARG_NONE;

struct DetailName {
  CudaDetail detail;
  std::string_view name;
};
constexpr DetailName kDetailNames[] = {
    {CudaDetail::count, "count"}, {CudaDetail::latency, "latency"}, {CudaDetail::full, "full"},
    {CudaDetail::exact, "exact"}};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
}  // namespace

std::string_view library_kind_name(CallLibrary library) {
  switch (library) {
    case CallLibrary::cuda_runtime: return "cuda_runtime";
    case CallLibrary::cuda_driver: return "cuda_driver";
    case CallLibrary::nccl: return "nccl";
  }
  return "?";
}

Result<CudaDetail> parse_cuda_detail(std::string_view name) {
  for (const DetailName& d : kDetailNames)
    if (d.name == name) return d.detail;
  return Error::bad_input(fmt::format("unknown --cuda-detail '{}'", name), "use count, latency, exact or full");
}

bool samples_hot_calls(CudaDetail detail) { return detail == CudaDetail::count || detail == CudaDetail::latency; }

std::string_view cuda_detail_name(CudaDetail detail) {
  for (const DetailName& d : kDetailNames)
    if (d.detail == detail) return d.name;
  return "?";
}

const std::vector<CallProbeSpec>& call_probe_specs() {
  using L = CallLibrary;
  // bytes / arg / stream sources per function signature. Launches are probed at the driver
  // layer by default: the runtime's launches reach cuLaunchKernel(Ex) too, and libraries
  // with their own static runtime (cuBLAS) call only the driver.
  static const std::vector<CallProbeSpec> specs = {
      {IB_OP_CUDA_MALLOC, L::cuda_runtime, reg(2)},                          // (void**, size)
      {IB_OP_CUDA_FREE, L::cuda_runtime, none, reg(1)},                      // (ptr)
      {IB_OP_CUDA_MALLOC_HOST, L::cuda_runtime, reg(2)},                     // (void**, size)
      {IB_OP_CUDA_HOST_ALLOC, L::cuda_runtime, reg(2), reg(3)},              // (void**, size, flags)
      {IB_OP_CUDA_FREE_HOST, L::cuda_runtime, none, reg(1)},                 // (ptr)
      {IB_OP_CUDA_HOST_REGISTER, L::cuda_runtime, reg(2), reg(3)},           // (ptr, size, flags)
      {IB_OP_CUDA_MEMCPY, L::cuda_runtime, reg(3), reg(4)},                  // (dst, src, count, kind)
      {IB_OP_CUDA_MEMCPY_ASYNC, L::cuda_runtime, reg(3), reg(4), reg(5)},    // (dst, src, count, kind, stream)
      {IB_OP_CUDA_MEMSET_ASYNC, L::cuda_runtime, reg(3), none, reg(4)},      // (ptr, value, count, stream)
      // (func, dim3 grid, dim3 block, args, sharedMem, stream): each dim3 takes two
      // registers, so args is in r9 and sharedMem, stream are on the stack. arg = kernel.
      {IB_OP_CUDA_LAUNCH_KERNEL, L::cuda_runtime, none, reg(1), stack(2), true, false},
      {IB_OP_CUDA_LAUNCH_KERNEL_EXC, L::cuda_runtime, none, reg(2), none, true, false},  // (config*, func, args)
      {IB_OP_CUDA_GRAPH_LAUNCH, L::cuda_runtime, none, reg(1), reg(2), true, false},     // (graphExec, stream)
      {IB_OP_CUDA_STREAM_SYNC, L::cuda_runtime, none, none, reg(1)},                     // (stream)
      {IB_OP_CUDA_DEVICE_SYNC, L::cuda_runtime},                                         // ()
      {IB_OP_CUDA_EVENT_SYNC, L::cuda_runtime, none, reg(1)},                            // (event)
      {IB_OP_CUDA_STREAM_WAIT_EVENT, L::cuda_runtime, none, reg(2), reg(1)},             // (stream, event, flags)
      {IB_OP_CUDA_EVENT_RECORD, L::cuda_runtime, none, reg(1), reg(2), true},            // (event, stream)
      {IB_OP_CUDA_EVENT_QUERY, L::cuda_runtime, none, reg(1), none, true},               // (event)
      // (dst, dpitch, src, spitch, width, height, kind, stream): the size is width x height, two
      // arguments, so no bytes are recorded; arg = kind.
      {IB_OP_CUDA_MEMCPY_2D_ASYNC, L::cuda_runtime, none, stack(1), stack(2)},
      {IB_OP_CUDA_MEMCPY_PEER_ASYNC, L::cuda_runtime, reg(5), none, reg(6)},  // (dst, dDev, src, sDev, count, stream)
      // (f, gx, gy, gz, bx, by, bz, sharedMem, stream, params, extra)
      {IB_OP_CU_LAUNCH_KERNEL, L::cuda_driver, none, reg(1), stack(3), true},
      {IB_OP_CU_LAUNCH_KERNEL_EX, L::cuda_driver, none, reg(2), none, true},  // (config*, f, params, extra)
      {IB_OP_CU_GRAPH_LAUNCH, L::cuda_driver, none, reg(1), reg(2), true},    // (graphExec, stream)
      {IB_OP_CU_MEM_ALLOC, L::cuda_driver, reg(2), none, none, false, false},             // (CUdeviceptr*, size)
      {IB_OP_CU_MEM_FREE, L::cuda_driver, none, reg(1), none, false, false},              // (dptr)
      {IB_OP_CU_MEM_HOST_ALLOC, L::cuda_driver, reg(2), reg(3), none, false, false},      // (void**, size, flags)
      {IB_OP_CU_MEMCPY_HTOD_ASYNC, L::cuda_driver, reg(3), none, reg(4), false, false},   // (dst, src, count, stream)
      {IB_OP_CU_MEMCPY_DTOH_ASYNC, L::cuda_driver, reg(3), none, reg(4), false, false},   // (dst, src, count, stream)
      {IB_OP_CU_MEMCPY_ASYNC, L::cuda_driver, reg(3), none, reg(4), false, false},        // (dst, src, count, stream)
      {IB_OP_CU_STREAM_SYNC, L::cuda_driver, none, none, reg(1), false, false},           // (stream)
      {IB_OP_CU_CTX_SYNC, L::cuda_driver, none, none, none, false, false},                // ()
      {IB_OP_CU_EVENT_RECORD, L::cuda_driver, none, reg(1), reg(2), true, false},         // (event, stream)
      {IB_OP_CU_EVENT_QUERY, L::cuda_driver, none, reg(1), none, true, false},            // (event)
      {IB_OP_CU_EVENT_SYNC, L::cuda_driver, none, reg(1), none, false, false},            // (event)
      // NCCL collectives: bytes = count x the datatype's size; arg = datatype.
      {IB_OP_NCCL_ALL_REDUCE, L::nccl, reg(3), reg(4), stack(1), false, true, true},  // (s, r, n, dt, op, comm, stream)
      {IB_OP_NCCL_BROADCAST, L::nccl, reg(3), reg(4), stack(1), false, true, true},   // (s, r, n, dt, root, comm, stream)
      {IB_OP_NCCL_REDUCE, L::nccl, reg(3), reg(4), stack(2), false, true, true},  // (s, r, n, dt, op, root, comm, stream)
      {IB_OP_NCCL_ALL_GATHER, L::nccl, reg(3), reg(4), reg(6), false, true, true},     // (s, r, n, dt, comm, stream)
      {IB_OP_NCCL_REDUCE_SCATTER, L::nccl, reg(3), reg(4), stack(1), false, true, true},  // (s, r, n, dt, op, comm, stream)
      {IB_OP_NCCL_SEND, L::nccl, reg(2), reg(3), reg(6), false, true, true},  // (buf, n, dt, peer, comm, stream)
      {IB_OP_NCCL_RECV, L::nccl, reg(2), reg(3), reg(6), false, true, true},  // (buf, n, dt, peer, comm, stream)
      {IB_OP_NCCL_GROUP_START, L::nccl},
      {IB_OP_NCCL_GROUP_END, L::nccl},
  };
  return specs;
}

std::vector<PlannedProbe> plan_probes(CallLibrary library, CudaDetail detail) {
  std::vector<PlannedProbe> planned;
  for (const CallProbeSpec& spec : call_probe_specs()) {
    if (spec.library != library || (detail != CudaDetail::full && !spec.by_default)) continue;
    uint64_t flags = 0;
    if (spec.hot && detail != CudaDetail::full) flags |= IB_CALL_HOT;
    if (spec.hot && detail == CudaDetail::count) flags |= IB_CALL_ENTRY_ONLY;
    if (spec.nccl_elements) flags |= IB_CALL_NCCL_ELEMENTS;
    const uint64_t cookie = uint64_t{spec.op} | uint64_t{spec.bytes_src} << 16 | uint64_t{spec.arg_src} << 24 |
                            uint64_t{spec.stream_src} << 32 | flags << 40;
    planned.push_back({&spec, cookie, !(flags & IB_CALL_ENTRY_ONLY)});
  }
  return planned;
}

std::optional<CallLibrary> classify_library(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.find(".so") == std::string_view::npos) return std::nullopt;
  if (starts_with(base, "libcudart")) return CallLibrary::cuda_runtime;
  if (starts_with(base, "libcuda.so")) return CallLibrary::cuda_driver;
  if (starts_with(base, "libnccl.so")) return CallLibrary::nccl;
  return std::nullopt;
}

std::vector<std::string> call_libraries_in_maps(std::string_view maps_text) {
  std::vector<std::string> libraries;
  size_t pos = 0;
  while (pos < maps_text.size()) {
    size_t end = maps_text.find('\n', pos);
    if (end == std::string_view::npos) end = maps_text.size();
    std::string_view line = maps_text.substr(pos, end - pos);
    pos = end + 1;
    // The path is the sixth field and starts at the first '/' (device and inode come before it).
    size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    if (path.size() > 10 && path.substr(path.size() - 10) == " (deleted)") continue;
    if (!classify_library(path)) continue;
    if (std::find(libraries.begin(), libraries.end(), path) == libraries.end()) libraries.emplace_back(path);
  }
  return libraries;
}

std::vector<std::string> mapped_call_libraries(pid_t pid) {
  auto text = proc::read_file("/proc/" + std::to_string(pid) + "/maps");
  // Most processes map no probed library; skip the line parsing for them.
  if (!text || (text->find("libcud") == std::string::npos && text->find("libnccl") == std::string::npos)) return {};
  return call_libraries_in_maps(*text);
}

}  // namespace ingero::tracer
