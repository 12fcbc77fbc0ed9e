// SPDX-License-Identifier: Apache-2.0
// Python frames of another process, read from CPython's own structures (no frame pointers
// needed): where the interpreter of a process keeps its threads and frames (its layout, per
// version, 3.10 to 3.13), a walk of one thread's frames that mirrors the kernel's
// (bpf/python_stack.bpf.h), and a reader that turns a frame's code object and instruction
// into a qualified name, a file and a line.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bpf/events.h"
#include "common/result.h"

namespace ingero::tracer {

// Reads another process's memory. Tests put a fake in front of the real one.
class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  // False when any byte of [addr, addr + len) could not be read.
  virtual bool read(uint64_t addr, void* out, size_t len) = 0;
  template <class T>
  bool read_value(uint64_t addr, T& out) {
    return read(addr, &out, sizeof(out));
  }
};

// A live process's memory through process_vm_readv (needs ptrace access: root, or the same user
// with ptrace_scope 0). Reading does not stop or change the process.
class ProcessMemory : public MemoryReader {
 public:
  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  bool read(uint64_t addr, void* out, size_t len) override;

 private:
  pid_t pid_;
};

// The interpreter a process runs.
struct PythonRuntime {
  std::string path;        // the python binary or libpython that exports _PyRuntime (as in /proc/PID/maps)
  uint64_t load_bias = 0;  // where that file is loaded, less its link-time addresses
  ib_python_layout layout{};
  std::string version() const;  // "3.11.2"
};

// The text a run shows when a process's Python frames cannot be read: "Python frames unavailable: <why>".
std::string python_frames_unavailable(const Error& why);

// Finds the interpreter of process `pid` and its layout: the mapping named python* or libpython*
// that exports _PyRuntime, the version from its Py_Version (from the file name before 3.11, which
// lacks it), the offsets from a table (3.10-3.12) or from the _Py_DebugOffsets that 3.13 keeps at
// the start of _PyRuntime. An error (its message is the why) for a process without Python, a
// binary without the symbols, or a version other than 3.10-3.13.
Result<PythonRuntime> find_python_runtime(pid_t pid);
Result<PythonRuntime> find_python_runtime(pid_t pid, MemoryReader& memory);

// The thread state of native thread `tid` (as the process's pid namespace numbers it): the first
// interpreter's (the main one unless subinterpreters exist) thread list, at most IB_PY_MAX_THREADS
// entries, compared by native thread id (3.11+) or by the tid in the glibc thread of
// pthread_self() (3.10). Not the GIL holder: a thread sampled while it runs native code without
// the GIL must get its own frames, never the holder's.
// 0 when the thread has none (a thread that never ran Python); an error when memory is unreadable.
Result<uint64_t> find_thread_state(const ib_python_layout& layout, MemoryReader& memory, pid_t tid);

// The Python frames of thread `tid`, innermost first, at most IB_PY_MAX_FRAMES of them (C-stack
// shim frames of 3.12+ skipped), exactly as bpf/python_stack.bpf.h reads them in the kernel. An
// error when the thread has no thread state, memory is unreadable, or a frame's code object is not
// a code object (a wrong layout: no frames rather than wrong ones).
Result<std::vector<ib_python_frame>> walk_python_stack(const ib_python_layout& layout, MemoryReader& memory,
                                                      pid_t tid);
// The same for thread `tid` of process `pid` as this process's /proc numbers them.
Result<std::vector<ib_python_frame>> walk_python_stack(pid_t pid, pid_t tid);

// Thread `tid` of process `pid` (as this process's /proc numbers them) as the thread's own pid
// namespace numbers it (the last NSpid of /proc/PID/task/TID/status): the id CPython stores.
Result<pid_t> thread_id_in_its_namespace(pid_t pid, pid_t tid);

// Where a frame's line came from: the instruction executing (through the code object's line
// table), or the function's first line (co_firstlineno) when the instruction gave none.
enum class PythonLineKind { executing, first };
const char* line_kind_name(PythonLineKind kind);  // "executing" / "first"

struct PythonFrameInfo {
  std::string qualname;  // co_qualname (3.11+), co_name before
  std::string file;      // co_filename
  int line = 0;
  PythonLineKind line_kind = PythonLineKind::first;
};

// Names, files and lines of frames, with what each code object holds cached per (pid, code
// address): a process's code objects live as long as their functions, and a sample names the same
// few again and again. Resolve while the process lives (a DataLoader worker exits at each epoch's
// end unless persistent_workers): only what was cached survives it.
class PythonCodeReader {
 public:
  Result<PythonFrameInfo> resolve(pid_t pid, const ib_python_layout& layout, MemoryReader& memory,
                                  const ib_python_frame& frame);
  size_t cached() const { return codes_.size(); }

 private:
  struct Code {
    uint64_t name_obj = 0;  // the name's str object: another one says the address holds another code object
    std::string qualname;
    std::string file;
    int firstlineno = 0;
    std::string linetable;
    uint64_t code_units = 0;  // Py_SIZE of the code object: its instructions (3.11+)
  };
  Result<Code> read_code(const ib_python_layout& layout, MemoryReader& memory, uint64_t code);
  std::map<std::pair<pid_t, uint64_t>, Code> codes_;
};

// The start-up check of a layout against a known frame: thread `tid`'s walk must find frames, each
// of whose code objects has ob_type == &PyCode_Type and decodes, and its outermost frame must be
// one every Python thread starts in (a module's "<module>", runpy's "_run_module_as_main", or
// threading's "Thread._bootstrap"). `tid` as this process's /proc numbers it. The frames, resolved,
// on success. A thread not yet in Python (a job just started) fails it: try again later.
Result<std::vector<PythonFrameInfo>> check_python_layout(pid_t pid, pid_t tid, const ib_python_layout& layout,
                                                         MemoryReader& memory);

// Line tables, exposed for tests: the line of the instruction at `offset`, -1 when it has none.
// 3.10 (PEP 626 co_linetable): offset in bytes. 3.11+ (co_linetable location table): offset in code units.
int line_from_linetable_310(const std::string& table, int firstlineno, uint64_t byte_offset);
int line_from_locations_311(const std::string& table, int firstlineno, uint64_t unit_offset);

}  // namespace ingero::tracer
