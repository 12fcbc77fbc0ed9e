// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/profile_analysis.h"

#include <nlohmann/json.hpp>

#include "common/json_text.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/trace_contract.h"

namespace ingero::reports {

namespace {

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

bool ends_with(const std::string& text, std::string_view tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The last dotted part of a qualified name: "Dataset.__getitem__" -> "__getitem__".
std::string method_of(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

bool image_codec_library(const std::string& file) {
  const std::string base = base_name(file);
  return base.rfind("libjpeg", 0) == 0 || base.rfind("libturbojpeg", 0) == 0 || base.rfind("libpng", 0) == 0;
}

bool loader_frame(const ProfileFrame& f) {
  if (has(f.file, "/PIL/") || f.name.rfind("PIL.", 0) == 0 || image_codec_library(f.file)) return true;
  if (has(f.file, "/torchvision/transforms/") || has(f.file, "/torchvision/datasets/") ||
      has(f.file, "/torchvision/io/"))
    return true;
  if (f.kind != contract::frame_kind::kPython) return false;
  const std::string method = method_of(f.name);
  return has(f.file, "/torch/utils/data/") || method == "__getitem__" || method == "__getitems__" ||
         has(method, "collate");
}

bool model_frame(const ProfileFrame& f) {
  if (f.kind == contract::frame_kind::kPython) {
    const std::string method = method_of(f.name);
    return has(f.file, "/torch/nn/") || has(f.file, "/torch/autograd/") || has(f.file, "/torch/optim/") ||
           ends_with(f.file, "/torch/_tensor.py") || method == "forward" || method == "backward";
  }
  if (f.kind != contract::frame_kind::kNative) return false;
  const std::string base = base_name(f.file);
  for (std::string_view lib : {"libtorch", "libc10", "libgomp", "libiomp", "libmkl", "libdnnl", "libopenblas",
                               "libblas", "libcblas", "liblapack"})
    if (base.rfind(lib, 0) == 0) return true;
  return f.name.rfind("at::", 0) == 0 || f.name.rfind("torch::", 0) == 0 || f.name.rfind("c10::", 0) == 0;
}

bool decode_frame(const ProfileFrame& f) {
  return has(f.name, "decode") || has(f.name, "Decode") || image_codec_library(f.file) ||
         has(f.file, "JpegImagePlugin") || has(f.file, "PngImagePlugin");
}

// A function's identity: every line of it together.
using FunctionKey = std::tuple<std::string, std::string, std::string>;  // kind, name, file
FunctionKey key_of(const ProfileFrame& f) { return {f.kind, f.name, f.file}; }

struct FunctionTotals {
  const ProfileFrame* frame = nullptr;
  int64_t self = 0;
  int64_t inclusive = 0;
  std::map<int64_t, int64_t> lines;  // the executing lines sampled, for the most sampled one
};

// One stack as the accumulators use it, worked out once however many rows sample it: its functions
// interned (every line of a function is one), what it holds, and its class.
struct ResolvedStack {
  std::vector<const ProfileFrame*> frames;  // innermost first
  std::vector<int> function_of;             // each frame's function
  std::vector<int> distinct;                // its functions, each once
  int leaf = -1;                            // the sampled code's function
  bool decode = false, collate = false, randperm = false;
  CpuPart part = CpuPart::other;
};

class FunctionTable {
 public:
  int intern(const ProfileFrame& f) {
    return ids_.try_emplace(key_of(f), static_cast<int>(ids_.size())).first->second;
  }

 private:
  std::map<FunctionKey, int> ids_;
};

// The samples of a group of threads (a role, or a role at one rank).
class RoleAccumulator {
 public:
  void add(const ResolvedStack& stack, int64_t tid, int64_t n) {
    tids_.insert(tid);
    samples_ += n;
    if (stack.frames.empty()) return;
    const ProfileFrame& leaf = *stack.frames.front();
    FunctionTotals& self = functions_[stack.leaf];
    self.frame = &leaf;
    self.self += n;
    if (leaf.line && leaf.line_kind != "first") self.lines[*leaf.line] += n;
    for (size_t i = 0; i < stack.distinct.size(); ++i) {
      FunctionTotals& totals = functions_[stack.distinct[i]];
      totals.inclusive += n;
    }
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      FunctionTotals& totals = functions_[stack.function_of[i]];
      if (!totals.frame) totals.frame = stack.frames[i];
    }
    decode_ += stack.decode ? n : 0;
    collate_ += stack.collate ? n : 0;
    randperm_ += stack.randperm ? n : 0;
    if (split_) {
      switch (stack.part) {
        case CpuPart::loader: split_->loader += n; break;
        case CpuPart::model: split_->model += n; break;
        case CpuPart::other: split_->other += n; break;
      }
    }
  }
  void add_unknown(int64_t tid, int64_t n) {  // a sample whose stack is not stored
    tids_.insert(tid);
    samples_ += n;
    if (split_) split_->other += n;
  }
  void keep_split() { split_ = CpuSplit{}; }

  RoleProfile result(const std::string& role, std::optional<int64_t> rank) const {
    RoleProfile out;
    out.role = role;
    out.rank = rank;
    out.threads = static_cast<int>(tids_.size());
    out.samples = samples_;
    out.split = split_;
    const double total = static_cast<double>(std::max<int64_t>(1, samples_));
    out.evidence = {decode_ / total, collate_ / total, randperm_ / total};
    for (const auto& [key, t] : functions_) {
      FrameShare share;
      share.kind = t.frame->kind;
      share.name = t.frame->name;
      share.file = t.frame->file;
      if (t.frame->line_kind == "first" || t.lines.empty()) {
        share.line = t.frame->line;
        share.line_kind = t.frame->line_kind;
      } else {
        auto most = std::max_element(t.lines.begin(), t.lines.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
        share.line = most->first;
        share.line_kind = t.frame->line_kind;
      }
      share.self_samples = t.self;
      share.inclusive_samples = t.inclusive;
      share.self_share = t.self / total;
      share.inclusive_share = t.inclusive / total;
      out.frames.push_back(std::move(share));
    }
    std::sort(out.frames.begin(), out.frames.end(), [](const FrameShare& a, const FrameShare& b) {
      return std::tie(b.self_samples, b.inclusive_samples, a.name, a.file) <
             std::tie(a.self_samples, a.inclusive_samples, b.name, b.file);
    });
    return out;
  }

 private:
  std::set<int64_t> tids_;
  int64_t samples_ = 0;
  int64_t decode_ = 0, collate_ = 0, randperm_ = 0;
  std::map<int, FunctionTotals> functions_;
  std::optional<CpuSplit> split_;
};

// The run's threads by tid; a sampled thread the threads table lacks is "other".
struct ThreadInfo {
  std::string role = std::string(contract::kRoleOther);
  std::optional<int64_t> rank;
};
std::unordered_map<int64_t, ThreadInfo> thread_info(const RunContext& context) {
  std::unordered_map<int64_t, ThreadInfo> out;
  for (const ThreadRecord& t : context.threads)
    out[t.tid] = {t.role.empty() ? std::string(contract::kRoleOther) : t.role, t.rank};
  return out;
}

int role_order(const std::string& role) {
  const std::string_view order[] = {contract::kRoleMain, contract::kRoleWorker, contract::kRolePin, contract::kRoleOther};
  for (size_t i = 0; i < std::size(order); ++i)
    if (role == order[i]) return static_cast<int>(i);
  return static_cast<int>(std::size(order));
}

std::optional<int64_t> int_setting(const RunContext& context, std::string_view key) {
  auto value = context.setting(key);
  if (!value || value->empty() || value->size() > 18 || value->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(*value);
}

// The frames of a stack, innermost first, as pointers into the profile; missing frames are skipped.
std::vector<const ProfileFrame*> resolve(const ProfileRecord& profile, int64_t stack_id) {
  std::vector<const ProfileFrame*> frames;
  for (int64_t id : profile.frames_of(stack_id)) {
    auto f = profile.frames.find(id);
    if (f != profile.frames.end()) frames.push_back(&f->second);
  }
  return frames;
}

ResolvedStack resolve_stack(const ProfileRecord& profile, int64_t stack_id, FunctionTable& functions) {
  ResolvedStack out;
  out.frames = resolve(profile, stack_id);
  for (const ProfileFrame* f : out.frames) {
    const int id = functions.intern(*f);
    out.function_of.push_back(id);
    if (std::find(out.distinct.begin(), out.distinct.end(), id) == out.distinct.end()) out.distinct.push_back(id);
    out.decode = out.decode || decode_frame(*f);
    out.collate = out.collate || has(f->name, "collate");
    out.randperm = out.randperm || has(f->name, "randperm");
  }
  if (!out.frames.empty()) out.leaf = out.function_of.front();
  out.part = classify_stack(out.frames);
  return out;
}

// Folded stacks take ';' between frames and a space before the count: a name keeps neither a ';' nor
// a line break.
std::string folded_name(const ProfileFrame& frame) {
  std::string name = frame_label(frame);
  for (char& c : name)
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  return name;
}

}  // namespace

const char* cpu_part_name(CpuPart part) {
  switch (part) {
    case CpuPart::loader: return "loader";
    case CpuPart::model: return "model";
    case CpuPart::other: break;
  }
  return "other";
}

CpuPart classify_frame(const ProfileFrame& frame) {
  if (loader_frame(frame)) return CpuPart::loader;
  if (model_frame(frame)) return CpuPart::model;
  return CpuPart::other;
}

CpuPart classify_stack(const std::vector<const ProfileFrame*>& frames) {
  bool model = false;
  for (const ProfileFrame* f : frames) {
    const CpuPart part = classify_frame(*f);
    if (part == CpuPart::loader) return CpuPart::loader;
    model = model || part == CpuPart::model;
  }
  return model ? CpuPart::model : CpuPart::other;
}

double CpuSplit::share(CpuPart part) const {
  const int64_t all = total();
  if (all <= 0) return 0;
  const int64_t n = part == CpuPart::loader ? loader : part == CpuPart::model ? model : other;
  return static_cast<double>(n) / static_cast<double>(all);
}

CpuPart CpuSplit::largest() const {
  if (loader >= model && loader >= other) return CpuPart::loader;
  return model >= other ? CpuPart::model : CpuPart::other;
}

std::vector<FrameShare> RoleProfile::top_by_self(size_t n) const {
  std::vector<FrameShare> out;
  for (const FrameShare& f : frames) {
    if (out.size() >= n || f.self_samples == 0) break;
    out.push_back(f);
  }
  return out;
}

std::vector<FrameShare> RoleProfile::top_by_inclusive(size_t n) const {
  std::vector<FrameShare> sorted = frames;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const FrameShare& a, const FrameShare& b) { return a.inclusive_samples > b.inclusive_samples; });
  if (sorted.size() > n) sorted.resize(n);
  return sorted;
}

const RoleProfile* ProfileAnalysis::role(const std::string& name) const {
  for (const RoleProfile& r : roles)
    if (r.role == name) return &r;
  return nullptr;
}

std::optional<CpuSplit> ProfileAnalysis::main_split() const {
  const RoleProfile* main = role(std::string(contract::kRoleMain));
  return main ? main->split : std::nullopt;
}

int64_t ProfileAnalysis::python_walk_failures() const {
  int64_t n = 0;
  for (const auto& [outcome, count] : python_walks)
    if (outcome != "ok" && outcome != "depth_cut") n += count;
  return n;
}

bool profile_taken(const RunContext& context) {
  auto hz = int_setting(context, contract::kProfileHzSetting);
  return hz && *hz > 0;
}

std::optional<ProfileAnalysis> analyze_profile(const RunContext& context, const ProfileRecord& profile) {
  if (profile.empty()) return std::nullopt;
  const auto threads = thread_info(context);
  std::map<std::string, RoleAccumulator> roles;
  std::map<std::pair<std::string, int64_t>, RoleAccumulator> ranks;
  std::unordered_map<int64_t, ResolvedStack> stacks;  // resolved once each
  FunctionTable functions;
  ProfileAnalysis out;
  out.hz = int_setting(context, contract::kProfileHzSetting);
  out.python = context.setting(contract::kProfilePythonSetting).value_or("");
  out.bucket_ns = int_setting(context, contract::kProfileBucketNsSetting);
  if (auto walks = context.setting(contract::kProfilePythonWalksSetting)) {
    const nlohmann::json j = parse_json_or_discarded(*walks);
    if (j.is_object())
      for (const auto& [outcome, count] : j.items())
        if (count.is_number_integer()) out.python_walks[outcome] = count.get<int64_t>();
  }
  for (const ProfileSampleRow& row : profile.samples) {
    auto info = threads.find(row.tid);
    const ThreadInfo thread = info == threads.end() ? ThreadInfo{} : info->second;
    auto [role, fresh] = roles.try_emplace(thread.role);
    if (fresh && thread.role == contract::kRoleMain) role->second.keep_split();
    RoleAccumulator* rank = nullptr;
    if (thread.rank) {
      auto [it, new_rank] = ranks.try_emplace({thread.role, *thread.rank});
      if (new_rank && thread.role == contract::kRoleMain) it->second.keep_split();
      rank = &it->second;
    }
    out.samples += row.samples;
    auto stack = stacks.find(row.stack_id);
    if (stack == stacks.end()) stack = stacks.emplace(row.stack_id, resolve_stack(profile, row.stack_id, functions)).first;
    if (stack->second.frames.empty()) {
      role->second.add_unknown(row.tid, row.samples);
      if (rank) rank->add_unknown(row.tid, row.samples);
      continue;
    }
    role->second.add(stack->second, row.tid, row.samples);
    if (rank) rank->add(stack->second, row.tid, row.samples);
  }
  for (const auto& [name, acc] : roles) out.roles.push_back(acc.result(name, std::nullopt));
  for (const auto& [key, acc] : ranks) out.ranks.push_back(acc.result(key.first, key.second));
  auto by_role = [](const RoleProfile& a, const RoleProfile& b) {
    return std::make_tuple(role_order(a.role), a.role, a.rank) < std::make_tuple(role_order(b.role), b.role, b.rank);
  };
  std::sort(out.roles.begin(), out.roles.end(), by_role);
  std::sort(out.ranks.begin(), out.ranks.end(), by_role);
  return out;
}

std::vector<FoldedStack> folded_stacks(const RunContext& context, const ProfileRecord& profile,
                                       const std::string& role) {
  const auto threads = thread_info(context);
  std::map<int64_t, int64_t> per_stack;
  for (const ProfileSampleRow& row : profile.samples) {
    auto info = threads.find(row.tid);
    const std::string thread_role = info == threads.end() ? std::string(contract::kRoleOther) : info->second.role;
    if (role.empty() || thread_role == role) per_stack[row.stack_id] += row.samples;
  }
  std::map<std::vector<std::string>, int64_t> merged;
  for (const auto& [stack_id, samples] : per_stack) {
    std::vector<std::string> names;
    const auto frames = resolve(profile, stack_id);
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) names.push_back(folded_name(**it));
    if (names.empty()) names.push_back("[unknown]");  // counted all the same: the totals add up
    merged[names] += samples;
  }
  std::vector<FoldedStack> out;
  out.reserve(merged.size());
  for (auto& [names, samples] : merged) out.push_back({names, samples});
  return out;
}

FlameNode flame_tree(const RunContext& context, const ProfileRecord& profile, const std::string& role) {
  const auto threads = thread_info(context);
  std::map<int64_t, int64_t> per_stack;
  for (const ProfileSampleRow& row : profile.samples) {
    auto info = threads.find(row.tid);
    const std::string thread_role = info == threads.end() ? std::string(contract::kRoleOther) : info->second.role;
    if (thread_role == role) per_stack[row.stack_id] += row.samples;
  }
  FlameNode root{role, CpuPart::other, 0, {}};
  for (const auto& [stack_id, samples] : per_stack) {
    root.samples += samples;
    FlameNode* node = &root;
    const auto frames = resolve(profile, stack_id);
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      const std::string name = frame_label(**it);
      auto child = std::find_if(node->children.begin(), node->children.end(),
                                [&](const FlameNode& c) { return c.name == name; });
      if (child == node->children.end()) {
        node->children.push_back({name, classify_frame(**it), 0, {}});
        child = node->children.end() - 1;
      }
      child->samples += samples;
      node = &*child;
    }
  }
  std::function<void(FlameNode&)> order = [&](FlameNode& n) {
    std::sort(n.children.begin(), n.children.end(), [](const FlameNode& a, const FlameNode& b) { return a.name < b.name; });
    for (FlameNode& c : n.children) order(c);
  };
  order(root);
  return root;
}

std::string frame_label(const ProfileFrame& frame) {
  if (frame.kind == contract::frame_kind::kKernel) return frame.name + " [kernel]";
  if (frame.kind == contract::frame_kind::kNative && !frame.file.empty())
    return frame.name + " [" + base_name(frame.file) + "]";
  return frame.name;
}

std::string frame_label(const FrameShare& frame) {
  return frame_label(ProfileFrame{frame.kind, frame.name, frame.file, frame.line, frame.line_kind});
}

}  // namespace ingero::reports
