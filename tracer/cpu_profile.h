// SPDX-License-Identifier: Apache-2.0
// A run's CPU profile as the trace DB stores it (profile_frames, profile_stacks, profile_samples):
// interned frames, stacks as a tree of (caller stack, frame), and sample counts per thread, stack
// and time bucket. Ids are positions + 1.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingero::tracer {

inline constexpr const char* kFrameKindPython = "python";
inline constexpr const char* kFrameKindNative = "native";
inline constexpr const char* kFrameKindKernel = "kernel";
inline constexpr const char* kLineExecuting = "executing";
inline constexpr const char* kLineFirst = "first";

struct ProfileFrame {
  std::string kind;  // kFrameKind*
  std::string name;
  std::optional<std::string> file;
  std::optional<int64_t> line;
  std::optional<std::string> line_kind;  // kLine*
};

struct ProfileStack {
  std::optional<int64_t> parent_id;  // the callers' stack; none at the outermost frame
  int64_t frame_id = 0;
};

struct ProfileSampleCount {
  pid_t tid = 0;
  int64_t stack_id = 0;
  uint64_t bucket_ns = 0;
  uint64_t samples = 0;
};

// The stack that made an event (event_stacks): the event of that tid, ts_ns and op.
struct EventStack {
  pid_t tid = 0;
  uint64_t ts_ns = 0;
  uint16_t op = 0;  // enum ib_op
  int64_t stack_id = 0;
};

struct CpuProfile {
  std::vector<ProfileFrame> frames;  // frame_id = index + 1
  std::vector<ProfileStack> stacks;  // stack_id = index + 1
  std::vector<ProfileSampleCount> samples;
  std::vector<EventStack> event_stacks;  // stacks read for events (a hung thread's), in the same tables
  uint64_t total_samples() const {
    uint64_t n = 0;
    for (const auto& s : samples) n += s.samples;
    return n;
  }
};

}  // namespace ingero::tracer
