// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/profile_causes.h"

#include <algorithm>

#include "common/trace_contract.h"

namespace ingero::reports {

namespace {

bool has_change(const std::vector<Change>& changes, const std::string& knob) {
  return std::any_of(changes.begin(), changes.end(), [&](const Change& c) { return c.knob == knob; });
}

// A chain whose threads build batches: workers on CPU, or the main thread on CPU while it waited for a
// batch with no producer, or busy outside CUDA calls (not computing the model).
bool builds_batches(const CausalChain& chain, const ChainContext& context) {
  if (chain.cause.kind != CauseKind::on_cpu || chain.cause.role == contract::kRolePin) return false;
  if (chain.cause.producer) return chain.cause.role == contract::kRoleWorker;
  if (chain.cause.role != contract::kRoleMain) return false;
  if (chain.victim == kMainBusyVictim) return context.metrics.verdict != InputBound::cpu_compute_bound;
  return chain.victim == contract::op::kBatchWait && context.producers.empty();
}

}  // namespace

InputBound refine_verdict(InputBound verdict, const std::optional<ProfileAnalysis>& profile) {
  if (verdict != InputBound::host_bound || !profile) return verdict;
  const auto split = profile->main_split();
  if (!split || split->total() == 0) return verdict;
  const bool model = split->largest() == CpuPart::model && split->share(CpuPart::model) >= kModelDominates;
  return model ? InputBound::cpu_compute_bound : verdict;
}

std::vector<Change> frame_changes(const RoleProfile& role, const CausalChain& chain, const ChainContext& context) {
  std::vector<Change> out;
  if (!users_job(context) || !builds_batches(chain, context)) return out;
  const FrameEvidence& e = role.evidence;
  if (e.decode >= kDecodeDominates) out.push_back({kDecoderKnob, kFastDecoder});
  if (e.collate >= kCollateDominates) out.push_back({"sampling", "batched"});
  if (role.role == contract::kRoleMain && e.randperm >= kRandpermMatters)
    out.push_back({kSamplerKnob, kPreShuffledSampler});
  return out;
}

void add_profile_to_chains(std::vector<CausalChain>& chains, const ProfileAnalysis& profile,
                           const ChainContext& context) {
  for (CausalChain& chain : chains) {
    if (chain.cause.kind != CauseKind::on_cpu) continue;
    const RoleProfile* role = profile.role(chain.cause.role);
    if (!role || role->samples == 0) continue;
    chain.frames = role->top_by_self(kCauseFrames);
    chain.profile_samples = role->samples;
    if (chain.cause.role == contract::kRoleMain) chain.split = role->split;
    if (chain.loader_change_withheld) continue;
    for (Change& change : frame_changes(*role, chain, context))
      if (!has_change(chain.changes, change.knob)) chain.changes.push_back(std::move(change));
  }
}

}  // namespace ingero::reports
