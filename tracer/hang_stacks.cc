// SPDX-License-Identifier: Apache-2.0
#include "tracer/hang_stacks.h"

#include <dirent.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

namespace ingero::tracer {
namespace {

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* d = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (!d) return tids;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
  closedir(d);
  return tids;
}

ProfileFrame profile_frame(const PythonFrameInfo& f) {
  return {kFrameKindPython, f.qualname, f.file, f.line > 0 ? std::optional<int64_t>(f.line) : std::nullopt,
          std::string(line_kind_name(f.line_kind))};
}

}  // namespace

Result<std::vector<ThreadPythonStack>> read_python_stacks(pid_t pid) {
  ProcessMemory memory(pid);
  auto runtime = find_python_runtime(pid, memory);
  if (!runtime) return runtime.error();
  PythonCodeReader codes;
  std::vector<ThreadPythonStack> stacks;
  for (pid_t tid : threads_of(pid)) {
    auto ns_tid = thread_id_in_its_namespace(pid, tid);
    if (!ns_tid) continue;
    auto frames = walk_python_stack(runtime->layout, memory, *ns_tid);
    if (!frames || frames->empty()) continue;  // no thread state: a thread that never ran Python
    ThreadPythonStack stack{pid, tid, {}};
    for (const ib_python_frame& f : *frames)
      if (auto info = codes.resolve(pid, runtime->layout, memory, f)) stack.frames.push_back(std::move(*info));
    if (!stack.frames.empty()) stacks.push_back(std::move(stack));
  }
  return stacks;
}

int64_t add_python_stack(CpuProfile& profile, const std::vector<PythonFrameInfo>& frames_innermost_first) {
  using FrameKey = std::tuple<std::string, std::string, std::optional<std::string>, std::optional<int64_t>,
                              std::optional<std::string>>;
  auto key_of = [](const ProfileFrame& f) { return FrameKey{f.kind, f.name, f.file, f.line, f.line_kind}; };
  std::map<FrameKey, int64_t> frame_ids;
  for (size_t i = 0; i < profile.frames.size(); ++i) frame_ids.emplace(key_of(profile.frames[i]), static_cast<int64_t>(i + 1));
  std::map<std::pair<std::optional<int64_t>, int64_t>, int64_t> node_ids;
  for (size_t i = 0; i < profile.stacks.size(); ++i)
    node_ids.emplace(std::pair(profile.stacks[i].parent_id, profile.stacks[i].frame_id), static_cast<int64_t>(i + 1));
  std::optional<int64_t> node;
  for (auto f = frames_innermost_first.rbegin(); f != frames_innermost_first.rend(); ++f) {  // outermost first
    const ProfileFrame frame = profile_frame(*f);
    auto [at, added] = frame_ids.emplace(key_of(frame), static_cast<int64_t>(profile.frames.size() + 1));
    if (added) profile.frames.push_back(frame);
    auto [stack, new_node] = node_ids.emplace(std::pair(node, at->second), static_cast<int64_t>(profile.stacks.size() + 1));
    if (new_node) profile.stacks.push_back({node, at->second});
    node = stack->second;
  }
  return node.value_or(0);
}

}  // namespace ingero::tracer
