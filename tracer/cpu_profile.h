// SPDX-License-Identifier: Apache-2.0
// A run's CPU profile as the trace DB stores it (profile_frames, profile_stacks, profile_samples):
// interned frames, stacks as a tree of (caller stack, frame), and sample counts per thread, stack
// and time bucket; with the stacks of the events that carry one (event_stacks). Ids are positions + 1.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
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
  std::vector<EventStack> event_stacks;  // stored slow calls' (bpf/cuda.bpf.c) and hung threads' stacks
  uint64_t total_samples() const {
    uint64_t n = 0;
    for (const auto& s : samples) n += s.samples;
    return n;
  }
};

// Interns frames and stack nodes into a CpuProfile, beside those it holds already.
class ProfileInterner {
 public:
  explicit ProfileInterner(CpuProfile& out);
  int64_t frame(ProfileFrame f);
  // The stack of `frames` (frame ids), listed outermost first; not empty.
  int64_t stack(const std::vector<int64_t>& frames);

 private:
  using FrameKey = std::tuple<std::string, std::string, std::optional<std::string>, std::optional<int64_t>,
                              std::optional<std::string>>;
  CpuProfile& out_;
  std::map<FrameKey, int64_t> frames_;
  std::map<std::pair<int64_t, int64_t>, int64_t> stacks_;
};

// A stack given by its frames, innermost first (the observer's batch waits: Python frames read by
// the job itself), for the event of that tid, ts_ns and op.
struct FramedEventStack {
  pid_t tid = 0;
  uint64_t ts_ns = 0;
  uint16_t op = 0;
  std::vector<ProfileFrame> frames;
};
// Interns them into the profile's frames and stacks, as its samples' are, and adds their event_stacks.
void add_event_stacks(CpuProfile& profile, const std::vector<FramedEventStack>& stacks);

}  // namespace ingero::tracer
