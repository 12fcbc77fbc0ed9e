// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/profile_causes.h"

#include <algorithm>
#include <map>
#include <tuple>

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

// A Python frame of the interpreter's own library or an installed package, not the user's code.
bool library_python(const ProfileFrame& f) {
  return f.file.empty() || f.file[0] == '<' || f.file.find("/site-packages/") != std::string::npos ||
         f.file.find("/dist-packages/") != std::string::npos || f.file.find("/lib/python3") != std::string::npos;
}

}  // namespace

const ProfileFrame* user_frame(const ProfileRecord& profile, const std::vector<int64_t>& frames) {
  const ProfileFrame *python = nullptr, *native = nullptr;
  for (int64_t id : frames) {
    auto it = profile.frames.find(id);
    if (it == profile.frames.end()) continue;
    const ProfileFrame& f = it->second;
    if (f.kind == contract::frame_kind::kPython) {
      if (!library_python(f)) return &f;
      if (!python) python = &f;
    } else if (f.kind == contract::frame_kind::kNative && !native) {
      native = &f;
    }
  }
  return python ? python : native;
}

void add_call_sites(ChainAnalysis& chains, const EventSet& victims, const ProfileRecord& profile) {
  if (profile.event_stacks.empty()) return;
  std::map<std::string, CallSite> by_op;
  for (const VictimSummary& v : chains.victims) {
    using Key = std::tuple<std::string, std::string, std::string, std::optional<int64_t>>;
    std::map<Key, int64_t> counts;
    int64_t with_stack = 0;
    for (const Event& e : victims.of(v.op)) {
      if (e.dur_ns < v.threshold_ns) continue;
      auto stack = profile.event_stacks.find({e.tid, e.ts_ns, v.op});
      if (stack == profile.event_stacks.end()) continue;
      ++with_stack;
      if (const ProfileFrame* f = user_frame(profile, profile.frames_of(stack->second)))
        ++counts[{f->kind, f->name, f->file, f->line}];
    }
    // The most shared site; ties: the first by name, file and line.
    auto best = std::max_element(counts.begin(), counts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best == counts.end()) continue;
    const auto& [kind, function, file, line] = best->first;
    by_op[v.op] = CallSite{kind, function, file, line, best->second, with_stack};
  }
  for (CausalChain& chain : chains.chains)
    if (auto site = by_op.find(chain.victim); site != by_op.end()) chain.site = site->second;
}

InputBound refine_verdict(InputBound verdict, const std::optional<ProfileAnalysis>& profile, bool calls_cuda) {
  if (verdict != InputBound::host_bound || !profile || calls_cuda) return verdict;
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
