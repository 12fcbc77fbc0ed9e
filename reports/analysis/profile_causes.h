// SPDX-License-Identifier: Apache-2.0
// What a CPU profile adds to a run's analysis: the verdict compute-bound on the CPU when the main
// thread's samples are mostly the model's compute, the top functions under every on-CPU cause, and
// the changes that follow from those functions. Without a profile nothing changes.
#pragma once

#include <optional>
#include <vector>

#include "reports/analysis/causal_chains.h"
#include "reports/analysis/chain_changes.h"
#include "reports/analysis/profile_analysis.h"

namespace ingero::reports {

// How many functions an on-CPU cause carries.
inline constexpr size_t kCauseFrames = 3;

// A host-bound run whose main thread's samples are at least kModelDominates the model's compute
// (and that the largest part) is compute-bound on the CPU, unless it calls CUDA: then the model's
// time on the main thread is the host's side of GPU work (launches, syncs), and it stays host-bound.
InputBound refine_verdict(InputBound verdict, const std::optional<ProfileAnalysis>& profile, bool calls_cuda);

// Fills every on-CPU chain's frames (its role's top functions by self samples) and the main thread's
// split, and adds the changes its frames call for (frame_changes).
void add_profile_to_chains(std::vector<CausalChain>& chains, const ProfileAnalysis& profile, const ChainContext& context);

// The changes a role's functions call for, in a user's job (they are code changes; our workloads
// have no such knob): image decoding at least kDecodeDominates of the role's samples -> a faster
// decoder (decoder=torchvision.io.decode_jpeg, which also decodes fewer bytes when asked to
// scale); collate at least kCollateDominates -> one gather per batch (sampling=batched); randperm
// at least kRandpermMatters -> one pre-shuffled index (sampler=pre-shuffled).
std::vector<Change> frame_changes(const RoleProfile& role, const CausalChain& chain, const ChainContext& context);

// The user's frame of a stack (frames innermost first, as ProfileRecord::frames_of lists them): see
// CallSite. None for an empty stack.
const ProfileFrame* user_frame(const ProfileRecord& profile, const std::vector<int64_t>& frames);
// Each chain of a slow call or a batch wait gets its site: among its op's slow intervals (victims, from
// the op's threshold in `chains.victims`) that carry a stack, the user's line most of them share.
void add_call_sites(ChainAnalysis& chains, const EventSet& victims, const ProfileRecord& profile);

inline constexpr const char* kDecoderKnob = "decoder";
inline constexpr const char* kFastDecoder = "torchvision.io.decode_jpeg";
inline constexpr const char* kPreShuffledSampler = "pre-shuffled";

}  // namespace ingero::reports
