// SPDX-License-Identifier: Apache-2.0
// Where each thread of a hung job waits in Python, read once the hang is seen, from user space as
// py-spy dump does: the interpreter's thread states and their current frames through
// process_vm_readv (tracer/cpython_layout.h; the process is neither stopped nor changed). Each thread's
// frames become profile frames and stacks, keyed to a `hang` event of that thread (event_stacks).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "tracer/cpu_profile.h"
#include "tracer/cpython_layout.h"

namespace ingero::tracer {

struct ThreadPythonStack {
  pid_t pid = 0;
  pid_t tid = 0;
  std::vector<PythonFrameInfo> frames;  // innermost first
};

// The Python frames of every thread of process `pid` that runs Python (threads without a thread
// state, or whose frames cannot be read, are left out). An error when the process has no interpreter
// this reader knows (tracer/cpython_layout.h says which) or is gone.
Result<std::vector<ThreadPythonStack>> read_python_stacks(pid_t pid);

// Adds a thread's frames to the profile's frames and stacks (each frame and each (caller, frame)
// node once, shared with what the profile holds) and returns the innermost node: its stack_id.
int64_t add_python_stack(CpuProfile& profile, const std::vector<PythonFrameInfo>& frames_innermost_first);

}  // namespace ingero::tracer
