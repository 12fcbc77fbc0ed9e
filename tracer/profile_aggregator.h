// SPDX-License-Identifier: Apache-2.0
// Turns the kernel's CPU samples (ib_profile_sample) into a CpuProfile. While the run goes, a
// sample's user addresses are resolved to (file, offset) with the process's mappings of that
// moment (so processes that exit or exec still symbolize) and its Python frames are decoded
// while the process lives; the raw stacks are counted per (thread, stack, time bucket).
// Symbols are looked up once, at the end, per distinct address.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bpf/events.h"
#include "tracer/cpu_profile.h"
#include "tracer/native_symbols.h"

namespace ingero::tracer {

// A Python frame decoded from its code object and instruction (tracer/cpython_*).
struct DecodedPythonFrame {
  std::string name;  // qualified name
  std::string file;
  std::optional<int64_t> line;
  std::string line_kind;  // kLine*
};
using PythonFrameDecoder = std::function<std::optional<DecodedPythonFrame>(pid_t pid, uint64_t code, uint64_t instr)>;

// The text of /proc/PID/maps, or nullopt once the process is gone (tests pass fakes).
using MapsReader = std::function<std::optional<std::string>(pid_t pid)>;
std::optional<std::string> read_proc_maps(pid_t pid);

// The native function CPython evaluates Python frames in: the Python frames go where it is.
inline constexpr const char* kPythonEvalFunction = "_PyEval_EvalFrameDefault";

class ProfileAggregator {
 public:
  explicit ProfileAggregator(uint64_t bucket_ns, MapsReader maps = read_proc_maps);

  void set_python_decoder(PythonFrameDecoder decoder) { python_ = std::move(decoder); }
  // An on-CPU sample, or the stack of a stored event (kind IB_STACK_EVENT), symbolized alike.
  void add(const ib_profile_sample& sample);
  // The process exec'd: its old mappings are no longer its own.
  void forget_process(pid_t pid);
  uint64_t samples() const { return samples_; }

  // Symbolizes every stack and interns frames and stacks.
  CpuProfile finish(const KernelSymbols& kernel, SymbolCache& symbols) const;

 private:
  struct UserFrame {
    uint32_t file;    // index in files_; kNoFile: unmapped (value is the address)
    uint64_t offset;  // in the file (a return address less one)
    bool operator<(const UserFrame& o) const { return std::tie(file, offset) < std::tie(o.file, o.offset); }
  };
  struct RawStack {  // each list innermost first
    std::vector<uint64_t> kernel;
    std::vector<UserFrame> user;
    std::vector<uint32_t> python;  // indices in python_frames_
    bool operator<(const RawStack& o) const {
      return std::tie(kernel, user, python) < std::tie(o.kernel, o.user, o.python);
    }
  };
  struct ProcessMaps {
    std::vector<Mapping> mappings;
    uint64_t read_at_ns = 0;
    bool gone = false;
  };
  static constexpr uint32_t kNoFile = UINT32_MAX;

  const ProcessMaps& maps_of(pid_t pid, uint64_t now_ns, bool refresh);
  uint32_t file_index(const Mapping& m);
  std::vector<UserFrame> user_frames(pid_t pid, uint64_t ts_ns, const __u64* ips, int count);
  std::vector<uint32_t> python_frames(pid_t pid, const ib_profile_sample& s);
  uint32_t raw_stack(const ib_profile_sample& s);

  const uint64_t bucket_ns_;
  MapsReader read_maps_;
  PythonFrameDecoder python_;
  std::map<pid_t, ProcessMaps> maps_;
  std::vector<std::pair<std::string, uint64_t>> files_;  // (path, inode)
  std::map<std::pair<std::string, uint64_t>, uint32_t> file_ids_;
  std::vector<DecodedPythonFrame> python_frames_;
  std::map<std::tuple<std::string, std::string, std::optional<int64_t>>, uint32_t> python_ids_;
  std::map<RawStack, uint32_t> stack_ids_;
  std::vector<const RawStack*> stacks_;
  std::map<std::tuple<pid_t, uint32_t, uint64_t>, uint64_t> counts_;  // (tid, raw stack, bucket)
  struct RawEventStack {
    pid_t tid;
    uint64_t ts_ns;
    uint16_t op;
    uint32_t raw;
  };
  std::vector<RawEventStack> event_stacks_;
  uint64_t samples_ = 0;
};

}  // namespace ingero::tracer
