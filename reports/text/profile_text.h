// SPDX-License-Identifier: Apache-2.0
// The words of a CPU profile (reports/analysis/profile_analysis.h): a function with its share and
// where it is, the functions under an on-CPU cause, the main thread's split, whether a profile was
// taken, and the advice that follows from frames.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/profile_analysis.h"

namespace ingero::reports {

// "JpegImageFile.load (PIL/ImageFile.py:255)", "decode_mcu [libjpeg.so.62]".
std::string frame_text(const FrameShare& frame);
// "41 % decode_mcu [libjpeg.so.62], 22 % ToTensor.__call__ (transforms.py:134)" by self share.
std::string frame_shares_text(const std::vector<FrameShare>& frames);
// "model 82 %, batch building 6 %, other 12 % of 1,234 samples".
std::string split_text(const CpuSplit& split);
// A chain's profile line ("[PROFILE] workers on CPU: 41 % ..., of 1,234 samples by self"); none without frames.
std::optional<std::string> chain_profile_line(const CausalChain& chain, const std::string& cause_label);
// Where a chain's slow intervals were made: "[SITE] waited at train.py:57 in train_one_epoch (12 of the
// 14 slow intervals with a stack)"; none without a site.
std::optional<std::string> chain_site_line(const CausalChain& chain);
// A site as "train.py:57 in train_one_epoch" (a native frame: "train_step [trainer]").
std::string site_text(const CallSite& site);
// The main thread's split as a timeline line; none without one.
std::optional<std::string> chain_split_line(const CausalChain& chain);
// What a change from frames asks for, as a sentence; empty for other changes.
std::string frame_change_text(const Change& change);
// "CPU profile: 12,345 samples at 99 Hz per CPU; Python frames: ok", or that no profile was taken.
std::string profile_status_text(const std::optional<ProfileAnalysis>& profile, bool taken);
// The kernel's Python walks that read no frames, by reason, and those cut short: " (of 1,234 walks of
// Python frames: 12 in processes without a readable interpreter, 3 cut at the walk's depth ...)"; empty
// when every walk read its frames whole, or none was recorded.
std::string python_walks_text(const ProfileAnalysis& profile);
// A role's name with its rank, for headings: "main", "worker (rank 1)".
std::string role_profile_name(const RoleProfile& role);

}  // namespace ingero::reports
