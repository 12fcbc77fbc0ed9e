// SPDX-License-Identifier: Apache-2.0
#include "tracer/profile_python.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "common/proc_files.h"

namespace ingero::tracer {

namespace {

// A process starting Python has no frames for a moment; its check is retried this long.
constexpr auto kCheckFor = std::chrono::seconds(5);

// Whether the process maps a CPython interpreter (python3.11, libpython3.12.so, ...).
bool maps_python(pid_t pid) {
  auto maps = proc::read_file(fmt::format("/proc/{}/maps", pid));
  if (!maps) return false;
  static const std::regex kPython(R"(/(lib)?python\d[^/\n]*$)");
  size_t start = 0;
  while (start < maps->size()) {
    size_t end = maps->find('\n', start);
    if (end == std::string::npos) end = maps->size();
    if (std::regex_search(maps->begin() + static_cast<long>(start), maps->begin() + static_cast<long>(end), kPython))
      return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

void ProfilePython::look_at(pid_t pid) {
  {
    std::lock_guard lock(mutex_);
    if (done_.count(pid)) return;
  }
  if (!maps_python(pid)) {
    std::lock_guard lock(mutex_);
    if (!pending_.count(pid)) done_.insert(pid);  // not Python (a python exec'd later is looked at again)
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    any_python_ = true;
    pending_.try_emplace(pid, Pending{now, ""});
  }
  auto runtime = find_python_runtime(pid);
  if (!runtime) return give_up(pid, python_frames_unavailable(runtime.error()));
  ProcessMemory memory(pid);
  auto checked = check_python_layout(pid, pid, runtime->layout, memory);
  if (!checked) {
    std::lock_guard lock(mutex_);
    Pending& p = pending_[pid];
    p.why = python_frames_unavailable(checked.error());
    if (now - p.first_seen < kCheckFor) return;  // starting: again at the next poll
    why_ = p.why;
    pending_.erase(pid);
    done_.insert(pid);
    return;
  }
  const uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_update_elem(layouts_fd_, &key, &runtime->layout, BPF_ANY) != 0)
    return give_up(pid, fmt::format("Python frames unavailable: storing the layout of process {}: {}", pid,
                                    strerror(errno)));
  std::lock_guard lock(mutex_);
  runtimes_[pid] = std::move(runtime).value();
  pending_.erase(pid);
  done_.insert(pid);
  any_ok_ = true;
}

void ProfilePython::give_up(pid_t pid, std::string why) {
  std::lock_guard lock(mutex_);
  why_ = std::move(why);
  pending_.erase(pid);
  done_.insert(pid);
}

void ProfilePython::forget(pid_t pid) {
  const uint32_t key = static_cast<uint32_t>(pid);
  bpf_map_delete_elem(layouts_fd_, &key);
  std::lock_guard lock(mutex_);
  runtimes_.erase(pid);
  pending_.erase(pid);
  done_.erase(pid);
  codes_.erase(pid);
  for (auto i = identities_.lower_bound({pid, 0}); i != identities_.end() && i->first.first == pid;)
    i = identities_.erase(i);
}

std::optional<ProfilePython::CodeIdentity> ProfilePython::identity_of(const ib_python_layout& layout,
                                                                      MemoryReader& memory, uint64_t code) {
  CodeIdentity id;
  if (!memory.read_value(code + layout.code_name, id.name) || !memory.read_value(code + layout.code_filename, id.file) ||
      !memory.read_value(code + layout.code_linetable, id.linetable) ||
      !memory.read_value(code + layout.code_firstlineno, id.firstlineno))
    return std::nullopt;
  return id;
}

std::optional<DecodedPythonFrame> ProfilePython::decode(pid_t pid, uint64_t code, uint64_t instr) {
  std::lock_guard lock(mutex_);
  auto it = runtimes_.find(pid);
  if (it == runtimes_.end()) return std::nullopt;
  const ib_python_layout& layout = it->second.layout;
  ProcessMemory memory(pid);
  // A code object freed since it was cached (a module's, once imported) may have left its address
  // to another: the cache would name the old one.
  const auto id = identity_of(layout, memory, code);
  if (!id) return std::nullopt;
  auto [known, fresh] = identities_.try_emplace({pid, code}, *id);
  if (!fresh && !(known->second == *id)) {
    codes_.erase(pid);
    for (auto i = identities_.lower_bound({pid, 0}); i != identities_.end() && i->first.first == pid;)
      i = identities_.erase(i);
    identities_.emplace(std::make_pair(pid, code), *id);
  }
  auto info = codes_[pid].resolve(pid, layout, memory, ib_python_frame{code, instr});
  if (!info) return std::nullopt;
  return DecodedPythonFrame{info->qualname, info->file, static_cast<int64_t>(info->line),
                            line_kind_name(info->line_kind)};
}

std::string ProfilePython::status() const {
  std::lock_guard lock(mutex_);
  if (any_ok_) return "ok";
  if (!why_.empty()) return why_;
  for (const auto& [pid, p] : pending_)
    if (!p.why.empty()) return p.why;
  return any_python_ ? "Python frames unavailable: no traced Python process was checked"
                     : "no Python process was traced";
}

}  // namespace ingero::tracer
