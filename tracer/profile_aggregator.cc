// SPDX-License-Identifier: Apache-2.0
#include "tracer/profile_aggregator.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/proc_files.h"

namespace ingero::tracer {

namespace {

// A process's mappings are read again for an address they lack at most this often: a walk
// through code without frame pointers ends in addresses no mapping covers, at every sample.
constexpr uint64_t kMapsRereadNs = 100'000'000;

int frames_in(int32_t bytes, int depth) { return bytes > 0 ? std::min(static_cast<int>(bytes / 8), depth) : 0; }

}  // namespace

std::optional<std::string> read_proc_maps(pid_t pid) { return proc::read_file(fmt::format("/proc/{}/maps", pid)); }

ProfileAggregator::ProfileAggregator(uint64_t bucket_ns, MapsReader maps)
    : bucket_ns_(bucket_ns ? bucket_ns : 1), read_maps_(std::move(maps)) {}

void ProfileAggregator::forget_process(pid_t pid) { maps_.erase(pid); }

const ProfileAggregator::ProcessMaps& ProfileAggregator::maps_of(pid_t pid, uint64_t now_ns, bool refresh) {
  auto [it, fresh] = maps_.try_emplace(pid);
  ProcessMaps& m = it->second;
  const bool due = fresh || (refresh && !m.gone && now_ns >= m.read_at_ns + kMapsRereadNs);
  if (due) {
    m.read_at_ns = now_ns;
    if (auto text = read_maps_(pid)) m.mappings = parse_executable_mappings(*text);
    else m.gone = true;  // exited: its last mappings stay
  }
  return m;
}

uint32_t ProfileAggregator::file_index(const Mapping& m) {
  auto key = std::make_pair(m.path, m.inode);
  auto [it, fresh] = file_ids_.try_emplace(key, static_cast<uint32_t>(files_.size()));
  if (fresh) files_.push_back(key);
  return it->second;
}

// The sampled instruction, then the return addresses of the frame-pointer walk up to the first
// one outside the process's code: in code built without frame pointers the walk reads other
// registers' values as frames, and those are not shown.
std::vector<ProfileAggregator::UserFrame> ProfileAggregator::user_frames(pid_t pid, uint64_t ts_ns,
                                                                         const __u64* ips, int count) {
  std::vector<UserFrame> frames;
  for (int i = 0; i < count; ++i) {
    const uint64_t addr = ips[i];
    const Mapping* m = mapping_of(maps_of(pid, ts_ns, false).mappings, addr);
    if (!m) m = mapping_of(maps_of(pid, ts_ns, true).mappings, addr);
    if (!m) {
      if (i == 0) frames.push_back({kNoFile, addr});  // code outside any file mapping we saw (JIT)
      break;
    }
    const uint64_t at = i == 0 ? addr : addr - 1;  // a return address is past its call
    if (m->path.empty()) frames.push_back({kNoFile, at});
    else frames.push_back({file_index(*m), at - m->start + m->offset});
  }
  return frames;
}

std::vector<uint32_t> ProfileAggregator::python_frames(pid_t pid, const ib_profile_sample& s) {
  std::vector<uint32_t> ids;
  if (!python_) return ids;
  const int count = std::min<int>(s.py_count, IB_PY_MAX_FRAMES);  // negative: none
  for (int i = 0; i < count; ++i) {
    // Decoded at every sample: a code object's address may be another's later (the decoder
    // caches what it can check).
    if (auto info = python_(pid, s.py[i].code, s.py[i].instr)) {
      auto [it, fresh] = python_ids_.try_emplace({info->name, info->file, info->line},
                                                 static_cast<uint32_t>(python_frames_.size()));
      if (fresh) python_frames_.push_back(std::move(*info));
      ids.push_back(it->second);
    }
  }
  return ids;
}

uint32_t ProfileAggregator::raw_stack(const ib_profile_sample& s) {
  const auto pid = static_cast<pid_t>(s.pid);
  RawStack raw;
  const int kernel = frames_in(s.kstack_bytes, IB_PROFILE_KSTACK_DEPTH);
  for (int i = 0; i < kernel; ++i) raw.kernel.push_back(i == 0 ? s.kstack[i] : s.kstack[i] - 1);
  raw.user = user_frames(pid, s.ts_ns, s.ustack, frames_in(s.ustack_bytes, IB_PROFILE_USTACK_DEPTH));
  raw.python = python_frames(pid, s);
  auto [it, fresh] = stack_ids_.try_emplace(std::move(raw), static_cast<uint32_t>(stacks_.size()));
  if (fresh) stacks_.push_back(&it->first);
  return it->second;
}

void ProfileAggregator::add(const ib_profile_sample& s) {
  if (s.kind == IB_STACK_EVENT) {  // not a sample: counted nowhere, kept for its event
    event_stacks_.push_back({static_cast<pid_t>(s.tid), s.ts_ns, s.op, raw_stack(s)});
    return;
  }
  ++samples_;
  const uint32_t raw = raw_stack(s);
  ++counts_[{static_cast<pid_t>(s.tid), raw, s.ts_ns - s.ts_ns % bucket_ns_}];
}

CpuProfile ProfileAggregator::finish(const KernelSymbols& kernel, SymbolCache& symbols) const {
  CpuProfile out;
  ProfileInterner intern(out);
  std::vector<int64_t> stack_of(stacks_.size());
  for (size_t id = 0; id < stacks_.size(); ++id) {
    const RawStack& raw = *stacks_[id];
    // User frames, outermost first, with their names (the Python frames go by them).
    std::vector<ProfileFrame> user;
    for (auto it = raw.user.rbegin(); it != raw.user.rend(); ++it) {
      ProfileFrame f{kFrameKindNative, "", std::nullopt, std::nullopt, std::nullopt};
      if (it->file == kNoFile) {
        f.name = fmt::format("0x{:x}", it->offset);
      } else {
        const auto& [path, inode] = files_[it->file];
        f.name = symbols.function_at(path, inode, it->offset).value_or(fmt::format("0x{:x}", it->offset));
        f.file = path;
      }
      user.push_back(std::move(f));
    }
    std::vector<int64_t> frames;
    // The Python frames replace the innermost evaluation function; where the native walk
    // never reached it (CPython built without frame pointers), they are the outermost frames.
    auto eval = std::find_if(user.rbegin(), user.rend(), [](const ProfileFrame& f) { return f.name == kPythonEvalFunction; });
    const size_t python_at = raw.python.empty() ? user.size() : eval == user.rend() ? 0 : user.rend() - eval - 1;
    for (size_t i = 0; i <= user.size(); ++i) {
      if (i == python_at)
        for (auto p = raw.python.rbegin(); p != raw.python.rend(); ++p) {
          const DecodedPythonFrame& py = python_frames_[*p];
          frames.push_back(intern.frame({kFrameKindPython, py.name, py.file, py.line,
                                         py.line ? std::optional<std::string>(py.line_kind) : std::nullopt}));
        }
      if (i == user.size()) break;
      if (i == python_at && eval != user.rend()) continue;
      frames.push_back(intern.frame(user[i]));
    }
    for (auto it = raw.kernel.rbegin(); it != raw.kernel.rend(); ++it) {
      auto found = kernel.find(*it);
      frames.push_back(intern.frame({kFrameKindKernel, found ? found->name : fmt::format("0x{:x}", *it),
                                     found && !found->module.empty() ? "[" + found->module + "]" : "[kernel]",
                                     std::nullopt, std::nullopt}));
    }
    if (frames.empty())  // neither walk found a frame (a kernel thread's walk failed): still counted
      frames.push_back(intern.frame({kFrameKindNative, "[unknown]", std::nullopt, std::nullopt, std::nullopt}));
    stack_of[id] = intern.stack(frames);
  }
  // Raw stacks that differ only within a function are one stack now.
  std::map<std::tuple<pid_t, int64_t, uint64_t>, uint64_t> merged;
  for (const auto& [key, n] : counts_) {
    const auto& [tid, raw_id, bucket] = key;
    merged[{tid, stack_of[raw_id], bucket}] += n;
  }
  for (const auto& [key, n] : merged) out.samples.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  for (const RawEventStack& e : event_stacks_) out.event_stacks.push_back({e.tid, e.ts_ns, e.op, stack_of[e.raw]});
  return out;
}

}  // namespace ingero::tracer
