// SPDX-License-Identifier: Apache-2.0
#include "tracer/cpu_profile.h"

namespace ingero::tracer {

ProfileInterner::ProfileInterner(CpuProfile& out) : out_(out) {
  for (size_t i = 0; i < out.frames.size(); ++i) {
    const ProfileFrame& f = out.frames[i];
    frames_.try_emplace(FrameKey{f.kind, f.name, f.file, f.line, f.line_kind}, static_cast<int64_t>(i + 1));
  }
  for (size_t i = 0; i < out.stacks.size(); ++i)
    stacks_.try_emplace({out.stacks[i].parent_id.value_or(0), out.stacks[i].frame_id}, static_cast<int64_t>(i + 1));
}

int64_t ProfileInterner::frame(ProfileFrame f) {
  FrameKey key{f.kind, f.name, f.file, f.line, f.line_kind};
  auto [it, fresh] = frames_.try_emplace(std::move(key), static_cast<int64_t>(out_.frames.size() + 1));
  if (fresh) out_.frames.push_back(std::move(f));
  return it->second;
}

int64_t ProfileInterner::stack(const std::vector<int64_t>& frames) {
  std::optional<int64_t> parent;
  for (int64_t frame : frames) {
    auto [it, fresh] = stacks_.try_emplace({parent.value_or(0), frame}, static_cast<int64_t>(out_.stacks.size() + 1));
    if (fresh) out_.stacks.push_back({parent, frame});
    parent = it->second;
  }
  return *parent;
}

void add_event_stacks(CpuProfile& profile, const std::vector<FramedEventStack>& stacks) {
  ProfileInterner intern(profile);
  for (const FramedEventStack& e : stacks) {
    if (e.frames.empty()) continue;
    std::vector<int64_t> frames;
    for (auto it = e.frames.rbegin(); it != e.frames.rend(); ++it) frames.push_back(intern.frame(*it));
    profile.event_stacks.push_back({e.tid, e.ts_ns, e.op, intern.stack(frames)});
  }
}

}  // namespace ingero::tracer
