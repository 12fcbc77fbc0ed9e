#include "tracer/cuda_probes.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ingero::tracer {

namespace {
constexpr uint8_t reg(int n) { return static_cast<uint8_t>(n); }
// n-th 8-byte stack slot above the return address: the 7th integer argument is slot 1.
constexpr uint8_t stack(int n) { return static_cast<uint8_t>(IB_ARG_STACK + n); }
}  // namespace

const std::vector<CudaProbeSpec>& cuda_probe_specs() {
  using L = CudaLibrary;
  // bytes / arg / stream sources per function signature.
  static const std::vector<CudaProbeSpec> specs = {
      {IB_OP_CUDA_MALLOC, L::runtime, reg(2)},                      // (void**, size)
      {IB_OP_CUDA_FREE, L::runtime, IB_ARG_NONE, reg(1)},           // (ptr)
      {IB_OP_CUDA_MALLOC_HOST, L::runtime, reg(2)},                 // (void**, size)
      {IB_OP_CUDA_HOST_ALLOC, L::runtime, reg(2), reg(3)},          // (void**, size, flags)
      {IB_OP_CUDA_FREE_HOST, L::runtime, IB_ARG_NONE, reg(1)},      // (ptr)
      {IB_OP_CUDA_HOST_REGISTER, L::runtime, reg(2), reg(3)},       // (ptr, size, flags)
      {IB_OP_CUDA_MEMCPY, L::runtime, reg(3), reg(4)},              // (dst, src, count, kind)
      {IB_OP_CUDA_MEMCPY_ASYNC, L::runtime, reg(3), reg(4), reg(5)},  // (dst, src, count, kind, stream)
      {IB_OP_CUDA_MEMSET_ASYNC, L::runtime, reg(3), IB_ARG_NONE, reg(4)},  // (ptr, value, count, stream)
      // (func, dim3 grid, dim3 block, args, sharedMem, stream): each dim3 takes two
      // registers, so args is in r9 and sharedMem, stream are on the stack. arg = kernel.
      {IB_OP_CUDA_LAUNCH_KERNEL, L::runtime, IB_ARG_NONE, reg(1), stack(2)},
      {IB_OP_CUDA_STREAM_SYNC, L::runtime, IB_ARG_NONE, IB_ARG_NONE, reg(1)},  // (stream)
      {IB_OP_CUDA_DEVICE_SYNC, L::runtime},                                    // ()
      {IB_OP_CUDA_EVENT_SYNC, L::runtime, IB_ARG_NONE, reg(1)},                // (event)
      {IB_OP_CUDA_STREAM_WAIT_EVENT, L::runtime, IB_ARG_NONE, reg(2), reg(1)},  // (stream, event, flags)
      // (f, gx, gy, gz, bx, by, bz, sharedMem, stream, params, extra)
      {IB_OP_CU_LAUNCH_KERNEL, L::driver, IB_ARG_NONE, reg(1), stack(3)},
      {IB_OP_CU_MEM_ALLOC, L::driver, reg(2)},                             // (CUdeviceptr*, size)
      {IB_OP_CU_MEM_FREE, L::driver, IB_ARG_NONE, reg(1)},                 // (dptr)
      {IB_OP_CU_MEMCPY_HTOD_ASYNC, L::driver, reg(3), IB_ARG_NONE, reg(4)},  // (dst, src, count, stream)
      {IB_OP_CU_MEMCPY_ASYNC, L::driver, reg(3), IB_ARG_NONE, reg(4)},       // (dst, src, count, stream)
      {IB_OP_CU_STREAM_SYNC, L::driver, IB_ARG_NONE, IB_ARG_NONE, reg(1)},   // (stream)
      {IB_OP_CU_CTX_SYNC, L::driver},                                        // ()
      {IB_OP_CU_MEM_HOST_ALLOC, L::driver, reg(2), reg(3)},                  // (void**, size, flags)
  };
  return specs;
}

uint64_t cuda_probe_cookie(const CudaProbeSpec& spec) {
  return uint64_t{spec.op} | uint64_t{spec.bytes_src} << 16 | uint64_t{spec.arg_src} << 24 |
         uint64_t{spec.stream_src} << 32;
}

std::optional<CudaLibrary> classify_cuda_library(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  auto starts = [&](std::string_view prefix) { return base.substr(0, prefix.size()) == prefix; };
  if (base.find(".so") == std::string_view::npos) return std::nullopt;
  if (starts("libcudart")) return CudaLibrary::runtime;
  if (starts("libcuda.so")) return CudaLibrary::driver;
  return std::nullopt;
}

std::vector<std::string> cuda_libraries_in_maps(std::string_view maps_text) {
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
    if (!classify_cuda_library(path)) continue;
    if (std::find(libraries.begin(), libraries.end(), path) == libraries.end()) libraries.emplace_back(path);
  }
  return libraries;
}

std::vector<std::string> mapped_cuda_libraries(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Most processes map no CUDA library; skip the line parsing for them.
  if (text.find("libcuda") == std::string::npos) return {};
  return cuda_libraries_in_maps(text);
}

}  // namespace ingero::tracer
