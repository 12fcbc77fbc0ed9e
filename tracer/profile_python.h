// SPDX-License-Identifier: Apache-2.0
// The Python side of the CPU profiles: each traced process that runs CPython gets its interpreter's
// layout (tracer/cpython_layout.h), checked against its main thread's frames before the kernel reads
// a frame with it (python_layouts map, bpf/python_stack.bpf.h); the frames the samples carry are
// turned into names, files and lines while the process lives. A process whose layout cannot be found
// or does not check out keeps its native frames, and the run says why (run setting profile_python).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "tracer/cpython_layout.h"
#include "tracer/profile_aggregator.h"

namespace ingero::tracer {

class ProfilePython {
 public:
  explicit ProfilePython(int layouts_map_fd) : layouts_fd_(layouts_map_fd) {}

  // A traced process, new or exec'd since it was last looked at (from poll). A process that
  // runs Python but whose frames do not check out yet (it is starting) is looked at again on
  // later calls, for a while.
  void look_at(pid_t pid);
  // It exec'd: its layout is no longer its own.
  void forget(pid_t pid);
  // A sampled frame of process pid, or nullopt when it cannot be read.
  std::optional<DecodedPythonFrame> decode(pid_t pid, uint64_t code, uint64_t instr);
  // "ok" when some process's frames are read, else why none are.
  std::string status() const;

 private:
  struct Pending {
    std::chrono::steady_clock::time_point first_seen;
    std::string why;
  };
  void give_up(pid_t pid, std::string why);
  // What tells one code object from another that a freed one's address was reused for: the
  // pointers to its name, file and line table, and its first line.
  struct CodeIdentity {
    uint64_t name = 0, file = 0, linetable = 0;
    int32_t firstlineno = 0;
    bool operator==(const CodeIdentity& o) const {
      return name == o.name && file == o.file && linetable == o.linetable && firstlineno == o.firstlineno;
    }
  };
  static std::optional<CodeIdentity> identity_of(const ib_python_layout& layout, MemoryReader& memory, uint64_t code);

  const int layouts_fd_;
  mutable std::mutex mutex_;  // poll() adds processes, the ring reader decodes their frames
  std::map<pid_t, PythonRuntime> runtimes_;
  std::map<pid_t, Pending> pending_;
  std::set<pid_t> done_;  // looked at for good: with a layout, without Python, or given up on
  // Per process: its code objects' names, files and line tables (cached by address), and the
  // identity each was read with; a code object found changed drops the process's cache.
  std::map<pid_t, PythonCodeReader> codes_;
  std::map<std::pair<pid_t, uint64_t>, CodeIdentity> identities_;
  std::string why_;  // the last process's reason, where none has frames
  bool any_ok_ = false;
  bool any_python_ = false;
};

}  // namespace ingero::tracer
