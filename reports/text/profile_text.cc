// SPDX-License-Identifier: Apache-2.0
#include "reports/text/profile_text.h"

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/analysis/profile_causes.h"
#include "reports/text/format.h"

namespace ingero::reports {

namespace {

// The last two parts of a path: enough to tell torchvision/transforms.py from a user's transforms.py.
std::string short_path(const std::string& path) {
  const size_t last = path.rfind('/');
  if (last == std::string::npos || last == 0) return path;
  const size_t before = path.rfind('/', last - 1);
  return before == std::string::npos ? path : path.substr(before + 1);
}

}  // namespace

std::string frame_text(const FrameShare& frame) {
  if (frame.kind != contract::frame_kind::kPython) return frame_label(frame);
  if (frame.file.empty()) return frame.name;
  if (!frame.line) return fmt::format("{} ({})", frame.name, short_path(frame.file));
  return fmt::format("{} ({}:{}{})", frame.name, short_path(frame.file), *frame.line,
                     frame.line_kind == "first" ? ", its first line" : "");
}

std::string frame_shares_text(const std::vector<FrameShare>& frames) {
  std::string out;
  for (const FrameShare& f : frames) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", format_percent(f.self_share), frame_text(f));
  }
  return out;
}

std::string split_text(const CpuSplit& split) {
  return fmt::format("the model's compute {}, batch building (DataLoader, dataset, collate, transforms) {}, other {} "
                     "of {} samples",
                     format_percent(split.share(CpuPart::model)), format_percent(split.share(CpuPart::loader)),
                     format_percent(split.share(CpuPart::other)), format_count(split.total()));
}

std::optional<std::string> chain_profile_line(const CausalChain& chain, const std::string& cause_label) {
  if (chain.frames.empty()) return std::nullopt;
  return fmt::format("[PROFILE] {}: {} (self samples, of the role's {} in the window)", cause_label,
                     frame_shares_text(chain.frames), format_count(chain.profile_samples));
}

std::string site_text(const CallSite& site) {
  if (site.kind != contract::frame_kind::kPython || site.file.empty())
    return frame_label(ProfileFrame{site.kind, site.function, site.file, site.line, ""});
  if (!site.line) return fmt::format("{} in {}", short_path(site.file), site.function);
  return fmt::format("{}:{} in {}", short_path(site.file), *site.line, site.function);
}

std::optional<std::string> chain_site_line(const CausalChain& chain) {
  if (!chain.site) return std::nullopt;
  return fmt::format("[SITE] waited at {} ({} of the {} slow intervals with a stack)", site_text(*chain.site),
                     format_count(chain.site->intervals), format_count(chain.site->with_stack));
}

std::optional<std::string> chain_split_line(const CausalChain& chain) {
  if (!chain.split || chain.split->total() == 0) return std::nullopt;
  return fmt::format("[SPLIT] main thread: {}", split_text(*chain.split));
}

std::string frame_change_text(const Change& change) {
  if (change.knob == kDecoderKnob)
    return "Image decoding dominates these samples: decode fewer bytes (smaller stored images, a reduced-size "
           "decode) or with a faster decoder (torchvision.io.decode_jpeg).";
  if (change.knob == "sampling" && change.value == "batched")
    return "Collate dominates these samples (many small tensors stacked per batch): sample a batch at once "
           "(a BatchSampler with batch_size=None, or a dataset's __getitems__).";
  if (change.knob == kSamplerKnob && change.value == kPreShuffledSampler)
    return "torch.randperm at every epoch's start shows in the main thread's samples: shuffle an index once and "
           "walk it.";
  return "";
}

std::string profile_status_text(const std::optional<ProfileAnalysis>& profile, bool taken) {
  if (!profile) {
    return taken ? "CPU profile: taken, but no sample fell in the analysed window"
                 : "CPU profile: none taken (profiling was off, or the file predates profiles)";
  }
  std::string rate = profile->hz ? fmt::format(" at {} Hz per CPU", *profile->hz) : "";
  std::string python = profile->python.empty() ? "not recorded"
                       : profile->python == "ok" ? "read"
                                                  : "unavailable: " + profile->python;
  return fmt::format("CPU profile: {} on-CPU samples{}; Python frames {}{}", format_count(profile->samples), rate,
                     python, python_walks_text(*profile));
}

std::string python_walks_text(const ProfileAnalysis& profile) {
  static const std::vector<std::pair<std::string, std::string>> kWhy = {
      {"no_layout", "in processes without a readable interpreter"},
      {"no_thread", "on threads without a Python thread state"},
      {"read_fault", "on a failed read of the process's memory"},
      {"not_code", "on a frame that was not code"}};
  int64_t all = 0;
  for (const auto& [outcome, n] : profile.python_walks) all += n;
  std::vector<std::string> parts;
  for (const auto& [outcome, why] : kWhy)
    if (auto n = profile.python_walks.find(outcome); n != profile.python_walks.end() && n->second > 0)
      parts.push_back(fmt::format("{} {}", format_count(n->second), why));
  if (auto cut = profile.python_walks.find("depth_cut"); cut != profile.python_walks.end() && cut->second > 0)
    parts.push_back(fmt::format("{} cut at the walk's depth (outermost frames left out)", format_count(cut->second)));
  if (parts.empty() || all == 0) return "";
  std::string list;
  for (size_t i = 0; i < parts.size(); ++i) list += (i ? ", " : "") + parts[i];
  return fmt::format(" (of {} walks of Python frames: {})", format_count(all), list);
}

std::string role_profile_name(const RoleProfile& role) {
  return role.rank ? fmt::format("{} (rank {})", role.role, *role.rank) : role.role;
}

}  // namespace ingero::reports
